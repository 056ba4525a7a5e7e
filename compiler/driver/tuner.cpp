#include "compiler/driver/tuner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "compiler/backends/metadata.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/driver/tune_targets.h"

namespace tlc::driver {
namespace {

using Clock = std::chrono::steady_clock;

// The progress line: "tune: compiled 12/48, measured 5/48, best 0.532 ms
// (block_M=128 ...), ETA 30 s", rewritten in place on a terminal, else
// printed at most once a second (TLC_PROGRESS=0 turns it off, =1 forces
// the line mode).
class TuneProgress {
 public:
  explicit TuneProgress(size_t total) : total_(total), start_(Clock::now()) {
    const char* env = std::getenv("TLC_PROGRESS");
    std::string mode = env ? env : "";
    enabled_ = mode != "0";
    terminal_ = mode != "1" && isatty(2);
  }
  void compiled() { update(&compiled_); }
  void measured() { update(&measured_); }
  void best(const std::string& label, double ms) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bestMs_ < 0 || ms < bestMs_) {
      bestMs_ = ms;
      bestLabel_ = label;
    }
  }
  // The last line, kept on the screen.
  void finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (enabled_) std::cerr << (terminal_ ? "\r\033[K" : "") << line(false) << "\n";
  }

 private:
  void update(size_t* counter) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++*counter;
    auto now = Clock::now();
    if (!enabled_ || (!terminal_ && now - lastPrint_ < std::chrono::seconds(1))) return;
    lastPrint_ = now;
    std::cerr << (terminal_ ? "\r\033[K" : "") << line(true) << (terminal_ ? "" : "\n") << std::flush;
  }
  std::string line(bool eta) const {
    std::string s = fmt::format("tune: compiled {}/{}, measured {}/{}", compiled_, total_, measured_, total_);
    if (bestMs_ >= 0) s += fmt::format(", best {:.4f} ms ({})", bestMs_, bestLabel_);
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    size_t done = compiled_ + measured_;
    if (eta && done > 0 && done < 2 * total_)
      s += fmt::format(", ETA {:.0f} s", elapsed / double(done) * double(2 * total_ - done));
    else if (!eta)
      s += fmt::format(", {:.1f} s", elapsed);
    return s;
  }
  std::mutex mutex_;
  size_t total_, compiled_ = 0, measured_ = 0;
  double bestMs_ = -1;
  std::string bestLabel_;
  bool enabled_ = true, terminal_ = false;
  Clock::time_point start_, lastPrint_{};
};

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// One candidate through the tuner.
struct CandidateRun {
  std::optional<ir::Module> module;
  std::unique_ptr<CompiledCandidate> compiled;
  TuneResult result;
};

// Runs the candidate at the check sizes on the target and on the
// interpreter; true when every output agrees.
bool checkAgainstInterpreter(TuneTarget& target, CandidateRun& run, const ir::PrimFunc& func,
                             const std::map<std::string, int64_t>& dims, uint64_t seed, std::string* why) {
  std::map<std::string, int64_t> small;
  for (const auto& [name, size] : dims) small[name] = checkSize(size);
  Compilation quiet;
  quiet.setQuiet();
  std::optional<RunArgs> args = makeArguments(func, small, seed, quiet.diags());
  if (!args) {
    *why = quiet.firstError();
    return false;
  }
  RunArgs oracle = cloneArguments(*args);
  if (!runOracle(func, oracle, quiet.diags())) {
    *why = "the interpreter failed: " + quiet.firstError();
    return false;
  }
  if (!target.runOnce(*run.compiled, func, *args, why)) return false;
  std::ostringstream summary;
  if (printSummary(summary, func, *args, &oracle, "tune", seed, target.tf32Gemm())) return true;
  std::string text = summary.str();
  size_t fail = text.find("check: FAIL");
  *why = "disagrees with the interpreter at the check size: " + (fail == std::string::npos ? text : text.substr(fail + 12));
  while (!why->empty() && why->back() == '\n') why->pop_back();
  return false;
}

}  // namespace

