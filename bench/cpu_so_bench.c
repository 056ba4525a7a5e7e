/* Times kernels built by `tlc build --target=cpu` (loaded with dlopen) against
 * OpenBLAS on a machine without LLVM or tlc: sgemm N^3 vs cblas_sgemm, and
 * elementwise add (M x 4096 float32) vs memcpy of the same bytes moved.
 * Threads: TLC_NUM_THREADS and OPENBLAS_NUM_THREADS.
 * Build: cc -O2 cpu_so_bench.c -o cpu_so_bench -ldl -lopenblas -lpthread
 * Usage: cpu_so_bench gemm.so N [add.so M] */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RowMajor = 101, NoTrans = 111 };
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc);

typedef void (*kernel_fn)(void* const* args, const int64_t* shape_vars);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

#define RUNS 15
typedef void (*runner)(void*);
static double median_time(runner f, void* ctx) {
  double t[RUNS];
  f(ctx);
  for (int i = 0; i < RUNS; ++i) {
    double t0 = now();
    f(ctx);
    t[i] = now() - t0;
  }
  qsort(t, RUNS, sizeof t[0], cmp);
  return t[RUNS / 2];
}

struct gemm_ctx { kernel_fn fn; float *a, *b, *c, *cref; int n; };
static void run_tlc_gemm(void* p) {
  struct gemm_ctx* g = p;
  void* args[] = {g->a, g->b, g->c};
  g->fn(args, NULL);
}
static void run_blas_gemm(void* p) {
  struct gemm_ctx* g = p;
  cblas_sgemm(RowMajor, NoTrans, NoTrans, g->n, g->n, g->n, 1.0f, g->a, g->n, g->b, g->n, 0.0f, g->cref, g->n);
}

struct add_ctx { kernel_fn fn; float *a, *b, *c; char *src, *dst; size_t copy; };
static void run_tlc_add(void* p) {
  struct add_ctx* g = p;
  void* args[] = {g->a, g->b, g->c};
  g->fn(args, NULL);
}
static void run_memcpy(void* p) {
  struct add_ctx* g = p;
  memcpy(g->dst, g->src, g->copy);
}

static kernel_fn load(const char* path, const char* sym) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    exit(1);
  }
  kernel_fn f = (kernel_fn)dlsym(h, sym);
  if (!f) {
    fprintf(stderr, "no %s in %s\n", sym, path);
    exit(1);
  }
  return f;
}

static float* randoms(size_t n, unsigned seed) {
  float* p = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
  srand(seed);
  for (size_t i = 0; i < n; ++i) p[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
  return p;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s gemm.so N [add.so M]\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[2]);
  size_t nn = (size_t)n * n;
  struct gemm_ctx g = {load(argv[1], "tlc_kernel_gemm"), randoms(nn, 1), randoms(nn, 2), randoms(nn, 3), randoms(nn, 4), n};
  run_tlc_gemm(&g);
  run_blas_gemm(&g);
  double err = 0;
  for (size_t i = 0; i < nn; ++i) err = fmax(err, fabs(g.c[i] - g.cref[i]));
  double tt = median_time(run_tlc_gemm, &g), tb = median_time(run_blas_gemm, &g);
  double fl = 2.0 * n * (double)n * n;
  printf("sgemm %d^3: tlc %.1f GFLOP/s, OpenBLAS %.1f GFLOP/s, ratio %.3f, max|err| %.2e\n", n, fl / tt * 1e-9,
         fl / tb * 1e-9, tb / tt, err);
  if (argc >= 5) {
    size_t m = (size_t)atoi(argv[4]), count = m * 4096;
    struct add_ctx a = {load(argv[3], "tlc_kernel_elementwise_add"), randoms(count, 5), randoms(count, 6), randoms(count, 7)};
    a.copy = count * 4 * 3 / 2;
    a.src = malloc(a.copy);
    a.dst = malloc(a.copy);
    memset(a.src, 1, a.copy);
    memset(a.dst, 0, a.copy);
    run_tlc_add(&a);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += a.c[i] != a.a[i] + a.b[i];
    double ta = median_time(run_tlc_add, &a), tc = median_time(run_memcpy, &a);
    double bytes = 3.0 * count * 4;
    printf("add %zux4096 f32: tlc %.1f GB/s, memcpy %.1f GB/s, ratio %.3f, wrong %zu\n", m, bytes / ta * 1e-9,
           bytes / tc * 1e-9, tc / ta, wrong);
  }
  return 0;
}
