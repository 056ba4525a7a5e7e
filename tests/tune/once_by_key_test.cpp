// OnceByKey: the de-duplication `tlc tune` compiles CUDA sources through.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "compiler/driver/once_by_key.h"

using namespace tlc::driver;

TEST_CASE("OnceByKey computes each key once, also for threads asking at the same time") {
  OnceByKey<std::string, int> once;
  std::atomic<int> computed{0};
  std::vector<std::thread> threads;
  std::vector<int> got(16);
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      std::string key = t % 2 ? "odd" : "even";
      got[t] = once.get(key, [&] {
        ++computed;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // still in flight for the others
        return int(key.size());
      });
    });
  for (auto& th : threads) th.join();
  CHECK(computed == 2);
  CHECK(once.size() == 2);
  for (int t = 0; t < 16; ++t) CHECK(got[t] == (t % 2 ? 3 : 4));
  // A later caller of a known key gets it without computing.
  CHECK(once.get("odd", [&] { ++computed; return -1; }) == 3);
  CHECK(computed == 2);
}
