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
 * cache size, at most 16 MiB, or TLC_CPU_STREAM_MIN_BYTES when set. */
int64_t tlc_cpu_stream_store_min_bytes(void);

/* Sets that threshold for later kernel calls (bytes < 0: back to the default). */
void tlc_cpu_set_stream_store_min_bytes(int64_t bytes);

/* float8 conversions: round to nearest even with subnormals; e5m2 overflows
 * to infinity, e4m3 (no infinity) overflows to NaN; NaN stays NaN. */
float tlc_cpu_f8e4m3_to_f32(uint8_t v);
uint8_t tlc_cpu_f32_to_f8e4m3(float v);
float tlc_cpu_f8e5m2_to_f32(uint8_t v);
uint8_t tlc_cpu_f32_to_f8e5m2(float v);

/* ---- failures a kernel detects while it runs ----------------------------
 *
 * Kernels built with bounds checks (`--check-bounds`, and always under
 * `tlc run --check`) test every load, store and atomic against the shape of
 * its buffer; kernels whose block-local buffers are too large for a thread's
 * stack allocate them on the heap. Either can fail at run time. The exported
 * kernel function then keeps a tlc_cpu_failure in its frame: the first
 * failure is recorded there (later ones are dropped), no new block starts,
 * the failing block returns at once, and when the kernel returns the record
 * becomes the calling thread's tlc_cpu_last_failure(). Kernels without
 * either feature never touch any of this. */

/* Where an access is in the program: constant data in the kernel's module. */
typedef struct tlc_cpu_site {
  const char* kernel;      /* the function's name */
  const char* buffer;      /* the buffer's name */
  const char* file;        /* the source file ("" when unknown) */
  int32_t line;            /* 1-based; 0 when unknown */
  int32_t column;
  int32_t rank;            /* dimensions of the buffer */
  int32_t access;          /* TLC_CPU_ACCESS_* */
  int32_t length;          /* of the access's source span, in columns */
  const char* block_vars;  /* the kernel's block variables, comma-separated ("" outside kernels) */
} tlc_cpu_site;

enum { TLC_CPU_ACCESS_LOAD = 0, TLC_CPU_ACCESS_STORE = 1, TLC_CPU_ACCESS_ATOMIC = 2, TLC_CPU_ACCESS_GEMM = 3 };

enum { TLC_CPU_FAILURE_NONE = 0, TLC_CPU_FAILURE_BOUNDS = 1, TLC_CPU_FAILURE_MEMORY = 2 };

/* What the host reads after a failed kernel call. */
typedef struct tlc_cpu_report {
  int32_t kind;        /* TLC_CPU_FAILURE_* */
  const char* kernel;  /* point into the module's constant data */
  const char* buffer;  /* the buffer accessed (bounds failures) */
  const char* file;
  int32_t line;
  int32_t column;
  int32_t length;
  char message[512];   /* "index 1000 is out of bounds for dimension 0 of `B` (size 64)" */
  char detail[512];    /* "the store's index is (1000) and `B` has shape (64); in block (bx=0)" */
} tlc_cpu_report;

/* One kernel call's record, in the exported function's frame. */
typedef struct tlc_cpu_failure {
  int32_t state; /* 0: none; set (atomically) by the first failure */
  tlc_cpu_report report;
} tlc_cpu_failure;

/* Clears the record at the start of a kernel call. */
void tlc_cpu_failure_begin(tlc_cpu_failure* f);
/* An access of `site` at `index` (site->rank values) into a buffer of
 * `shape`, in the block `block` (one value per block variable). */
void tlc_cpu_fail_bounds(tlc_cpu_failure* f, const tlc_cpu_site* site, const int64_t* index, const int64_t* shape,
                         const int64_t* block);
/* The block-local buffers of `kernel` (`bytes` per thread) could not be allocated. */
void tlc_cpu_fail_memory(tlc_cpu_failure* f, const char* kernel, int64_t bytes);
/* Makes the record the calling thread's last failure (or clears it). */
void tlc_cpu_failure_end(const tlc_cpu_failure* f);
/* The calling thread's last kernel call's failure, or NULL when it had none. */
const tlc_cpu_report* tlc_cpu_last_failure(void);

/* Heap storage for block-local buffers: 64-byte aligned, or NULL. */
void* tlc_cpu_alloc_local(int64_t bytes);
void tlc_cpu_free_local(void* p);

#ifdef __cplusplus
}
#endif

#endif /* TLC_CPU_RUNTIME_H */
