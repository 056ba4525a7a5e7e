// NVRTC, loaded at run time with dlopen: CUDA C source -> .cubin or .ptx.
//
// tlc never links NVRTC, so it builds and runs on machines without CUDA; the
// library is searched as $TLC_NVRTC, then libnvrtc.so{,.13,.12} on the loader
// path, then $CUDA_HOME/lib64 and /usr/local/cuda/lib64. The device helper
// header (runtime/cuda/tlc_cuda.h) is embedded in the binary and passed as an
// in-memory header; cuda_fp16.h / cuda_bf16.h come from the CUDA include
// directory ($CUDA_HOME/include or /usr/local/cuda/include).
#pragma once

#include <string>
#include <vector>

namespace tlc::cuda {

struct NvrtcResult {
  bool ok = false;
  std::string error;    // why loading or compiling failed (with the compiler log)
  std::string log;      // the compiler's log (warnings)
  std::string binary;   // .cubin bytes, or PTX text
};

// Compiles `source` for `arch` ("sm_80", "sm_90a", ...). With `ptx`, returns
// PTX for the matching virtual architecture instead of a cubin.
NvrtcResult compileWithNvrtc(const std::string& source, const std::string& arch, bool ptx,
                             const std::vector<std::string>& extraOptions = {});
// Compiles each source as its own NVRTC program, all at once on threads of
// their own (NVRTC compiles independent programs concurrently): the wall time
// of the slowest instead of the sum. Results in the order of `sources`.
std::vector<NvrtcResult> compileConcurrentlyWithNvrtc(const std::vector<std::string>& sources,
                                                      const std::string& arch, bool ptx,
                                                      const std::vector<std::string>& extraOptions = {});
// True when NVRTC can be loaded on this machine (tests skip otherwise).
bool nvrtcAvailable(std::string* why = nullptr);
// The CUDA installation root used for headers.
std::string cudaHome();
// The embedded device helper header.
const char* deviceHelperHeader();

}  // namespace tlc::cuda
