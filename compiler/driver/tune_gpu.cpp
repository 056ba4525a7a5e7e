// `tlc tune --target=cuda:sm_XX` and `--target=hip:gfxNNN`: candidates
// generated and compiled on every core (NVRTC, or hiprtc / clang for HIP;
// programs are independent and compile in parallel), measured on one worker
// per GPU (--devices, default all) while the others compile.
//
// Pruned before running: a candidate whose shared memory exceeds the
// device's opt-in limit (the code generator's cuda-shared-memory-overflow,
// before compiling), a kernel of more than 1024 threads, and (CUDA) one whose
// register count (read from the cubin) times its threads exceeds the 64K
// registers of a multiprocessor.
//
// Timing on a worker's device: the candidate's module loaded there, the
// arguments copied once, one warm-up launch, then launches until `minTime`
// has passed (at least 5, at most 1000), each after writing a buffer of
// twice the L2 cache so that no launch finds its inputs in L2, each timed
// alone with events; the median is the result. A launch that breaks the
// device's context fails its candidate, and the worker takes no more.
#include <algorithm>
#include <memory>
#include <mutex>

#include "compiler/backends/cuda/cubin_info.h"
#include "compiler/backends/metadata.h"
#include "compiler/backends/cuda/cuda_archs.h"
#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/cuda_launch.h"
#include "compiler/driver/cuda_target.h"
#include "compiler/driver/once_by_key.h"
#include "compiler/driver/tune_targets.h"
#ifdef TLC_HAVE_HIP_TARGET
#include "compiler/backends/hip/hip_compile.h"
#endif

namespace tlc::driver {
namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kRegistersPerMultiprocessor = 64 * 1024;

struct GpuCandidate : CompiledCandidate {
  std::string binary;  // .cubin or .hsaco
  cuda::CudaModule generated;
  std::vector<std::unique_ptr<LoadedCudaModule>> loaded;  // per worker, loaded by the worker's thread
};

// What each worker keeps between candidates: its device, an L2-sized
// buffer to flush with, the host arguments (candidates of one kernel share
// their shapes), and whether a candidate broke its context.
struct GpuWorker {
  backend::GpuDriver* drv = nullptr;
  backend::DevicePtr flush = 0;
  size_t flushBytes = 0;
  std::string argsShape;
  std::optional<RunArgs> args;
  bool broken = false;
};

// The declared shapes and dtypes of `func`'s tensors: candidates with the
// same signature take the same arguments at the same sizes.
std::string shapeSignature(const ir::PrimFunc& func) {
  std::string s;
  for (const ir::Param& p : func.params) {
    if (!p.buffer) {
      s += "scalar;";
      continue;
    }
    s += std::string(dtypeName(p.buffer->dtype)) + "[";
    for (const ir::Expr& d : p.buffer->shape) s += meta::exprToText(d) + ",";
    s += "];";
  }
  return s;
}

// One line for a candidate the GPU compiler rejected: the error's first line and the
// log's first error (a front-end `error:` or a `ptxas fatal`), so that the
// record says why without the warnings before it.
std::string compileFailureSummary(const std::string& error) {
  std::string first = error.substr(0, error.find('\n'));
  size_t pos = 0;
  while (pos < error.size()) {
    size_t end = error.find('\n', pos);
    if (end == std::string::npos) end = error.size();
    std::string line = error.substr(pos, end - pos);
    if (pos > 0 && (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos)) {
      size_t start = line.find_first_not_of(" \t");
      while (!first.empty() && first.back() == ':') first.pop_back();
      return first + ": " + line.substr(start);
    }
    pos = end + 1;
  }
  return first;
}

class GpuTuneTarget : public TuneTarget {
 public:
  GpuTuneTarget(CudaOptions options, std::vector<backend::GpuDriver*> drivers, const TuneSettings& settings)
      : options_(std::move(options)), settings_(settings) {
    for (backend::GpuDriver* d : drivers) {
      workers_.emplace_back();
      workers_.back().drv = d;
    }
  }
  ~GpuTuneTarget() override {
    for (GpuWorker& w : workers_)
      if (w.flush && w.drv->makeCurrent()) w.drv->free(w.flush);
  }

  std::string device() const override { return workers_[0].drv->deviceName(); }
  std::vector<std::string> workers() const override {
    std::vector<std::string> out;
    for (const GpuWorker& w : workers_)
      out.push_back("GPU " + std::to_string(w.drv->ordinal()) + " (" + w.drv->deviceName() + ")");
    return out;
  }
  bool measureWhileCompiling() const override { return true; }
  // CDNA has no MFMA for float32 gemms yet: they are float32 multiply-adds.
  bool tf32Gemm() const override { return !hip(); }

