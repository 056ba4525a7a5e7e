// EmulatedModule, findings and reports (see emulator.h).
#include "compiler/backends/cuda_emu/emulator.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda_emu/host_compile.h"
#include "compiler/backends/cuda_emu/machine.h"

namespace tlc::cuda_emu {

const char* findingKindName(FindingKind k) {
  switch (k) {
#define X(Name, Printed, IsError) \
  case FindingKind::Name: return Printed;
    TLC_EMU_FINDING_KINDS(X)
#undef X
  }
  return "?";
}

bool findingIsError(FindingKind k) {
  switch (k) {
#define X(Name, Printed, IsError) \
  case FindingKind::Name: return IsError;
    TLC_EMU_FINDING_KINDS(X)
#undef X
  }
  return true;
}

std::string CodeLocation::str() const {
  if (line > 0) return file + ":" + std::to_string(line);
  if (pc == 0) return "<unknown>";
  char buf[64];
  snprintf(buf, sizeof buf, "pc 0x%llx", (unsigned long long)pc);
  return (function.empty() ? std::string() : function + " ") + buf;
}

std::string Finding::str() const {
  std::string at = where.pc || where.line ? where.str() : "kernel `" + kernel + "`";
  std::string s = at + ": " + (isError() ? "error" : "warning") + ": " + message + " [" +
                  findingKindName(kind) + "]";
  s += "\n    in kernel `" + kernel + "`";
  if (hasThread) {
    char buf[120];
    snprintf(buf, sizeof buf, ", block (%u,%u,%u), thread (%u,%u,%u)", block.x, block.y, block.z, thread.x,
             thread.y, thread.z);
    s += buf;
  }
  if (count > 1) s += " (" + std::to_string(count) + " times)";
  if (other.pc || other.line) s += "\n    the other access: " + other.str();
  return s;
}

size_t LaunchResult::errorCount() const {
  size_t n = 0;
  for (auto& f : findings) n += f.isError();
  return n;
}

bool LaunchResult::has(FindingKind k) const {
  for (auto& f : findings)
    if (f.kind == k) return true;
  return false;
}

std::string LaunchResult::render() const {
  std::string s;
  if (!error.empty()) s += "error: " + error + "\n";
  for (auto& f : findings) s += f.str() + "\n";
  if (droppedFindings) s += "(" + std::to_string(droppedFindings) + " more findings not shown)\n";
  if (!completed && error.empty()) s += "the launch was stopped early\n";
  if (sharedInstructions) {
    char buf[200];
    snprintf(buf, sizeof buf, "shared memory: %llu warp-wide accesses, %llu wavefronts (%llu without bank conflicts)\n",
             (unsigned long long)sharedInstructions, (unsigned long long)sharedWavefronts,
             (unsigned long long)idealSharedWavefronts);
    s += buf;
  }
  return s;
}

std::unique_ptr<EmulatedModule> EmulatedModule::compile(const std::string& cudaSource, std::string* error,
                                                        const CompileOptions& options) {
  HostSource hs = toHostSource(cudaSource, options.sourceName);
  if (hs.kernels.empty()) {
    *error = "the CUDA source defines no __global__ kernel";
    return nullptr;
  }
  BuiltModule built;
  if (!buildHostModule(hs, options, &built, error)) return nullptr;
  void* h = dlopen(built.sharedObjectPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *error = std::string("cannot load the emulated module: ") + dlerror();
    return nullptr;
  }
  std::unique_ptr<EmulatedModule> m(new EmulatedModule());
  m->handle_ = h;
  m->hostSource_ = built.sourcePath;
  m->soPath_ = built.sharedObjectPath;
  m->kernels_ = hs.kernels;
  m->cudaSource_ = cudaSource;
  m->machine_ = std::make_unique<Machine>(m.get(), h);
  if (!m->machine_->hostVar_ || !m->machine_->selfVar_) {
    *error = "the emulated module lacks the emulator's prelude symbols";
    return nullptr;
  }
  return m;
}

EmulatedModule::~EmulatedModule() {
  machine_.reset();
  if (handle_) dlclose(handle_);
}

bool EmulatedModule::hasKernel(const std::string& name) const {
  return std::find(kernels_.begin(), kernels_.end(), name) != kernels_.end();
}

LaunchResult EmulatedModule::launch(const std::string& kernel, const LaunchConfig& config,
                                    std::vector<KernelArg>& args, const LaunchOptions& options) {
  if (options.replayDir.empty()) return machine_->launch(kernel, config, args, options);
  // Replay bundle: the source, the launch, the inputs and the emulator's outputs.
  namespace fs = std::filesystem;
  static int bundleCount = 0;  // process-wide: several modules may share a kernel name
  fs::path dir = fs::path(options.replayDir) / (kernel + "_" + std::to_string(bundleCount++));
  replayCount_++;
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto writeFile = [&](const fs::path& p, const void* data, size_t n) {
    std::ofstream f(p, std::ios::binary);
    f.write(static_cast<const char*>(data), (std::streamsize)n);
  };
  writeFile(dir / "kernel.cu", cudaSource_.data(), cudaSource_.size());
  std::ofstream manifest(dir / "launch.txt");
  manifest << "kernel " << kernel << "\n";
  manifest << "grid " << config.grid.x << " " << config.grid.y << " " << config.grid.z << "\n";
  manifest << "block " << config.block.x << " " << config.block.y << " " << config.block.z << "\n";
  manifest << "shared " << config.dynamicSharedBytes << "\n";
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    if (a.kind == KernelArg::Kind::Buffer) {
      manifest << "buffer " << a.name << " " << a.bytes << " " << (a.writable ? 1 : 0) << " "
               << (a.dtype.empty() ? "bytes" : a.dtype) << "\n";
      writeFile(dir / ("arg" + std::to_string(i) + ".in.bin"), a.data, a.bytes);
    } else {
      manifest << "scalar " << a.name << " " << a.bytes;
      for (size_t b = 0; b < a.bytes; ++b) manifest << " " << (int)a.scalar[b];
      manifest << "\n";
    }
  }
  manifest.close();
  LaunchResult r = machine_->launch(kernel, config, args, options);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == KernelArg::Kind::Buffer)
      writeFile(dir / ("arg" + std::to_string(i) + ".emu.bin"), args[i].data, args[i].bytes);
  std::ofstream(dir / "emulator_report.txt") << r.render() << (r.clean() ? "clean\n" : "NOT CLEAN\n");
  return r;
}

}  // namespace tlc::cuda_emu
