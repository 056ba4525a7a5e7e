/* Times several builds of the gemm example (.so files from `tlc build
 * --target=cpu`, e.g. before and after a compiler change) against OpenBLAS in
 * one process, alternating them round by round so that a shared, noisy
 * machine slows them alike. Prints, per run, OpenBLAS's GFLOP/s and each
 * .so's GFLOP/s and ratio (medians over the rounds; wall-clock time, or the
 * calling thread's CPU time with TLC_AB_CPU_TIME=1 for one-thread runs).
 * Threads: TLC_NUM_THREADS and OPENBLAS_NUM_THREADS.
 * Build: cc -O2 cpu_so_ab_bench.c -o cpu_so_ab_bench -ldl -lopenblas
 * Usage: cpu_so_ab_bench N ROUNDS a.so [b.so ...]   (at most 8 .so files) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc);
typedef void (*kernel_fn)(void* const* args, const int64_t* shape_vars);

static clockid_t g_clock = CLOCK_MONOTONIC;
static double now(void) {
  struct timespec t;
  clock_gettime(g_clock, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc < 4 || argc > 11) {
    fprintf(stderr, "usage: %s N ROUNDS a.so [b.so ...]\n", argv[0]);
    return 2;
  }
  if (getenv("TLC_AB_CPU_TIME")) g_clock = CLOCK_THREAD_CPUTIME_ID;
  int n = atoi(argv[1]), rounds = atoi(argv[2]), count = argc - 3;
  if (n <= 0 || rounds <= 0 || rounds > 64) return 2;
  size_t nn = (size_t)n * n;
  float* A = aligned_alloc(64, nn * 4);
  float* B = aligned_alloc(64, nn * 4);
  float* C = aligned_alloc(64, nn * 4);
  srand(1);
  for (size_t i = 0; i < nn; ++i) {
    A[i] = (float)rand() / RAND_MAX - 0.5f;
    B[i] = (float)rand() / RAND_MAX - 0.5f;
  }
  kernel_fn fn[8];
  for (int s = 0; s < count; ++s) {
    void* h = dlopen(argv[3 + s], RTLD_NOW);
    fn[s] = h ? (kernel_fn)dlsym(h, "tlc_kernel_gemm") : NULL;
    if (!fn[s]) {
      fprintf(stderr, "no tlc_kernel_gemm in %s: %s\n", argv[3 + s], dlerror());
      return 1;
    }
  }
  void* args[] = {A, B, C};
  double t[8][64], tb[64];
  for (int s = 0; s < count; ++s) fn[s](args, NULL);  /* warm-up */
  cblas_sgemm(101, 111, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
  for (int r = 0; r < rounds; ++r) {
    for (int s = 0; s < count; ++s) {
      double t0 = now();
      fn[s](args, NULL);
      t[s][r] = now() - t0;
    }
    double t0 = now();
    cblas_sgemm(101, 111, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
    tb[r] = now() - t0;
  }
  double flops = 2.0 * n * (double)n * n;
  qsort(tb, (size_t)rounds, sizeof(double), cmp);
  printf("sgemm %d^3: OpenBLAS %.1f GFLOP/s", n, flops / tb[rounds / 2] * 1e-9);
  for (int s = 0; s < count; ++s) {
    qsort(t[s], (size_t)rounds, sizeof(double), cmp);
    printf(" | %s %.1f (%.3f)", argv[3 + s], flops / t[s][rounds / 2] * 1e-9, tb[rounds / 2] / t[s][rounds / 2]);
  }
  printf("\n");
  return 0;
}
