// Timing helpers of the CPU benchmark (cpu_bench.cpp, cpu_bench_zoo.cpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace tlc::bench {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The median of at least `minRuns` runs lasting at least `minSeconds` in all, after a warm-up.
template <class F>
double medianTime(F&& f, int minRuns, double minSeconds) {
  f();  // warm-up
  std::vector<double> t;
  auto start = Clock::now();
  while (int(t.size()) < minRuns || seconds(start, Clock::now()) < minSeconds) {
    auto t0 = Clock::now();
    f();
    t.push_back(seconds(t0, Clock::now()));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// memcpy of `bytes` split over `threads` threads.
inline void parallelMemcpy(char* dst, const char* src, size_t bytes, int threads) {
  std::vector<std::thread> ts;
  size_t chunk = (bytes / size_t(threads) + 63) / 64 * 64;
  for (int t = 0; t < threads; ++t) {
    size_t off = size_t(t) * chunk;
    if (off >= bytes) break;
    size_t len = std::min(chunk, bytes - off);
    ts.emplace_back([=] { std::memcpy(dst + off, src + off, len); });
  }
  for (auto& t : ts) t.join();
}

// The memory-bound kernels of bench/zoo/ against memcpy (cpu_bench_zoo.cpp);
// `names` empty: all of them.
void benchZoo(const std::vector<std::string>& names, std::FILE* md);

}  // namespace tlc::bench
