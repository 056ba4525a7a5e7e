/* Failures detected by running kernels (see tlc_cpu_runtime.h): the first
 * one of a kernel call is formatted into its record, which becomes the
 * calling thread's last failure when the kernel returns. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/tlc_cpu_runtime.h"

static _Thread_local tlc_cpu_report t_last;
static _Thread_local int t_has_last;

void tlc_cpu_failure_begin(tlc_cpu_failure* f) {
  __atomic_store_n(&f->state, 0, __ATOMIC_RELAXED);
  memset(&f->report, 0, sizeof f->report);
}

/* True for the one caller that claims the record. */
static int claim(tlc_cpu_failure* f) {
  int32_t expected = 0;
  return __atomic_compare_exchange_n(&f->state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* Appends "(v0, v1, ...)" to buf at *len. */
static void append_tuple(char* buf, size_t size, size_t* len, const int64_t* v, int32_t n) {
  *len += (size_t)snprintf(buf + *len, *len < size ? size - *len : 0, "(");
  for (int32_t i = 0; i < n; ++i)
    *len += (size_t)snprintf(buf + *len, *len < size ? size - *len : 0, "%s%lld", i ? ", " : "", (long long)v[i]);
  *len += (size_t)snprintf(buf + *len, *len < size ? size - *len : 0, ")");
}

static const char* access_name(int32_t access) {
  switch (access) {
    case TLC_CPU_ACCESS_STORE: return "store";
    case TLC_CPU_ACCESS_ATOMIC: return "atomic";
    case TLC_CPU_ACCESS_GEMM: return "gemm operand";
    default: return "load";
  }
}

void tlc_cpu_fail_bounds(tlc_cpu_failure* f, const tlc_cpu_site* site, const int64_t* index, const int64_t* shape,
                         const int64_t* block) {
  if (!claim(f)) return;
  tlc_cpu_report* r = &f->report;
  r->kind = TLC_CPU_FAILURE_BOUNDS;
  r->kernel = site->kernel;
  r->buffer = site->buffer;
  r->file = site->file;
  r->line = site->line;
  r->column = site->column;
  r->length = site->length;
  int32_t dim = 0;
  while (dim + 1 < site->rank && index[dim] >= 0 && index[dim] < shape[dim]) ++dim;
  snprintf(r->message, sizeof r->message, "index %lld is out of bounds for dimension %d of `%s` (size %lld)",
           (long long)index[dim], (int)dim, site->buffer, (long long)shape[dim]);
  size_t len = 0;
  size_t size = sizeof r->detail;
  len += (size_t)snprintf(r->detail, size, "the %s's index is ", access_name(site->access));
  append_tuple(r->detail, size, &len, index, site->rank);
  len += (size_t)snprintf(r->detail + len, len < size ? size - len : 0, " and `%s` has shape ", site->buffer);
  append_tuple(r->detail, size, &len, shape, site->rank);
  if (site->block_vars[0]) {
    len += (size_t)snprintf(r->detail + len, len < size ? size - len : 0, "; in block (");
    const char* name = site->block_vars;
    for (int i = 0; *name; ++i) {
      const char* comma = strchr(name, ',');
      int n = comma ? (int)(comma - name) : (int)strlen(name);
      len += (size_t)snprintf(r->detail + len, len < size ? size - len : 0, "%s%.*s=%lld", i ? ", " : "", n, name,
                              (long long)block[i]);
      name += n + (comma ? 1 : 0);
    }
    len += (size_t)snprintf(r->detail + len, len < size ? size - len : 0, ") of the grid of `%s`", site->kernel);
  } else {
    len += (size_t)snprintf(r->detail + len, len < size ? size - len : 0, "; in `%s`", site->kernel);
  }
  __atomic_store_n(&f->state, 2, __ATOMIC_RELEASE);
}

void tlc_cpu_fail_memory(tlc_cpu_failure* f, const char* kernel, int64_t bytes) {
  if (!claim(f)) return;
  tlc_cpu_report* r = &f->report;
  r->kind = TLC_CPU_FAILURE_MEMORY;
  r->kernel = kernel;
  r->buffer = "";
  r->file = "";
  snprintf(r->message, sizeof r->message, "cannot allocate the %lld bytes of block-local buffers that `%s` needs per thread",
           (long long)bytes, kernel);
  snprintf(r->detail, sizeof r->detail, "out of host memory");
  __atomic_store_n(&f->state, 2, __ATOMIC_RELEASE);
}

void tlc_cpu_failure_end(const tlc_cpu_failure* f) {
  t_has_last = __atomic_load_n(&f->state, __ATOMIC_ACQUIRE) != 0;
  if (t_has_last) t_last = f->report;
}

const tlc_cpu_report* tlc_cpu_last_failure(void) { return t_has_last ? &t_last : NULL; }

void* tlc_cpu_alloc_local(int64_t bytes) {
  if (bytes <= 0) bytes = 64;
  size_t rounded = ((size_t)bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, rounded);
}

void tlc_cpu_free_local(void* p) { free(p); }
