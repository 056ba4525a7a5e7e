/* A process-wide pool of worker threads running tlc_cpu_parallel_for jobs.
 *
 * One job runs at a time (concurrent callers queue on a mutex). Tasks are
 * handed out in chunks through an atomic counter, so fast threads take more
 * work; the caller runs chunks too, then waits for the workers to finish. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/cpu/tlc_cpu_runtime.h"

#define TLC_MAX_THREADS 256

struct job {
  tlc_cpu_task_fn fn;
  void* ctx;
  int64_t n;
  int64_t chunk;
  atomic_llong next;
};

static pthread_mutex_t g_submit = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;
static struct job g_job;
static uint64_t g_generation;   /* bumped per job; workers run each generation once */
static int g_busy;              /* workers still running the current job */
static int g_workers;           /* started worker threads */
static int g_requested;         /* threads wanted by tlc_cpu_set_num_threads, 0 = default */
static _Thread_local int t_in_task;

static int default_threads(void) {
  const char* env = getenv("TLC_NUM_THREADS");
  if (env && *env) {
    int n = atoi(env);
    if (n >= 1) return n < TLC_MAX_THREADS ? n : TLC_MAX_THREADS;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  return n < TLC_MAX_THREADS ? (int)n : TLC_MAX_THREADS;
}

int tlc_cpu_num_threads(void) { return g_requested >= 1 ? g_requested : default_threads(); }

void tlc_cpu_set_num_threads(int n) { g_requested = n >= 1 ? (n < TLC_MAX_THREADS ? n : TLC_MAX_THREADS) : 0; }

static void run_chunks(struct job* j) {
  t_in_task = 1;
  for (;;) {
    int64_t begin = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
    if (begin >= j->n) break;
    int64_t end = begin + j->chunk < j->n ? begin + j->chunk : j->n;
    j->fn(j->ctx, begin, end);
  }
  t_in_task = 0;
}

/* Workers with an index below the job's thread count take part. */
static int g_active;

static void* worker_main(void* arg) {
  int index = (int)(intptr_t)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&g_lock);
  for (;;) {
    while (g_generation == seen) pthread_cond_wait(&g_wake, &g_lock);
    seen = g_generation;
    if (index >= g_active) continue;
    pthread_mutex_unlock(&g_lock);
    run_chunks(&g_job);
    pthread_mutex_lock(&g_lock);
    if (--g_busy == 0) pthread_cond_signal(&g_done);
  }
  return NULL;
}

/* Starts workers up to `count` (called with g_lock held). */
static void ensure_workers(int count) {
  while (g_workers < count) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* Blocks keep their tiles on the stack. */
    pthread_attr_setstacksize(&attr, (size_t)16 << 20);
    if (pthread_create(&t, &attr, worker_main, (void*)(intptr_t)g_workers) != 0) {
      pthread_attr_destroy(&attr);
      break;
    }
    pthread_attr_destroy(&attr);
    pthread_detach(t);
    g_workers++;
  }
}

void tlc_cpu_parallel_for(tlc_cpu_task_fn fn, void* ctx, int64_t n) {
  if (n <= 0) return;
  int threads = tlc_cpu_num_threads();
  if (t_in_task || threads <= 1 || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  if (threads > n) threads = (int)n;
  pthread_mutex_lock(&g_submit);
  pthread_mutex_lock(&g_lock);
  ensure_workers(threads - 1);
  int helpers = g_workers < threads - 1 ? g_workers : threads - 1;
  g_job.fn = fn;
  g_job.ctx = ctx;
  g_job.n = n;
  /* Several chunks per thread balance uneven blocks; one block per chunk when few. */
  int64_t chunk = n / ((int64_t)(helpers + 1) * 8);
  g_job.chunk = chunk < 1 ? 1 : chunk;
  atomic_store(&g_job.next, 0);
  g_active = helpers;
  g_busy = helpers;
  g_generation++;
  pthread_cond_broadcast(&g_wake);
  pthread_mutex_unlock(&g_lock);

  run_chunks(&g_job);

  pthread_mutex_lock(&g_lock);
  while (g_busy > 0) pthread_cond_wait(&g_done, &g_lock);
  pthread_mutex_unlock(&g_lock);
  pthread_mutex_unlock(&g_submit);
}
