// Internal types of the tlc runtime (C++17; the public ABI is C, in
// include/tlc/runtime.h). Modules own their parsed metadata and a backend
// handle; kernels point into their module.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"
#include "tlc/runtime.h"

namespace tlc::rt {

// Records `message` as this thread's last error and returns `status`.
tlc_status fail(tlc_status status, std::string message);
void clearError();

// An expression in the metadata's RPN form (see compiler/backends/metadata.h).
struct Rpn {
  std::vector<std::string> tokens;
  std::string text;  // infix, for messages (may be the RPN itself)
  bool valid() const { return !tokens.empty(); }
};
Rpn parseRpn(const std::string& s);
// Evaluates an expression; nullopt and *error set when a name is unbound or
// the expression is malformed (division by zero included).
std::optional<int64_t> evalRpn(const Rpn& e, const std::map<std::string, int64_t>& env, std::string* error);

struct Dim {
  enum class Kind { Const, Symbol, Expr } kind = Kind::Const;
  int64_t value = 0;
  std::string symbol;  // Symbol
  Rpn expr;            // Expr
  std::string boundName;  // the compile-time parameter a constant was written as
};

struct ParamInfo {
  std::string name;
  bool isTensor = false;
  tlc_dtype dtype = TLC_FLOAT32;
  std::vector<Dim> shape;
};

struct DeviceArgInfo {
  enum class Kind { Param, Symbol, Let } kind = Kind::Param;
  int index = -1;
  std::string name;
  tlc_dtype dtype = TLC_INT32;
};

using TensorMapInfo = cuda::TensorMapArg;  // box outermost first

struct LaunchInfo {
  std::string entry;
  Rpn grid[3];
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  std::vector<TensorMapInfo> tensorMaps;  // passed after the device arguments
  // Launched instead when a tensor map cannot be encoded (empty: none).
  std::string fallbackEntry;
  int64_t fallbackBlock = 0, fallbackSharedBytes = 0;
  // > 0: a persistent kernel, launched over min(tiles, SMs x this) blocks (cuda/persistent_grid.h).
  int64_t persistentBlocksPerSM = 0;
  void* fallbackFunction = nullptr;
  void* function = nullptr;  // CUfunction / hipFunction_t, resolved lazily
};

struct KernelInfo {
  std::string name;
  std::string symbol;
  std::vector<ParamInfo> params;
  std::vector<std::string> shapeSymbols;
  std::vector<tlc_dtype> shapeSymbolDtypes;
  // Device targets.
  std::vector<DeviceArgInfo> deviceArgs;
  std::vector<std::pair<std::string, Rpn>> hostLets;
  std::vector<LaunchInfo> launches;
};

// Parses metadata JSON; false and *error on failure. *fallbackImage (when
// given) gets the decoded "fallback_image", empty without one.
bool parseMetadata(const std::string& json, std::string* target, std::vector<KernelInfo>* kernels,
                   std::string* error, std::string* fallbackImage = nullptr);

bool parseDtype(const std::string& name, tlc_dtype* out);
const char* dtypeNameOf(tlc_dtype t);

}  // namespace tlc::rt

struct tlc_kernel {
  tlc_module* module = nullptr;
  tlc::rt::KernelInfo info;
  void* cpuEntry = nullptr;  // void (*)(void* const*, const int64_t*)
};

struct tlc_module {
  tlc_backend backend = TLC_BACKEND_CPU;
  std::string metadata;
  std::string target;
  std::string origin;  // path or embedded name, for messages
  std::vector<std::unique_ptr<tlc_kernel>> kernels;
  // CPU
  void* dl = nullptr;
  void* cpuFailure = nullptr;  // tlc_module_last_failure, when its kernels can fail
  // CUDA / HIP
  void* deviceModule = nullptr;  // CUmodule / hipModule_t
  // The code object of the launches' fallback entries when the metadata
  // carries it apart from the binary ("fallback_image"), loaded as
  // `fallbackModule` by the first launch that needs a fallback.
  std::string fallbackImage;
  void* fallbackModule = nullptr;
  void* stageFunction = nullptr;  // cuda::kStageRowsEntry, looked up by the first launch that stages
  void* deviceContext = nullptr; // the CUcontext the module was loaded in
  std::mutex mutex;              // guards lazy function lookups
};

namespace tlc::rt {

// The arguments of a launch after checking: shape symbols bound.
struct CheckedArgs {
  std::map<std::string, int64_t> env;  // shape symbols and scalar parameters by name
  std::vector<int64_t> shapeVars;      // in the kernel's shape-symbol order
};
tlc_status checkArguments(const tlc_kernel& k, const tlc_arg* args, int32_t nargs, bool device, CheckedArgs* out);

// Converts a scalar argument to the storage of `dtype` (at most 8 bytes).
tlc_status convertScalar(const tlc_scalar& s, tlc_dtype dtype, const std::string& what, uint64_t* storage);

// Backends.
tlc_status cpuLoad(tlc_module* m, const void* image, size_t size);
tlc_status cpuResolveKernels(tlc_module* m);
tlc_status cpuLaunch(tlc_kernel* k, const tlc_arg* args, const CheckedArgs& checked);
void cpuUnload(tlc_module* m);

tlc_status deviceLoad(tlc_module* m, const void* image, size_t size);
tlc_status deviceLaunch(tlc_kernel* k, const tlc_arg* args, const CheckedArgs& checked, void* stream);
tlc_status deviceCheckPointer(tlc_module* m, const void* ptr, std::string* why);
void deviceUnload(tlc_module* m);

}  // namespace tlc::rt
