// Runs the built `tlc` executable for the driver tests and captures what it
// prints (stdout and stderr together) and its exit code.
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace driver_test {

// This process's directory for the files the tests write, removed at exit.
// It is never shared with another run of the suite (from another checkout,
// say): one run's files are not rewritten under another that uses them.
inline const std::filesystem::path& scratchRoot() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("tlc_driver_tests_" + std::to_string(::getpid()));
    Root() { std::filesystem::create_directories(path); }
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Root root;
  return root.path;
}

// The directory `name` under scratchRoot(), created when missing.
inline std::filesystem::path scratchDir(const std::string& name) {
  std::filesystem::path dir = scratchRoot() / name;
  std::filesystem::create_directories(dir);
  return dir;
}

struct Result {
  int code;         // the exit code, or -1 when tlc was killed by a signal
  std::string out;  // stdout and stderr together
};

// `env` is prepended to the command line (e.g. "TLC_PROGRESS=1").
inline Result tlc(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + std::string(TLC_BINARY_DIR) + "/bin/tlc " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace driver_test
