// A progress line on stderr for slow steps (the reference interpreter of
// `tlc run --check` on large inputs): nothing for the first 2 seconds, then
// "tlc: <what> (N s)" rewritten in place every second and erased when the step
// ends, so that it never mixes with the program's output or diagnostics.
//
// Shown only when stderr is a terminal. TLC_PROGRESS=0 turns it off,
// TLC_PROGRESS=1 turns it on for any stderr (one line per update, for logs);
// TLC_PROGRESS_DELAY_MS changes the 2-second delay (0: the first line is
// printed however short the step).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace tlc::driver {

class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();  // stops, and erases the line on a terminal
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  void loop();

  std::string what_;
  bool terminal_ = false;
  std::chrono::milliseconds delay_{2000};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool printed_ = false;
  std::thread thread_;
};

}  // namespace tlc::driver
