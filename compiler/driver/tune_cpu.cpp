// `tlc tune --target=cpu`: candidates built through the kernel cache (each a
// shared object, built by LLVM on its own context, so builds run in
// parallel), measured one at a time by one worker, after every compile has
// finished: the kernels use every core themselves.
//
// Timing: one warm-up call, then calls for at least `minTime` seconds (at
// least 5, at most 1000), each on the next of several argument sets whose
// total size exceeds twice the last-level cache, so that no call finds its
// inputs left in the cache by the one before; the median is the result.
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "compiler/driver/compile.h"
#include "compiler/driver/cpu_cache.h"
#include "compiler/driver/cpu_target.h"
#include "compiler/driver/tune_targets.h"

namespace tlc::driver {
namespace {

struct CpuCandidate : CompiledCandidate {
  std::unique_ptr<cpu::CpuJitModule> jit;
};

// The last-level cache's size in bytes (32 MiB when the system does not say).
size_t lastLevelCacheBytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long v = sysconf(name);
    if (v > 0) return size_t(v);
  }
  return size_t(32) << 20;
}

class CpuTuneTarget : public TuneTarget {
 public:
  CpuTuneTarget(CpuOptions options, const TuneSettings& settings) : options_(std::move(options)), settings_(settings) {}

  std::string device() const override { return cpu::describeTarget(options_); }
  std::vector<std::string> workers() const override { return {"cpu"}; }
  bool measureWhileCompiling() const override { return false; }

  std::unique_ptr<CompiledCandidate> compile(const ir::Module& module, DiagnosticEngine& diags,
                                             TuneResult* result) override {
    auto c = std::make_unique<CpuCandidate>();
    CpuOptions o = options_;
    o.sources = &diags.sources();
    c->jit = compileForCpuCached(module, o, diags, KernelCache::fromEnvironment());
    if (!c->jit) {
      result->status = "failed";
      for (const Diagnostic& d : diags.diagnostics())
        if (d.severity == Severity::Error && result->note.empty()) result->note = d.message;
      return nullptr;
    }
    return c;
  }

  WorkerOutcome measure(size_t, CompiledCandidate& compiled, const ir::PrimFunc& func,
                        const std::map<std::string, int64_t>& dims, TuneResult* result) override {
    auto& c = static_cast<CpuCandidate&>(compiled);
    cpu::CpuKernelFn fn = c.jit->kernel(func.name);
    Compilation quiet;
    quiet.setQuiet();
    std::optional<RunArgs> first = makeArguments(func, dims, settings_.seed, quiet.diags());
    if (!fn || !first) {
      result->status = "failed";
      result->note = fn ? quiet.firstError() : "the built module has no kernel `" + func.name + "`";
      return WorkerOutcome::Done;
    }
    size_t bytes = 0;
    for (const auto& t : first->tensors)
      if (t) bytes += t->sizeBytes();
    size_t sets = std::clamp<size_t>(2 * lastLevelCacheBytes() / std::max<size_t>(bytes, 1) + 1, 1, 16);
    while (sets > 1 && sets * bytes > (size_t(2) << 30)) --sets;
    std::vector<RunArgs> args;
    args.push_back(std::move(*first));
    for (size_t s = 1; s < sets; ++s) args.push_back(cloneArguments(args[0]));
    using clock = std::chrono::steady_clock;
    callCpuKernel(fn, func, args[0]);  // warm-up
    if (reportCpuFailure(*c.jit, func, quiet.diags())) {
      result->status = "failed";
      result->note = quiet.firstError();
      return WorkerOutcome::Done;
    }
    std::vector<double> times;
    auto start = clock::now();
    while ((times.size() < 5 || std::chrono::duration<double>(clock::now() - start).count() < settings_.minTime) &&
           times.size() < 1000) {
      RunArgs& a = args[times.size() % sets];
      auto t0 = clock::now();
      callCpuKernel(fn, func, a);
      times.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    result->ms = times[times.size() / 2];
    return WorkerOutcome::Done;
  }

  bool runOnce(CompiledCandidate& compiled, const ir::PrimFunc& func, RunArgs& args, std::string* why) override {
    auto& c = static_cast<CpuCandidate&>(compiled);
    cpu::CpuKernelFn fn = c.jit->kernel(func.name);
    if (!fn) {
      *why = "the built module has no kernel `" + func.name + "`";
      return false;
    }
    callCpuKernel(fn, func, args);
    Compilation quiet;
    quiet.setQuiet();
    if (reportCpuFailure(*c.jit, func, quiet.diags())) {
      *why = quiet.firstError();
      return false;
    }
    return true;
  }

 private:
  CpuOptions options_;
  const TuneSettings& settings_;
};

CpuOptions cpuOptionsOf(const TargetRequest& r) {
  CpuOptions o;
  o.cpu = r.cpu;
  o.features = r.features;
  return o;
}

}  // namespace

std::string cpuTuneDevice(const TargetRequest& request) { return cpu::describeTarget(cpuOptionsOf(request)); }

std::unique_ptr<TuneTarget> makeCpuTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                              std::string* error) {
  CpuOptions o = cpuOptionsOf(request);
  if (std::string problem = cpu::checkCpuOptions(o); !problem.empty()) {
    *error = problem;
    return nullptr;
  }
  if (request.checkBounds || request.printAfterAll || request.timePasses) {
    *error = "`tlc tune` times kernels as `tlc build` makes them: --check-bounds, --print-after-all and "
             "--time-passes do not apply";
    return nullptr;
  }
  return std::make_unique<CpuTuneTarget>(o, settings);
}

}  // namespace tlc::driver
