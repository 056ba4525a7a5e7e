/* When kernels write their outputs with streaming (non-temporal) stores.
 *
 * A streaming store skips the read-for-ownership a normal store pays and
 * leaves the written line out of the caches. That halves the write traffic of
 * an output too large to stay cached anyway, and hurts an output that a next
 * kernel would have found in the cache. So kernels stream an output only when
 * it is at least half as large as the last-level cache (an output that size
 * and an input like it do not stay cached together), the cache size read once
 * from sysfs (the cache the kernel's core shares), with sysconf and then
 * 32 MiB as fallbacks, and at most 16 MiB: a server socket's last-level cache
 * (hundreds of MB, which a virtual machine reports as its own) is shared by
 * tens of cores, and an output of a few of them does not stay there (on a
 * Xeon VM reporting 260 MB, 2 threads, 32 MiB outputs: a transpose went from
 * 0.54 to 0.89-0.94 of memcpy's bandwidth, a layernorm from 0.67 to 0.78-0.79;
 * bench/RESULTS.md). TLC_CPU_STREAM_MIN_BYTES or
 * tlc_cpu_set_stream_store_min_bytes override it. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/cpu/tlc_cpu_runtime.h"

static atomic_llong g_min_bytes = -1; /* -1: not resolved yet */

/* Size in bytes of the highest-level cache sysfs lists for cpu0, or 0. */
static long long sysfs_last_level_cache(void) {
  long long best_size = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    char path[96];
    int level = 0;
    long long kib = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    FILE* f = fopen(path, "r");
    if (!f) break;
    int ok = fscanf(f, "%d", &level) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    f = fopen(path, "r");
    if (!f) continue;
    ok = ok && fscanf(f, "%lldK", &kib) == 1;
    fclose(f);
    if (ok && level >= best_level && kib > 0) {
      best_level = level;
      best_size = kib * 1024;
    }
  }
  return best_size;
}

static long long default_min_bytes(void) {
  const char* env = getenv("TLC_CPU_STREAM_MIN_BYTES");
  if (env && *env) {
    long long v = atoll(env);
    if (v >= 0) return v;
  }
  long long llc = sysfs_last_level_cache();
  if (llc <= 0) llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (llc <= 0) llc = 32ll << 20;
  return llc / 2 < (16ll << 20) ? llc / 2 : 16ll << 20;
}

int64_t tlc_cpu_stream_store_min_bytes(void) {
  long long v = atomic_load_explicit(&g_min_bytes, memory_order_relaxed);
  if (v < 0) {
    v = default_min_bytes();
    atomic_store_explicit(&g_min_bytes, v, memory_order_relaxed);
  }
  return (int64_t)v;
}

void tlc_cpu_set_stream_store_min_bytes(int64_t bytes) {
  atomic_store_explicit(&g_min_bytes, bytes >= 0 ? (long long)bytes : -1, memory_order_relaxed);
}
