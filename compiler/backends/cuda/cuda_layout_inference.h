// cuda-layout-inference: writes the CUDA backend's layout plan into the tile
// IR, as `annotate_layout` statements.
//
// Assumes: a verified module; the kernels' shared and fragment buffers
// allocated directly in the kernel body (not in loops) are the ones it
// annotates.
//
// Guarantees: after every such allocation stands one `annotate_layout` of
// its buffer: the user's own, kept, or the layout the plan chose
// (planKernelLayouts, cuda_layout_plan.h):
//   shared buffers   swizzled | row_major
//   fragments        mma_accumulator (a tensor-core gemm's accumulator in
//                    registers) | row_groups(G, V) (registers, the group's
//                    row-group layout)
// except fragments the plan leaves in shared memory: they stay unannotated,
// so that planning them again finds the same fallback and its reason (which
// the emitted code and --print-after-all state).
// Results do not change: a layout only places elements. Planning the
// annotated kernel again gives the same plan, which is how the backend reads
// it. When no layout satisfies the user's annotations, the located
// `cuda-layout-conflict` errors are reported and the pipeline stops.
#pragma once

#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::cuda {

ir::Module inferLayouts(const ir::Module& m, passes::PassContext& ctx, const CudaOptions& options);

// The pass for a pipeline, planning for `options` (the target GPU).
passes::Pass layoutInferencePass(const CudaOptions& options);

}  // namespace tlc::cuda