TuneKeyInputs tuneKeyInputs(const std::vector<std::string>& sources, const std::string& kernel,
                            const TargetRequest& request, const std::vector<std::string>& defines) {
  TuneKeyInputs in;
  in.sources = sources;
  in.kernel = kernel;
  in.target = request.target;
  in.options = "cpu=" + request.cpu + "|features=" + request.features +
               "|warp-specialize=" + std::to_string(request.warpSpecialize) +
               "|persistent=" + std::to_string(request.persistent) + "|stage-tma=" + std::to_string(request.stageTma);
  for (const std::string& d : defines) {
    size_t eq = d.find('=');
    in.defines.emplace_back(d.substr(0, eq), eq == std::string::npos ? "" : d.substr(eq + 1));
  }
  return in;
}

int tuneKernel(const TuneSettings& settings, const TargetRequest& request) {
  // 1. The program as given: its space, its sources, the kernel.
  Compilation base;
  base.setTarget(frontendTarget(request));
  FrontendTuning tuning;
  tuning.kernel = settings.kernel;
  tuning.extraConditions = settings.where;
  auto module = base.compile(settings.file, settings.defines, &tuning, settings.kernel);
  if (!module) return kExitUserError;
  const ir::PrimFunc* func = selectKernel(*module, settings.kernel, base.diags());
  if (!func) return kExitUserError;
  const std::string kernel = func->name;
  const TuneSpace* declared = nullptr;
  for (const TuneSpace& s : tuning.spaces)
    if (s.kernel == kernel) declared = &s;
  std::string error;
  std::vector<TuneParam> overrides;
  for (const std::string& text : settings.space) {
    auto p = parseSpaceOverride(text, &error);
    if (!p) {
      std::cerr << "tlc: error: " << error << "\n";
      return kExitUsage;
    }
    overrides.push_back(*p);
  }
  auto params = declared ? effectiveSpace(*declared, overrides, settings.defines, &error) : std::nullopt;
  if (!params) {
    std::cerr << "tlc: error: " << (declared ? error : "`" + kernel + "` was not compiled") << "\n";
    return kExitUsage;
  }
  auto candidates = enumerateCandidates(*params, settings.maxCandidates, &error);
  if (!candidates) {
    std::cerr << "tlc: error: " << error << "\n";
    return kExitUsage;
  }
  // Every dynamic dimension needs a size: the check below reports the missing ones.
  if (!makeArguments(*func, settings.dims, settings.seed, base.diags())) return kExitUserError;

  std::unique_ptr<TuneTarget> target = makeTuneTarget(request, settings, &error);
  if (!target) {
    std::cerr << "tlc: error: " << error << "\n";
    return kExitUsage;
  }
  TuneDatabase db = TuneDatabase::locate(settings.db);
  if (!db.usable()) {
    std::cerr << "tlc: error: no directory for the tuning results: set TLC_TUNE_DIR or pass --db DIR\n";
    return kExitUsage;
  }
  TuneKeyInputs keyInputs = tuneKeyInputs(base.sourceTexts(), kernel, request, settings.defines);
  keyInputs.device = target->device();
  keyInputs.bucket = shapeBucket(settings.dims);
  TuneKey key = tuneKey(keyInputs);
  if (!settings.force) {
    if (auto existing = db.lookup(key.key)) {
      std::cout << "tune: already tuned (pass --force to tune again):\n" << formatRecords({*existing}, false);
      return kExitOk;
    }
  }

  // 2-3. Compile on every core; measure on the workers as compiles finish.
  const size_t n = candidates->size();
  std::vector<CandidateRun> runs(n);
  TuneProgress progress(n);
  JobQueue queue;
  auto compileOne = [&](size_t i) {
    CandidateRun& run = runs[i];
    run.result.config = (*candidates)[i];
    std::vector<std::string> defines = settings.defines;
    for (const std::string& d : run.result.config.defines()) defines.push_back(d);
    Compilation c;
    c.setQuiet();
    c.setTarget(frontendTarget(request));
    FrontendTuning t;
    t.kernel = kernel;
    t.extraConditions = settings.where;
    run.module = c.compile(settings.file, defines, &t, kernel);
    const TuneSpace* space = nullptr;
    for (const TuneSpace& s : t.spaces)
      if (s.kernel == kernel) space = &s;
    if (!run.module || !space) {
      run.result.status = "failed";
      run.result.note = c.firstError();
    } else if (!space->allHold()) {
      run.result.status = "pruned";
      for (const TuneCondition& cond : space->conditions)
        if (!cond.holds) run.result.note = "where: `" + cond.text + "` is false";
    } else {
      run.compiled = target->compile(*run.module, c.diags(), &run.result);
      if (run.compiled) {
        run.result.status = "ok";
        queue.push(i);
      }
    }
    progress.compiled();
    if (!run.compiled) progress.measured();  // nothing left to do for it
  };
  size_t jobs = settings.jobs ? settings.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<size_t> unfinished;
  auto measureOne = [&](size_t worker, size_t i) {
    CandidateRun& run = runs[i];
    const ir::PrimFunc* f = selectKernel(*run.module, kernel, base.diags());
    WorkerOutcome outcome = target->measure(worker, *run.compiled, *f, settings.dims, &run.result);
    if (outcome == WorkerOutcome::Done) {
      if (run.result.status == "ok") progress.best(run.result.config.label(), run.result.ms);
      progress.measured();
    }
    return outcome;
  };
  std::vector<WorkerReport> reports;
  if (target->measureWhileCompiling()) {
    std::thread compiler([&] {
      parallelFor(n, jobs, compileOne);
      queue.close();
    });
    reports = runOnWorkers(queue, target->workers(), measureOne, &unfinished);
    compiler.join();
  } else {
    parallelFor(n, jobs, compileOne);
    queue.close();
    reports = runOnWorkers(queue, target->workers(), measureOne, &unfinished);
  }
  progress.finish();
  for (const WorkerReport& r : reports)
    if (r.lost) std::cerr << "tlc: warning: " << r.name << " failed and took no more candidates\n";
  for (size_t i : unfinished) {
    runs[i].result.status = "failed";
    runs[i].result.note = "no device was left to measure it";
  }

  // 4. The fastest that agree with the interpreter.
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (runs[i].result.status == "ok" && runs[i].result.ms >= 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[a].result.ms < runs[b].result.ms; });
  std::optional<size_t> best;
  size_t passed = 0;
  for (size_t i : order) {
    if (passed >= settings.checkCount) break;
    const ir::PrimFunc* f = selectKernel(*runs[i].module, kernel, base.diags());
    std::string why;
    if (checkAgainstInterpreter(*target, runs[i], *f, settings.dims, settings.seed, &why)) {
      ++passed;
      if (!best) best = i;
      runs[i].result.note = "checked against the interpreter";
    } else {
      runs[i].result.status = "rejected";
      runs[i].result.note = why;
    }
  }

  // 5. The record.
  TuneRecord record;
  record.key = key.key;
  record.matchKey = key.matchKey;
  record.file = settings.file;
  record.kernel = kernel;
  record.target = request.target;
  record.device = keyInputs.device;
  record.bucket = keyInputs.bucket;
  record.options = keyInputs.options;
  record.tlcVersion = meta::tlcVersion();
  record.dims = settings.dims;
  record.defines = settings.defines;
  record.tunedAt = utcNow();
  for (CandidateRun& r : runs) record.results.push_back(r.result);
  if (!best) {
    std::cout << formatRecords({record}, true);
    std::cerr << "tlc: error: no candidate of `" << kernel << "` compiled, ran and agreed with the interpreter\n";
    return kExitUserError;
  }
  record.best = runs[*best].result.config;
  record.bestMs = runs[*best].result.ms;
  if (!db.store(record, &error)) {
    std::cerr << "tlc: error: cannot store the tuning results: " << error << "\n";
    return kExitUserError;
  }
  std::cout << formatRecords({record}, false) << "  stored in " << db.dir() << "\n";
  return kExitOk;
}

}  // namespace tlc::driver