  std::unique_ptr<CompiledCandidate> compile(const ir::Module& module, DiagnosticEngine& diags,
                                             TuneResult* result) override {
    auto c = std::make_unique<GpuCandidate>();
    auto generated = cuda::generateCuda(module, options_, diags);
    if (!generated) {
      result->status = "failed";
      for (const Diagnostic& d : diags.diagnostics()) {
        if (d.severity != Severity::Error || !result->note.empty()) continue;
        result->note = d.message;
        if (d.kind == DiagKind::CudaSharedMemoryOverflow) result->status = "pruned";
      }
      return nullptr;
    }
    for (const cuda::FuncLaunch& f : generated->funcs)
      for (const cuda::KernelLaunch& k : f.kernels)
        if (k.threads > kMaxThreadsPerBlock) {
          result->status = "pruned";
          result->note = k.name + " has " + std::to_string(k.threads) + " threads; a block holds at most 1024";
          return nullptr;
        }
    // The versions without TMA are compiled only if a launch needs one
    // (cuda_launch.h): tuned shapes rarely do. Candidates that generate the
    // same source share its compile.
    const std::string& source = hip() ? generated->source : generated->primarySource;
    Built built = compiledSources_.get(source, [&] { return build(source); });
    if (!built.ok) {
      result->status = "failed";
      result->note = compileFailureSummary(built.error);
      return nullptr;
    }
    std::map<std::string, int> registers;
    if (!hip()) registers = cuda::cubinRegisterCounts(built.binary);
    for (const cuda::FuncLaunch& f : generated->funcs)
      for (const cuda::KernelLaunch& k : f.kernels) {
        auto it = registers.find(k.name);
        if (it != registers.end() && int64_t(it->second) * k.threads > kRegistersPerMultiprocessor) {
          result->status = "pruned";
          result->note = k.name + " uses " + std::to_string(it->second) + " registers per thread for " +
                         std::to_string(k.threads) + " threads, more than a multiprocessor's 65536";
          return nullptr;
        }
      }
    c->binary = std::move(built.binary);
    c->generated = std::move(*generated);
    c->loaded.resize(workers_.size());
    return c;
  }

  WorkerOutcome measure(size_t w, CompiledCandidate& compiled, const ir::PrimFunc& func,
                        const std::map<std::string, int64_t>& dims, TuneResult* result) override {
    GpuWorker& worker = workers_[w];
    if (worker.broken || !worker.drv->makeCurrent()) return WorkerOutcome::DeviceLost;
    auto& c = static_cast<GpuCandidate&>(compiled);
    auto failed = [&](const std::string& why) {
      result->status = "failed";
      result->note = why;
      // A kernel fault leaves the context unusable: later work must go elsewhere.
      if (!worker.drv->synchronize()) worker.broken = true;
      return WorkerOutcome::Done;
    };
    std::string error;
    LoadedCudaModule* lm = load(c, w, &error);
    if (!lm) return failed(error);
    if (std::string shape = shapeSignature(func); !worker.args || worker.argsShape != shape) {
      Compilation quiet;
      quiet.setQuiet();
      worker.args = makeArguments(func, dims, settings_.seed, quiet.diags());
      if (!worker.args) return failed(quiet.firstError());
      worker.argsShape = shape;
    }
    if (!worker.flush) {
      worker.flushBytes = size_t(std::max<int64_t>(worker.drv->l2CacheBytes(), 1 << 20)) * 2;
      if (!worker.drv->alloc(&worker.flush, worker.flushBytes)) return WorkerOutcome::DeviceLost;
    }
    CudaLaunches launches(worker.drv);
    std::string notes;
    if (!launches.prepare(*lm, func, *worker.args, &error, &notes)) return failed(error);
    if (!notes.empty()) result->note = notes.substr(0, notes.find('\n'));
    if (!launches.launchAll() || !worker.drv->synchronize()) return failed(worker.drv->lastError());
    std::vector<double> times;
    double total = 0;
    while ((times.size() < 5 || total < settings_.minTime * 1e3) && times.size() < 1000) {
      if (!worker.drv->memset8(worker.flush, uint8_t(times.size()), worker.flushBytes))
        return failed(worker.drv->lastError());
      double ms = worker.drv->time([&] { return launches.launchAll(); });
      if (ms < 0) return failed(worker.drv->lastError());
      times.push_back(ms);
      total += ms;
    }
    std::sort(times.begin(), times.end());
    result->ms = times[times.size() / 2];
    return WorkerOutcome::Done;
  }

