// Tile IR -> CUDA C for sm_80 and newer.
//
// Assumes a verified module whose compile-time parameters are bound. Every
// Kernel statement becomes one `extern "C" __global__` function; statements
// of a function outside its kernels may only be scalar `let`s, evaluated on
// the host. The generated source includes the embedded helper header
// "tlc_cuda.h" and is compiled by NVRTC.
//
// The lowering keeps the IR's per-block semantics on a block of `threads`
// threads:
//  - Parallel loop nests are flattened and partitioned over the threads
//    (thread t runs iterations t, t + threads, ...), with a predicated tail.
//  - Shared buffers live in one dynamic shared-memory allocation (offsets
//    chosen by the shared-memory planner with reuse of dead buffers).
//    Fragment buffers whose every use fits the mma.sync accumulator layout
//    (gemm accumulator, fills, element-wise Parallel loops, copies) live in
//    registers; other fragments live in shared memory.
//    Local/var buffers are per-thread registers when no Parallel loop writes
//    them (every thread then holds the same value); otherwise shared memory.
//  - Copies are partitioned into 16-byte vector accesses where the innermost
//    run is contiguous and aligned (checked at run time), with masked scalar
//    accesses for tails; global->shared copies use cp.async.
//  - Gemm with shared operands and float16/bfloat16/float32/int8 inputs uses
//    ldmatrix + mma.sync over a warp grid; other gemms are computed element
//    by element. Reductions use per-thread partials, warp shuffles and
//    shared memory.
//  - Pipelined loops whose bodies start with global->shared copies are
//    software pipelined: num_stages buffer versions, cp.async groups.
//  - __syncthreads() is inserted between statements when one writes memory
//    visible to other threads that the other reads or writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::cuda {

// One kernel argument, in launch order.
struct KernelArg {
  enum class Kind { Tensor, Scalar, ShapeVar, HostLet } kind;
  int paramIndex = -1;  // Tensor, Scalar: index into PrimFunc::params
  ir::Var var;          // Scalar, ShapeVar, HostLet
  DType dtype = DType::Int32;
};

struct KernelLaunch {
  std::string name;
  SourceLoc loc;  // the kernel's `T.Kernel`
  std::vector<ir::Expr> grid;  // over shape vars, scalar params and host lets
  int64_t threads = 0;
  int64_t sharedBytes = 0;  // dynamic shared memory
  // Arguments after the function's: the kernel's tensor maps, by value.
  std::vector<TensorMapArg> tensorMaps;
  // A kernel with tensor maps whose tensors' strides are known only at
  // launch also has a version without TMA, launched when a map cannot be
  // encoded (a stride or address that is not a multiple of 16 bytes) and
  // its tensor is not staged (TensorMapArg::stage); it takes the function's
  // arguments only. Empty: none.
  std::string fallbackName;
  int64_t fallbackThreads = 0, fallbackSharedBytes = 0;
  // > 0: a persistent kernel (CudaOptions::persistent), launched as a 1-D
  // grid of persistentGridSize(product of `grid`, SMs, this) blocks
  // (persistent_grid.h); its fallback is launched over `grid` as usual.
  int64_t persistentBlocksPerSM = 0;
};

struct FuncLaunch {
  std::string funcName;
  std::vector<KernelArg> args;
  std::vector<std::pair<ir::Var, ir::Expr>> hostLets;  // evaluated in order before launching
  std::vector<KernelLaunch> kernels;                   // launched in order
};

// The generated CUDA C of a module. `source` holds every kernel (what `tlc
// emit` prints, the emulator runs and PTX is made of); the same kernels are
// also split into two translation units that NVRTC compiles as separate
// programs, concurrently: `primarySource`, the kernels every launch starts
// with, and `fallbackSource`, the versions without TMA (empty when no kernel
// has one), which only launches whose tensors TMA cannot describe need, so
// that `tlc run` and `tlc tune` compile it only then. A kernel's code does not
// depend on the other kernels of its program: the split leaves each one's
// machine code as it was.
struct CudaModule {
  std::string source;
  std::string primarySource, fallbackSource;
  std::vector<FuncLaunch> funcs;
};

// Generates CUDA C; reports located errors (cuda-unsupported, ...) and
// returns nullopt when the module cannot be lowered.
std::optional<CudaModule> generateCuda(const ir::Module& module, const CudaOptions& options, DiagnosticEngine& diags);

}  // namespace tlc::cuda
