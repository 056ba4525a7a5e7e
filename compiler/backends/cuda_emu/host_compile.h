// Turning generated CUDA C into a loadable host module.
//
// Assumes the source is what the CUDA emitter produces for NVRTC: kernels
// declared `__global__` (usually `extern "C"`), helpers from the embedded
// "tlc_cuda.h", `extern __shared__` dynamic shared memory, CUDA built-ins.
// Guarantees: the returned host source compiles against emu_prelude.h with
// every kernel K reachable through tlc_emu_launch_K; helpers written in
// inline PTX are replaced by calls into the emulated instruction set (or, if
// the emulator does not know one, by a body that traps with a clear message
// when it runs).
#pragma once

#include <string>
#include <vector>

#include "compiler/backends/cuda_emu/emulator.h"

namespace tlc::cuda_emu {

struct HostSource {
  std::string text;
  std::vector<std::string> kernels;
};

// Rewrites `extern __shared__ T name[];` into a pointer to the emulated
// dynamic shared memory and appends one launch trampoline per kernel.
HostSource toHostSource(const std::string& cudaSource, const std::string& sourceName = "kernel.cu");

// The host version of a device helper header: each function whose body
// contains inline PTX (`asm`) gets the emulator's implementation. Names of
// helpers the emulator does not implement are appended to *unknown.
std::string hostHelperHeader(const std::string& deviceHeader, std::vector<std::string>* unknown);

// The device helper header the CUDA backend embeds (runtime/cuda/tlc_cuda.h
// at build time), and the emulator's own prelude files.
const char* embeddedDeviceHelperHeader();

struct BuiltModule {
  std::string sourcePath, sharedObjectPath;
};
// Writes the host source and headers into a cache directory keyed by their
// hash and compiles them with the host C++ compiler (reusing an earlier
// build of identical input). false with *error (compiler output) on failure.
bool buildHostModule(const HostSource& source, const CompileOptions& options, BuiltModule* out,
                     std::string* error);

}  // namespace tlc::cuda_emu
