#include "compiler/driver/progress.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tlc::driver {

Progress::Progress(std::string what) : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {
  const char* mode = std::getenv("TLC_PROGRESS");
  std::string m = mode ? mode : "";
  terminal_ = ::isatty(2) != 0;
  bool enabled = m == "1" || (m != "0" && terminal_);
  if (const char* d = std::getenv("TLC_PROGRESS_DELAY_MS"); d && *d) delay_ = std::chrono::milliseconds(std::atol(d));
  if (enabled) thread_ = std::thread([this] { loop(); });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (printed_ && terminal_) std::fputs("\r\033[K", stderr);
}

void Progress::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto next = start_ + delay_;
  // With a zero delay the first line is printed however soon the step ends,
  // so that TLC_PROGRESS_DELAY_MS=0 is deterministic.
  bool due = delay_.count() == 0;
  while (due || !wake_.wait_until(lock, next, [this] { return stop_; })) {
    auto now = std::chrono::steady_clock::now();
    long seconds = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(now - start_).count());
    std::fprintf(stderr, terminal_ ? "\rtlc: %s (%ld s)\033[K" : "tlc: %s (%ld s)\n", what_.c_str(), seconds);
    std::fflush(stderr);
    printed_ = true;
    due = false;
    next = now + std::chrono::seconds(1);
  }
}

}  // namespace tlc::driver
