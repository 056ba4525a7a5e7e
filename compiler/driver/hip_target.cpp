#include "compiler/driver/hip_target.h"

#include <chrono>
#include <iostream>

#include "compiler/backends/hip/hip_compile.h"
#include "compiler/backends/gpu_driver.h"
#include "compiler/driver/cuda_target.h"
#include "compiler/driver/device_metadata.h"
#include "compiler/support/file_io.h"

namespace tlc::driver {

std::optional<std::string> compileForHip(const ir::Module& module, const cuda::CudaOptions& options,
                                         DiagnosticEngine& diags, cuda::CudaModule* generated) {
  const hip::HipArch* arch = hip::findHipArch(options.arch);
  TLC_CHECK(arch, "hip arch `" + options.arch + "` passed the target check");
  auto t0 = std::chrono::steady_clock::now();
  auto cm = cuda::generateCuda(module, options, diags);
  if (!cm) return std::nullopt;
  auto t1 = std::chrono::steady_clock::now();
  if (options.printAfterAll) std::cerr << "// -----// HIP C for " << options.arch << " //----- //\n" << cm->source;
  hip::HipBuildResult built = hip::compileHip(cm->source, *arch);
  auto t2 = std::chrono::steady_clock::now();
  if (options.timePasses) {
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::cerr << "hip codegen: " << ms(t0, t1) << " ms\n"
              << (arch->compiler == hip::HipCompiler::Hiprtc ? "hiprtc" : "clang") << " (" << options.arch
              << "): " << ms(t1, t2) << " ms\n";
  }
  if (!built.ok) {
    diags.report(DiagKind::HipBuildFailed, {}, built.error);
    return std::nullopt;
  }
  if (generated) *generated = std::move(*cm);
  return built.binary;
}

int emitHip(const ir::Module& module, const std::string& stage, const cuda::CudaOptions& options, std::ostream& os,
            DiagnosticEngine& diags) {
  if (stage == "hip") {
    cuda::CudaOptions readable = options;  // for reading: without #line directives
    readable.lineDirectives = false;
    auto cm = cuda::generateCuda(module, readable, diags);
    if (!cm) return 1;
    os << cm->source;
    return 0;
  }
  auto bin = compileForHip(module, options, diags);
  if (!bin) return 1;
  std::string text, error;
  if (!hip::disassembleHsaco(*bin, *hip::findHipArch(options.arch), &text, &error)) {
    diags.report(DiagKind::HipBuildFailed, {}, error);
    return 1;
  }
  os << text;
  return 0;
}

int buildForHip(const ir::Module& module, const std::string& outPath, const cuda::CudaOptions& options,
                DiagnosticEngine& diags) {
  cuda::CudaModule generated;
  auto bin = compileForHip(module, options, diags, &generated);
  if (!bin) return 1;
  std::string meta = cudaModuleMetadata(module, generated, "hip:" + options.arch, &diags.sources(), "hsaco");
  std::string error;
  if (!replaceNamedFile(outPath, *bin, &error) || !writeMetadataBeside(outPath, meta, &error)) {
    diags.report(DiagKind::HipBuildFailed, {}, error.empty() ? "cannot write `" + outPath + "`" : error);
    return 1;
  }
  return 0;
}

int runOnHip(const ir::Module& module, const RunSettings& settings, const cuda::CudaOptions& options,
             DiagnosticEngine& diags) {
  // The GPU first: without one, compiling (seconds with clang) is wasted.
  std::string why;
  backend::GpuDriver* drv = backend::GpuDriver::get(backend::GpuRuntime::Hip, &why);
  if (!drv) {
    diags.report(DiagKind::HipLaunchFailed, {}, why + "; run the HIP code on the CPU with `--emulate`");
    return 1;
  }
  LoadedCudaModule lm;
  auto hsaco = compileForHip(module, options, diags, &lm.generated);
  if (!hsaco) return 1;
  GpuRun run;
  run.label = "hip:" + options.arch;
  run.launchFailed = DiagKind::HipLaunchFailed;
  run.tf32Gemm = false;  // float32 gemms are float32 multiply-adds on CDNA (no MFMA for them yet)
  return runOnGpu(module, settings, options, drv, lm, *hsaco, run, diags);
}

}  // namespace tlc::driver
