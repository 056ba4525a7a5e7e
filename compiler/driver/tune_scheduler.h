// How `tlc tune` spreads its work (docs/tuning.md):
//
// - compiles run on a pool of threads (`parallelFor`), one candidate per
//   task, as many threads as cores by default;
// - measurements run on workers, one thread per device (each GPU, or the
//   CPU), each taking the next candidate from a shared queue as soon as it
//   is free, so faster devices take more candidates and the number of
//   devices is not fixed. Candidates enter the queue as their compiles end.
//   A worker whose device fails gives its candidate back to the queue for
//   the others and takes no more; a candidate is then lost only when every
//   worker has failed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace tlc::driver {

// Runs body(i) for i in [0, n) on `threads` threads (at least 1); returns
// when every call has returned.
void parallelFor(size_t n, size_t threads, const std::function<void(size_t)>& body);

// A queue of job indices that producers fill and close.
class JobQueue {
 public:
  void push(size_t job);
  // No more pushes; workers drain what is left and stop.
  void close();
  // Blocks until a job is available (true) or the queue is closed and empty (false).
  bool pop(size_t* job);

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<size_t> jobs_;
  bool closed_ = false;
};

enum class WorkerOutcome {
  Done,        // the job is finished (measured, or failed on its own account)
  DeviceLost,  // the worker's device failed: give the job to another worker
};

struct WorkerReport {
  std::string name;
  size_t jobsDone = 0;
  bool lost = false;
};

// Runs the queue's jobs on workers named `workers`, one thread each:
// run(worker, job) is called on worker's thread. Returns each worker's
// report and, through *unfinished, the jobs no worker could finish (every
// worker lost its device). The queue must be closed by its producer.
std::vector<WorkerReport> runOnWorkers(JobQueue& queue, const std::vector<std::string>& workers,
                                       const std::function<WorkerOutcome(size_t worker, size_t job)>& run,
                                       std::vector<size_t>* unfinished);

}  // namespace tlc::driver
