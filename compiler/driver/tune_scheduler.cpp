#include "compiler/driver/tune_scheduler.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace tlc::driver {

void parallelFor(size_t n, size_t threads, const std::function<void(size_t)>& body) {
  threads = std::max<size_t>(1, std::min(threads, n));
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (std::thread& t : pool) t.join();
}

void JobQueue::push(size_t job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(job);
  }
  ready_.notify_one();
}

void JobQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

bool JobQueue::pop(size_t* job) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !jobs_.empty() || closed_; });
  if (jobs_.empty()) return false;
  *job = jobs_.front();
  jobs_.pop_front();
  return true;
}

std::vector<WorkerReport> runOnWorkers(JobQueue& queue, const std::vector<std::string>& workers,
                                       const std::function<WorkerOutcome(size_t worker, size_t job)>& run,
                                       std::vector<size_t>* unfinished) {
  std::vector<WorkerReport> reports(workers.size());
  std::atomic<size_t> alive{workers.size()};
  std::mutex unfinishedMutex;
  unfinished->clear();
  auto work = [&](size_t w) {
    reports[w].name = workers[w];
    size_t job = 0;
    while (queue.pop(&job)) {
      if (run(w, job) == WorkerOutcome::Done) {
        ++reports[w].jobsDone;
        continue;
      }
      reports[w].lost = true;
      // Under the lock, so that a job given back by one lost worker is seen
      // by the last one, which drains the queue.
      std::lock_guard<std::mutex> lock(unfinishedMutex);
      if (--alive == 0) {
        // The last device is gone: nothing can run what is left.
        unfinished->push_back(job);
        while (queue.pop(&job)) unfinished->push_back(job);
      } else {
        queue.push(job);
      }
      return;
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers.size(); ++w) threads.emplace_back(work, w);
  for (std::thread& t : threads) t.join();
  if (workers.empty()) {
    size_t job = 0;
    while (queue.pop(&job)) unfinished->push_back(job);
  }
  std::sort(unfinished->begin(), unfinished->end());
  return reports;
}

}  // namespace tlc::driver