  bool runOnce(CompiledCandidate& compiled, const ir::PrimFunc& func, RunArgs& args, std::string* why) override {
    GpuWorker& worker = workers_[0];
    if (!worker.drv->makeCurrent()) {
      *why = worker.drv->lastError();
      return false;
    }
    LoadedCudaModule* lm = load(static_cast<GpuCandidate&>(compiled), 0, why);
    if (!lm) return false;
    CudaLaunches launches(worker.drv);
    std::string notes;
    if (!launches.prepare(*lm, func, args, why, &notes)) return false;
    if (!launches.launchAll() || !worker.drv->synchronize() || !launches.copyOutputs(func, args)) {
      *why = worker.drv->lastError();
      return false;
    }
    return true;
  }

 private:
  bool hip() const { return options_.language == cuda::GpuLanguage::Hip; }

  LoadedCudaModule* load(GpuCandidate& c, size_t w, std::string* error) {
    if (!c.loaded[w]) {
      auto lm = std::make_unique<LoadedCudaModule>();
      lm->generated = c.generated;
      lm->arch = options_.arch;
      if (!workers_[w].drv->loadModule(c.binary, &lm->module)) {
        *error = workers_[w].drv->lastError();
        return nullptr;
      }
      c.loaded[w] = std::move(lm);
    }
    return c.loaded[w].get();
  }

  struct Built {
    bool ok = false;
    std::string error, binary;
  };
  Built build(const std::string& source) {
    Built out;
    if (!hip()) {
      cuda::NvrtcResult r = cuda::compileWithNvrtc(source, options_.arch, false);
      out = {r.ok, r.error, std::move(r.binary)};
    } else {
#ifdef TLC_HAVE_HIP_TARGET
      hip::HipBuildResult r = hip::compileHip(source, *hip::findHipArch(options_.arch));
      out = {r.ok, r.error, std::move(r.binary)};
#endif
    }
    return out;
  }

  CudaOptions options_;
  const TuneSettings& settings_;
  std::vector<GpuWorker> workers_;
  OnceByKey<std::string, Built> compiledSources_;
};

}  // namespace

std::optional<std::string> gpuTuneDevice(backend::GpuRuntime runtime, std::string* why) {
  backend::GpuDriver* drv = backend::GpuDriver::get(runtime, why);
  if (!drv) return std::nullopt;
  return drv->deviceName();
}

std::unique_ptr<TuneTarget> makeGpuTuneTarget(const TargetRequest& request, const TuneSettings& settings,
                                              CudaOptions options, std::string* error) {
  if (request.emulate) {
    *error = "`tlc tune` times kernels on the device: --emulate does not apply";
    return nullptr;
  }
  if (request.printAfterAll || request.timePasses) {
    *error = "`tlc tune` compiles many candidates: --print-after-all and --time-passes do not apply";
    return nullptr;
  }
  const bool hip = options.language == cuda::GpuLanguage::Hip;
  const backend::GpuRuntime runtime = hip ? backend::GpuRuntime::Hip : backend::GpuRuntime::Cuda;
  const char* kind = hip ? "an AMD GPU" : "an NVIDIA GPU";
  std::string why;
  int count = backend::GpuDriver::deviceCount(runtime, &why);
  if (count == 0) {
    *error = "`tlc tune --target=" + request.target + "` times kernels on " + kind + ", and there is none here: " + why;
    return nullptr;
  }
  std::vector<int> ordinals = settings.devices;
  if (ordinals.empty())
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
  std::vector<backend::GpuDriver*> drivers;
  for (int o : ordinals) {
    if (o < 0 || o >= count) {
      *error = "--devices " + std::to_string(o) + ": this machine has GPUs 0.." + std::to_string(count - 1);
      return nullptr;
    }
    backend::GpuDriver* d = backend::GpuDriver::forDevice(runtime, o, &why);
    if (!d) {
      *error = why;
      return nullptr;
    }
    if (!drivers.empty() && d->deviceName() != drivers[0]->deviceName()) {
      *error = "GPU " + std::to_string(o) + " is a " + d->deviceName() + " and GPU " +
               std::to_string(drivers[0]->ordinal()) + " a " + drivers[0]->deviceName() +
               ": results are filed per device, so tune on GPUs of one kind (--devices)";
      return nullptr;
    }
    drivers.push_back(d);
  }
  if (drivers[0]->maxSharedPerBlock() > 0) options.maxSharedBytes = int(drivers[0]->maxSharedPerBlock());
  return std::make_unique<GpuTuneTarget>(std::move(options), drivers, settings);
}

}  // namespace tlc::driver
