#include "compiler/driver/cuda_target.h"

#include "compiler/ir/gemm_flops.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "compiler/backends/gpu_driver.h"
#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/backends/cuda/ptxas_advice.h"
#include "compiler/driver/cuda_launch.h"
#include "compiler/driver/device_metadata.h"
#include "compiler/driver/kernel_cache.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/functor.h"
#include "compiler/support/file_io.h"

namespace tlc::driver {

using namespace ir;

namespace {

std::optional<CudaBenchResult> gLastBench;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int sustainedRuns(double oneMs, int atLeast) {
  return (int)std::clamp(500.0 / std::max(oneMs, 1e-3), (double)atLeast, 1000.0);
}

const std::optional<CudaBenchResult>& lastCudaBench() { return gLastBench; }

std::optional<std::string> compileForCuda(const Module& module, const CudaOptions& options, bool ptx,
                                          DiagnosticEngine& diags, cuda::CudaModule* generated,
                                          std::string* fallbackCubin) {
  auto t0 = std::chrono::steady_clock::now();
  auto cm = cuda::generateCuda(module, options, diags);
  if (!cm) return std::nullopt;
  auto t1 = std::chrono::steady_clock::now();
  if (options.printAfterAll) std::cerr << "// -----// CUDA C for " << options.arch << " //----- //\n" << cm->source;
  // PTX is one text of every kernel; cubins are made of the primary kernels
  // and, when asked, of the fallbacks, as two programs compiled at once.
  std::vector<std::string> programs = {ptx ? cm->source : cm->primarySource};
  bool withFallbacks = !ptx && fallbackCubin && !cm->fallbackSource.empty();
  if (withFallbacks) programs.push_back(cm->fallbackSource);
  std::vector<cuda::NvrtcResult> results = cuda::compileConcurrentlyWithNvrtc(
      programs, options.arch, ptx, ptx ? std::vector<std::string>{} : cuda::ptxasAdviceOptions());
  auto t2 = std::chrono::steady_clock::now();
  if (options.timePasses) {
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::cerr << "cuda codegen: " << ms(t0, t1) << " ms\nnvrtc (" << options.arch << ", " << programs.size()
              << (programs.size() == 1 ? " program" : " programs at once") << "): " << ms(t1, t2) << " ms\n";
  }
  for (const cuda::NvrtcResult& r : results)
    if (!r.ok) {
      diags.report(DiagKind::CudaBuildFailed, {}, r.error);
      return std::nullopt;
    }
  if (!ptx)
    for (const cuda::NvrtcResult& r : results) cuda::reportPtxasAdvice(*cm, r.log, options.warnSpills, diags);
  if (fallbackCubin) *fallbackCubin = withFallbacks ? std::move(results[1].binary) : std::string();
  if (generated) *generated = std::move(*cm);
  return std::move(results[0].binary);
}

int emitCuda(const Module& module, bool ptx, const CudaOptions& options, std::ostream& os, DiagnosticEngine& diags) {
  if (!ptx) {
    // Printed for reading: without the #line directives the compiled source carries.
    CudaOptions readable = options;
    readable.lineDirectives = false;
    auto cm = cuda::generateCuda(module, readable, diags);
    if (!cm) return 1;
    os << cm->source;
    return 0;
  }
  auto bin = compileForCuda(module, options, true, diags);
  if (!bin) return 1;
  os << *bin;
  return 0;
}

namespace {

// The key of one part (`what`: the binary or its metadata) of a device
// build: the module's IR with its source locations (the binary's line
// directives and the metadata both name .tl lines), the target and every
// option that changes the generated code.
std::string cudaCacheKey(const Module& module, const CudaOptions& o, const SourceManager& sources,
                         const std::string& what) {
  CacheKeyParts parts;
  PrintOptions print;
  print.locations = &sources;
  parts.sources = {printModule(module, print)};
  parts.target = "cuda:" + o.arch;
  parts.options = what + "|tensor-cores=" + std::to_string(o.tensorCores) + "|async-copy=" +
                  std::to_string(o.asyncCopy) + "|async-standalone-copies=" + std::to_string(o.asyncStandaloneCopies) + "|swizzle=" + std::to_string(o.swizzle) + "|warp-specialize=" +
                  std::to_string(o.warpSpecialize) + "|persistent=" + std::to_string(o.persistent) + "|stage-tma=" + std::to_string(o.stageTma) + "|max-shared=" + std::to_string(o.maxSharedBytes) +
                  "|line-directives=" + std::to_string(o.lineDirectives);
  return cacheKey(parts);
}

bool readWhole(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  *bytes = text.str();
  return (bool)in;
}

}  // namespace

int buildForCuda(const Module& module, const std::string& outPath, const CudaOptions& options, DiagnosticEngine& diags) {
  // Device builds go through the kernel cache (kernel_cache.h) like CPU
  // modules: the binary and its metadata are two entries, used only together.
  // Builds that print their passes or times always compile.
  KernelCache cache = KernelCache::fromEnvironment();
  // A build asked to print or time its phases, or to report ptxas's spills, compiles.
  bool cacheable = cache.enabled() && !options.printAfterAll && !options.timePasses && !options.warnSpills;
  std::string binKey = cacheable ? cudaCacheKey(module, options, diags.sources(), "binary") : "";
  std::string metaKey = cacheable ? cudaCacheKey(module, options, diags.sources(), "metadata") : "";
  std::string bin, meta;
  bool hit = false;
  if (cacheable) {
    auto b = cache.lookup(binKey), m = cache.lookup(metaKey);
    hit = b && m && readWhole(*b, &bin) && readWhole(*m, &meta);
  }
  if (!hit) {
    cuda::CudaModule generated;
    std::string fallbacks;
    auto built = compileForCuda(module, options, false, diags, &generated, &fallbacks);
    if (!built) return 1;
    bin = std::move(*built);
    meta = cudaModuleMetadata(module, generated, "cuda:" + options.arch, &diags.sources(), "cubin", fallbacks);
    std::string ignored;  // an unwritable cache only costs the next build its time
    if (cacheable && cache.store(binKey, bin, &ignored)) cache.store(metaKey, meta, &ignored);
  }
  std::string error;
  if (!replaceNamedFile(outPath, bin, &error)) {
    diags.report(DiagKind::CudaBuildFailed, {}, "cannot write `" + outPath + "`: " + error);
    return 1;
  }
  // Kernel metadata for the host runtime, as `<out>.json`.
  if (!writeMetadataBeside(outPath, meta, &error)) {
    diags.report(DiagKind::CudaBuildFailed, {}, error);
    return 1;
  }
  return 0;
}

int runOnCuda(const Module& module, const RunSettings& settings, const CudaOptions& options, DiagnosticEngine& diags) {
  LoadedCudaModule lm;
  lm.arch = options.arch;
  auto cubin = compileForCuda(module, options, false, diags, &lm.generated);
  if (!cubin) return 1;
  std::string why;
  backend::GpuDriver* drv = backend::GpuDriver::get(backend::GpuRuntime::Cuda, &why);
  if (!drv) {
    diags.report(DiagKind::CudaLaunchFailed, {}, why + "; use `--emulate` to run the CUDA code on the CPU");
    return 1;
  }
  GpuRun run;
  run.label = "cuda:" + options.arch;
  run.launchFailed = DiagKind::CudaLaunchFailed;
  run.tf32Gemm = true;  // float32 gemms run on the tensor cores in tf32
  return runOnGpu(module, settings, options, drv, lm, *cubin, run, diags);
}

int runOnGpu(const Module& module, const RunSettings& settings, const CudaOptions& options, backend::GpuDriver* drv,
             LoadedCudaModule& lm, const std::string& binary, const GpuRun& run, DiagnosticEngine& diags) {
  if (!drv->loadModule(binary, &lm.module)) {
    diags.report(run.launchFailed, {}, drv->lastError());
    return 1;
  }
  std::ostream& out = settings.out ? *settings.out : std::cout;

  auto runner = [&](const PrimFunc& func, RunArgs& args, const RunSettings& rs, DiagnosticEngine& d) -> bool {
    auto fail = [&](const std::string& msg) {
      d.report(run.launchFailed, func.loc, msg);
      return false;
    };
    CudaLaunches launches(drv);
    std::string error, notes;
    bool prepared = launches.prepare(lm, func, args, &error, &notes);
    out << notes;
    if (!prepared) return fail(error);
    auto launchAll = [&]() { return launches.launchAll(); };
    if (!launchAll() || !drv->synchronize()) return fail(drv->lastError());
    if (!launches.copyOutputs(func, args)) return fail(drv->lastError());

    if (rs.bench) {
      // Warm up, then time batches of launches until ~0.5 s have passed (at least 5).
      double one = drv->time(launchAll);
      if (one < 0) return fail(drv->lastError());
      int runs = options.benchRuns > 0 ? options.benchRuns : sustainedRuns(one);
      std::vector<double> times;
      for (int r = 0; r < runs; ++r) {
        double ms = drv->time(launchAll);
        if (ms < 0) return fail(drv->lastError());
        times.push_back(ms);
      }
      CudaBenchResult br;
      br.medianMs = median(times);
      br.bytes = launches.tensorBytes();
      auto flops = ir::gemmFlops(func.body, [&](const Expr& e) -> std::optional<double> {
        auto v = launches.values().eval(e);
        if (!v) return std::nullopt;
        return double(*v);
      });
      if (flops && *flops > 0) br.flops = flops;
      out << "bench: " << func.name << " on " << drv->deviceName() << " (" << options.arch << "): median "
          << br.medianMs << " ms over " << runs << " runs";
      if (br.flops) out << ", " << *br.flops / (br.medianMs * 1e-3) / 1e12 << " TFLOP/s";
      out << ", " << br.bytes / (br.medianMs * 1e-3) / 1e9 << " GB/s (tensor bytes once)\n";
      gLastBench = br;
    }
    return true;
  };
  RunSettings gpu = settings;
  gpu.tf32Gemm = run.tf32Gemm;
  return runTarget(module, gpu, diags, run.label, runner);
}


}  // namespace tlc::driver
