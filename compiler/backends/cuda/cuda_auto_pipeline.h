// cuda-auto-pipeline: a serial loop at block level whose body loads tiles
// from global into shared memory runs as a 2-stage pipeline, as if written
// `T.Pipelined(n, num_stages=2)`: the loads of the next iteration overlap
// this one's work (cp.async stages, or the TMA producer warpgroup on sm_90a).
//
// Assumes: a verified module after pipeline-planning.
//
// Guarantees: a `serial` loop inside a kernel, outside Parallel and Pipelined
// loops, with no Pipelined loop, break or continue in its body, becomes a
// Pipelined loop with 2 stages and pipeline-planning's default plan when
//  - that plan puts some statement ahead (a global->shared copy or a gather
//    nest) and the CUDA backend runs it pipelined (pipelineSchedule),
//  - the loop writes none of the global tensors its stage-0 copies read (a
//    load ahead would otherwise pass a write program order puts first), and
//  - the kernel's shared buffers (constant shapes, counted without reuse)
//    with the added tile versions stay within `sharedBudget` bytes.
// Values are unchanged: each iteration reads its own version of the tiles.
// Loops written `T.Pipelined(n, num_stages=1)` stay unpipelined.
#pragma once

#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::cuda {

ir::Module autoPipeline(const ir::Module& m, int64_t sharedBudget);

// The pass, with half of the target's shared memory per block as the budget.
passes::Pass autoPipelinePass(const CudaOptions& options);

}  // namespace tlc::cuda
