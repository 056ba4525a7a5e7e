/* The small runtime that CPU kernels built by tlc call (C ABI).
 *
 * A generated kernel runs the blocks of its grid through
 * tlc_cpu_parallel_for, which spreads them over a process-wide pool of
 * threads: one per core, or TLC_NUM_THREADS when set. The calling thread takes
 * part; a call made from inside a task runs serially. The runtime is linked
 * into tlc (for the JIT) and into every .so that `tlc build --target=cpu`
 * produces, so a built kernel needs nothing else at run time.
 */
#ifndef TLC_CPU_RUNTIME_H
#define TLC_CPU_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs tasks [begin, end) of a job; called concurrently with disjoint ranges. */
typedef void (*tlc_cpu_task_fn)(void* ctx, int64_t begin, int64_t end);

/* Runs fn over [0, n) on the pool and returns when every task is done. */
void tlc_cpu_parallel_for(tlc_cpu_task_fn fn, void* ctx, int64_t n);

/* Threads the pool uses (the caller included). */
int tlc_cpu_num_threads(void);

/* Sets the number of threads for later calls (n < 1: back to the default). */
void tlc_cpu_set_num_threads(int n);

/* Output tensors of at least this many bytes are written with streaming
 * (non-temporal) stores where the compiler's rule allows it (see
 * compiler/backends/cpu/streaming_stores.h). Default: half the last-level
 * cache size, or TLC_CPU_STREAM_MIN_BYTES when set. */
int64_t tlc_cpu_stream_store_min_bytes(void);

/* Sets that threshold for later kernel calls (bytes < 0: back to the default). */
void tlc_cpu_set_stream_store_min_bytes(int64_t bytes);

/* float8 conversions: round to nearest even with subnormals; e5m2 overflows
 * to infinity, e4m3 (no infinity) overflows to NaN; NaN stays NaN. */
float tlc_cpu_f8e4m3_to_f32(uint8_t v);
uint8_t tlc_cpu_f32_to_f8e4m3(float v);
float tlc_cpu_f8e5m2_to_f32(uint8_t v);
uint8_t tlc_cpu_f32_to_f8e5m2(float v);

#ifdef __cplusplus
}
#endif

#endif /* TLC_CPU_RUNTIME_H */
