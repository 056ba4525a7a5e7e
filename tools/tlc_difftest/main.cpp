// tlc_difftest: generates random well-typed tile programs (generator.h) and
// runs each on the interpreter, the CPU and the CUDA emulator (runner.h),
// reporting the first disagreement with the program saved as a `.tl` file.
//
//   tlc_difftest [--seed N] [--count N] [--seconds S] [--targets LIST] [--out-dir DIR]
//                [--skip-dtype D]... [--keep-going] [--write-only] [--emulator-timeout S]
//
// Exit code: 0 when every program agreed on every target, 1 after a
// disagreement (or a program the front end rejected, or a crash), 2 for a bad
// command line. See docs/difftest.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "tools/tlc_difftest/generator.h"
#include "tools/tlc_difftest/runner.h"

namespace fs = std::filesystem;
using namespace tlc::difftest;

namespace {

// What a crash handler prints: set before each run, so that a crash of a
// target still names the program and how to rerun it.
char gCrashNote[4096];

void onCrash(int sig) {
  ssize_t ignored = write(2, gCrashNote, std::strlen(gCrashNote));
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void setCrashNote(const std::string& text) {
  std::snprintf(gCrashNote, sizeof gCrashNote, "%s", text.c_str());
}

bool writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

std::string runArgs(const GeneratedProgram& p) {
  std::string s = "--seed " + std::to_string(p.seed);
  for (const auto& [name, size] : p.dims) s += " --dim " + name + "=" + std::to_string(size);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tlc_difftest: random tile programs on the interpreter, the CPU and the CUDA emulator"};
  uint64_t seed = 1;
  int64_t count = 0;
  double seconds = 0, emulatorTimeout = 60;
  std::string targetList, outDir = "difftest-out";
  std::vector<std::string> skipDtypes;
  bool keepGoing = false, writeOnly = false;
  app.add_option("--seed", seed, "first seed (program i uses seed+i)");
  app.add_option("--count", count, "number of programs (default 100 when --seconds is not given)")->check(CLI::NonNegativeNumber);
  app.add_option("--seconds", seconds, "start no program after this many seconds")->check(CLI::NonNegativeNumber);
  app.add_option("--targets", targetList, "comma-separated targets (default interp,cpu,emu:sm_80)");
  app.add_option("--out-dir", outDir, "where failing programs and their reports are saved");
  app.add_option("--emulator-timeout", emulatorTimeout, "seconds one emulated launch may take")->check(CLI::PositiveNumber);
  app.add_option("--skip-dtype", skipDtypes, "a dtype no program uses (repeatable, or comma-separated)")
      ->delimiter(',');
  app.add_flag("--keep-going", keepGoing, "continue after a disagreement");
  app.add_flag("--write-only", writeOnly, "write every program and its run arguments (.args) without running it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<std::string> targets;
  if (targetList.empty()) targets = defaultTargets();
  std::stringstream list(targetList);
  for (std::string t; std::getline(list, t, ',');) {
    std::vector<std::string> known = knownTargets();
    if (std::find(known.begin(), known.end(), t) == known.end()) {
      std::string names;
      for (const std::string& k : known) names += " " + k;
      std::cerr << "tlc_difftest: error: unknown target `" << t << "`; known:" << names << "\n";
      return 2;
    }
    targets.push_back(t);
  }
  if (count == 0 && seconds == 0) count = 100;
  GeneratorOptions options;
  options.skipDtypes.insert(skipDtypes.begin(), skipDtypes.end());
  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec) {
    std::cerr << "tlc_difftest: error: cannot create `" << outDir << "`: " << ec.message() << "\n";
    return 2;
  }
  // Built kernels are not worth keeping in the kernel cache.
  setenv("TLC_CACHE", "0", 1);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, onCrash);

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::map<std::string, int64_t> kinds;
  int64_t programs = 0, failures = 0;
  for (uint64_t s = seed;; ++s) {
    if (count > 0 && programs >= count) break;
    if (seconds > 0 && elapsed() >= seconds) break;
    GeneratedProgram p = generateProgram(s, options);
    fs::path path = fs::path(outDir) / ("seed" + std::to_string(s) + ".tl");
    if (!writeFile(path, p.source)) {
      std::cerr << "tlc_difftest: error: cannot write `" << path.string() << "`\n";
      return 2;
    }
    ++programs;
    ++kinds[p.kind];
    if (writeOnly) {
      writeFile(fs::path(path).replace_extension(".args"), runArgs(p) + "\n");
      continue;
    }
    bool failed = false;
    for (const std::string& target : targets) {
      setCrashNote("tlc_difftest: crashed on seed " + std::to_string(s) + ", target " + target + "\n  program: " +
                   path.string() + "\n  reproduce: " + reproduceCommand(p, path.string(), target) + "\n");
      TargetResult r = runOnTarget(p, path.string(), target, emulatorTimeout);
      if (r.pass) continue;
      std::string what = r.compiled ? "disagreement" : "program rejected by the front end (generator or front-end bug)";
      std::string used = r.compiled ? target : "check";
      std::string report = "tlc_difftest: " + what + " on seed " + std::to_string(s) + " (" + p.kind +
                           "), target " + target + "\n  program: " + path.string() +
                           "\n  reproduce: " + reproduceCommand(p, path.string(), used) + "\n" +
                           disagreementLines(r.log);
      std::cout << report << std::flush;
      writeFile(fs::path(path).replace_extension(".txt"), report + "\nfull log:\n" + r.log);
      failed = true;
      break;
    }
    if (failed) ++failures;
    else fs::remove(path, ec);
    if (programs % 100 == 0)
      std::cout << "tlc_difftest: " << programs << " programs so far, " << failures << " with disagreements, "
                << static_cast<int64_t>(elapsed()) << " s\n"
                << std::flush;
    if (failed && !keepGoing) break;
  }
  std::string kindText;
  for (const auto& [k, n] : kinds) kindText += (kindText.empty() ? "" : ", ") + k + " " + std::to_string(n);
  std::string targetText;
  for (const std::string& t : targets) targetText += (targetText.empty() ? "" : ",") + t;
  std::cout << "tlc_difftest: " << programs << " programs (" << kindText << ")"
            << (writeOnly ? " written to " + outDir : " on " + targetText + ", " + std::to_string(failures) +
                                                          " with disagreements")
            << ", seeds " << seed << ".." << seed + static_cast<uint64_t>(std::max<int64_t>(programs, 1)) - 1 << ", "
            << static_cast<int64_t>(elapsed()) << " s\n";
  return failures ? 1 : 0;
}
