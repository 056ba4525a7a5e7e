// The CPU lowering pipeline: tile IR -> tile IR the LLVM CPU backend consumes.
//
// Order and why:
//   drop-layout-annotations first: layouts change no value, and CPU buffers
//                           are plain row-major
//   cpu-coarsen-k           matches gemm loops on the tile operations
//   cpu-group-blocks        after cpu-coarsen-k (which matches one block's
//                           loop), on the tile operations
//   cpu-split-block-rows    on the tile operations (a copy's rows are one
//                           range to narrow)
//   cpu-lower-gemm          first: clear_accum becomes a Fill, lowered next
//   cpu-lower-copy-fill     copies and fills -> Parallel loops with masks
//   cpu-lower-reduce        reductions -> loops over a local accumulator
//   cpu-lower-atomics       atomics -> cpu.atomic_* intrinsics
//   cpu-map-loops           after every producer of Parallel loops: innermost
//                           Parallel -> Vectorized, Pipelined -> Serial
//   cpu-guards-to-bounds    after cpu-map-loops: guards of Vectorized loops
//                           -> loop bounds and ifs around the loop
//   cpu-block-local-storage last: sees every Alloc, including the
//                           accumulators the reduce lowering adds
// The module is verified before and after every pass (PassPipeline).
#pragma once

#include <optional>

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::cpu {

struct CpuLoweringOptions {
  bool printAfterAll = false;  // --print-after-all
  bool timePasses = false;     // --time-passes
  // The threads that will run the kernels (cpu-group-blocks keeps two
  // groups of blocks per thread) and the L2 cache of one core (a group's
  // buffers take at most half); 0: this machine's.
  int threads = 0;
  int64_t l2Bytes = 0;
  // The L1 data cache of one core: cpu-split-block-rows keeps a block's
  // tiles of independent rows within a quarter of it; 0: this machine's.
  int64_t l1Bytes = 0;
};

// The pipeline's passes, in order.
passes::PassPipeline cpuPipeline(const CpuLoweringOptions& options);

// Runs the pipeline; nullopt when a pass reported an error.
std::optional<ir::Module> lowerForCpu(const ir::Module& m, passes::PassContext& ctx,
                                      const CpuLoweringOptions& options);

}  // namespace tlc::cpu
