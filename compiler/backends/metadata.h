// Kernel metadata: the JSON description of a built module that the runtime
// (runtime/include/tlc/runtime.h) reads to find, check and launch kernels.
//
// Every backend embeds it with its binary: a CPU .so exports the NUL-terminated
// char array `tlc_module_metadata`; a CUDA .cubin gets `<out>.json` beside it;
// `tlc build --embed` puts it in the generated C source.
//
// Format (format_version 1), one object:
//   { "format": "tlc-module-metadata", "format_version": 1,
//     "tlc_version": "0.1.0", "target": "cpu" | "cuda:sm_90" | ...,
//     "binary": "so" | "cubin" | "hsaco",
//     "kernels": [ {
//        "name": "gemm", "symbol": "tlc_kernel_gemm",
//        "params": [ {"name": "A", "kind": "tensor", "dtype": "float16", "access": "read",
//                     "shape": [ "M", 64, {"expr": "M 2 *", "text": "M * 2"} ],
//                     "shape_names": [ null, "K", null ]},
//                    {"name": "alpha", "kind": "scalar", "dtype": "float32"} ],
//        "shape_symbols": [ {"name": "M", "dtype": "int32"} ],   // the kernel ABI's order
//        "bindings": [ {"name": "K", "value": "64"} ],
//        "grid": [ "N 127 + 128 //", "M 127 + 128 //" ],          // RPN, x first
//        "grid_text": [ "(N + 127) // 128", ... ],
//        "threads": 128, "block": [128, 1, 1], "shared_bytes": null,
//        "launches": [ ... ] } ] }                                  // device targets only
// A tensor's "access" says what the kernel does with it: "read", "write"
// (written and never read: an output a caller may leave to be allocated),
// "readwrite" or "none".
// A tensor dimension is an integer, a shape-symbol name, or an expression
// object. `shape_names` names the compile-time parameter a constant dimension
// was written as (for messages such as "expected shape (K=64, N)").
//
// Expressions are RPN strings of space-separated tokens: integers, names
// (shape symbols, scalar parameters, host lets), and the operators
//   + - * // % min max == != < <= > >= and or   (binary)
//   neg not                                       (unary)
//   select                                        (cond t f -> t or f)
// `//` and `%` are floor division and floor modulo, as in the tile IR.
//
// Device launches (CUDA/HIP): "launches" lists the device kernels of one
// function in launch order: {"entry", "grid": [3 RPN], "block": [3 ints],
// "shared_bytes", "tensor_maps"}; "tensor_maps" ({"param": i, "box": [ints,
// outermost first], "swizzle": bytes}) are 128-byte CUtensorMap arguments
// that the launcher encodes from tensor i's address and shape and passes
// after the device arguments (with "im2col": {"kernel", "stride", "pad",
// "dilation"}, each [h, w], a map in im2col mode over an (N, H, W, C)
// tensor whose "box" is [pixels, channels]: cuda/tensor_map.h), and "fallback" ({"entry", "block",
// "shared_bytes"} or null) is the kernel to launch instead, with the device
// arguments only, when one of them cannot be encoded;
// "persistent_blocks_per_sm" (0 when absent) > 0 marks a persistent kernel,
// launched as a 1-D grid of min(grid's product, SMs x that) blocks
// (cuda/persistent_grid.h), which loop over the grid's tiles themselves
// (its fallback is launched over "grid"); the fallback entries are
// functions of the module's binary, or, when the top-level
// "fallback_image" (base64 of a second code object, loaded when a launch
// first needs a fallback) is present, of that image; "device_args" lists the device-kernel arguments in order:
// {"kind": "param", "index": i} | {"kind": "symbol"|"let", "name", "dtype"};
// "host_lets" ({"name", "expr", "dtype"}) are evaluated in order before
// launching and may be used by later expressions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/ir/ir.h"
#include "compiler/support/source.h"

namespace tlc::meta {

// The version of tlc that wrote the metadata.
const char* tlcVersion();

// Serializes an integer expression over shape symbols, scalar parameters and
// host lets as RPN; nullopt when it uses something the runtime cannot
// evaluate (loads, calls, floats).
std::optional<std::string> exprToRpn(const ir::Expr& e);
// The same expression in infix form, for messages.
std::string exprToText(const ir::Expr& e);

// One device kernel launch of a function (filled in by a device backend).
struct DeviceLaunch {
  std::string entry;
  std::vector<ir::Expr> grid;  // 1 to 3 extents, x first
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  std::vector<cuda::TensorMapArg> tensorMaps;  // by value after the device arguments (Hopper TMA)
  // Launched instead, with the device arguments only, when a tensor map
  // cannot be encoded; empty entry: none.
  std::string fallbackEntry;
  int64_t fallbackThreads = 0, fallbackSharedBytes = 0;
  // > 0: launched persistently (cuda/persistent_grid.h) with this many blocks per SM.
  int64_t persistentBlocksPerSM = 0;
};

struct DeviceArg {
  enum class Kind { Param, Symbol, Let } kind = Kind::Param;
  int paramIndex = -1;  // Param
  std::string name;     // Symbol, Let
  DType dtype = DType::Int32;
};

struct DeviceLaunchPlan {
  std::vector<DeviceArg> args;
  std::vector<std::pair<ir::Var, ir::Expr>> hostLets;
  std::vector<DeviceLaunch> launches;
};

struct MetadataOptions {
  std::string target = "cpu";   // "cpu", "cuda:sm_90", "hip:gfx90a"
  std::string binary = "so";    // "so", "cubin", "hsaco"
  // The exported entry symbol of a function (CPU: cpu::cpuKernelSymbol); empty: none.
  std::function<std::string(const std::string& funcName)> symbolFor;
  // Device launch plans by function name (device targets).
  std::function<std::optional<DeviceLaunchPlan>(const std::string& funcName)> launchPlanFor;
  // When set, the source text of a constant tensor dimension is read to
  // recover the compile-time parameter it was written as.
  const SourceManager* sources = nullptr;
  // Device targets: the code object holding the launches' fallback entries,
  // when they were compiled apart from the binary (CUDA: a second cubin).
  std::string fallbackImage;
};

// The module's metadata as JSON text (pretty when `indent` >= 0).
std::string moduleMetadataJson(const ir::Module& module, const MetadataOptions& options, int indent = -1);

// Reads metadata back for tools and tests. Returns false and sets *error when
// the text is not metadata of a supported format version.
struct ParsedDim {
  enum class Kind { Const, Symbol, Expr } kind = Kind::Const;
  int64_t value = 0;
  std::string symbol;  // Symbol: name; Expr: RPN
  std::string boundName;
};
struct ParsedParam {
  std::string name;
  bool isTensor = false;
  std::string dtype;
  std::string access;  // tensors: "read", "write", "readwrite", "none"
  std::vector<ParsedDim> shape;
};
struct ParsedKernel {
  std::string name;
  std::string symbol;
  std::vector<ParsedParam> params;
  std::vector<std::string> shapeSymbols;
  std::vector<std::pair<std::string, std::string>> bindings;
  std::vector<std::string> grid;
  int64_t threads = 0;
};
struct ParsedModule {
  std::string tlcVersion;
  std::string target;
  std::string binary;
  std::string fallbackImage;  // decoded; empty when the fallbacks are in the binary
  std::vector<ParsedKernel> kernels;
};
bool parseModuleMetadata(const std::string& json, ParsedModule* out, std::string* error);

}  // namespace tlc::meta
