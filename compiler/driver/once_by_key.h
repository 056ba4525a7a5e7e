// Computes a value once per key, however many threads ask for it: the first
// caller of a key computes it, callers that find it in flight wait for that
// result, later callers get it at once. `tlc tune` compiles each distinct
// CUDA source once through it: candidates whose parameters leave the
// generated code unchanged (a parameter the kernel does not use, a stage
// count the trip count caps) share one NVRTC compile.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <mutex>

namespace tlc::driver {

template <class Key, class Value>
class OnceByKey {
 public:
  // The value of `key`, computed by `compute` if no caller computed it yet.
  Value get(const Key& key, const std::function<Value()>& compute) {
    std::promise<Value> mine;
    std::shared_future<Value> result;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto [it, fresh] = values_.emplace(key, std::shared_future<Value>());
      if (fresh) it->second = mine.get_future().share();
      result = it->second;
      first = fresh;
    }
    if (first) {
      try {
        mine.set_value(compute());
      } catch (...) {
        mine.set_exception(std::current_exception());
      }
    }
    return result.get();
  }
  // How many distinct keys were asked for.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<Key, std::shared_future<Value>> values_;
};

}  // namespace tlc::driver
