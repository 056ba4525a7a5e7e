// Layout planning of one kernel for the CUDA backend: where the elements of
// every shared and fragment buffer live, honouring the kernel's layout
// annotations (T.annotate_layout, ir::AnnotateLayoutStmt) as strict
// constraints.
//
//   1. tensor-core gemms (planMma, cuda_mma.h) give their fragment
//      accumulators the fixed mma.sync layout and their 16-bit shared
//      operands the XOR swizzle;
//   2. annotations of shared buffers override the swizzle: `swizzled` gives
//      any two-dimensional shared buffer with 16-byte rows the swizzle
//      (layout::Layout::swizzled), `row_major` removes it; a fragment
//      annotated `shared_fallback` is no register accumulator;
//   3. the other fragments get row-group layouts (inferFragmentLayouts,
//      cuda_fragment_layout.h); an annotated group takes the annotated
//      parameters or is reported as a conflict.
// Every layout the plan picks is one the emitter lowers: swizzled and
// row-major shared buffers are addressed through their layout by every
// access (ldmatrix and cp.async included), so a shared annotation never
// conflicts once the verifier accepted it (two dimensions, 16-byte rows).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/backends/cuda/cuda_fragment_layout.h"
#include "compiler/backends/cuda/cuda_hopper.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/support/diagnostics.h"

namespace tlc::cuda {

struct KernelLayoutPlan {
  LayoutAnnotations annotations;
  // Fragments held in registers with the mma.sync accumulator layout.
  std::unordered_map<const ir::BufferNode*, MmaFragment> accumulators;
  // Shared buffers with a swizzled layout (the others are row-major).
  std::unordered_map<const ir::BufferNode*, layout::Layout> sharedLayouts;
  // The kernel's warp-specialized Hopper mainloop (cuda_hopper.h), when its
  // accumulator got the wgmma warp grid. Its operand tiles are laid out as
  // TMA writes them (not in sharedLayouts); the layout inference pass leaves
  // them unannotated.
  std::optional<HopperMainloop> hopper;
  // The TMA operand whose tile is `b`, or null.
  const HopperOperand* tmaOperand(const ir::BufferNode* b) const { return hopper ? loopTile(*hopper, b) : nullptr; }
  // The gemms that run as wgmma in place (sm_90a); their shared operand
  // tiles have the panel layout (in sharedLayouts), which the layout
  // inference pass leaves unannotated too.
  std::vector<WgmmaGemm> wgmma;
  const HopperOperand* wgmmaOperand(const ir::BufferNode* b) const { return wgmmaTile(wgmma, b); }
  FragmentLayoutPlan fragments;
  // Annotations that no layout satisfies (empty when the plan is usable).
  std::vector<LayoutConflict> conflicts;
};

// The layout annotations of `kernel`, by buffer (the verifier allows one each).
LayoutAnnotations collectLayoutAnnotations(const ir::KernelStmt& kernel);

// Plans the layouts of `kernel` run by `threads` threads; `gemms` are its
// block-level gemms and `writtenInParallel` the buffers written inside
// Parallel loops (see planMma).
KernelLayoutPlan planKernelLayouts(const ir::KernelStmt& kernel, const std::vector<const ir::GemmStmt*>& gemms,
                                   int64_t threads, const CudaOptions& options,
                                   const std::unordered_set<const ir::BufferNode*>& writtenInParallel);

// The same for a whole kernel: its block-level gemms and the buffers its
// Parallel loops write are found by a walk over its body (KernelScan).
KernelLayoutPlan planKernelLayouts(const ir::KernelStmt& kernel, const CudaOptions& options);

// Reports every conflict as a `cuda-layout-conflict` error with its notes;
// true when there was any.
bool reportLayoutConflicts(const KernelLayoutPlan& plan, DiagnosticEngine& diags);

// The plan as text, one line per shared or fragment buffer the kernel
// allocates (outside Parallel loops), in order:
//   A_s [128, 32]: shared memory, swizzled
//   B_s [32, 128]: shared memory, row-major [annotated: row_major]
//   C_f [128, 128]: registers, fixed layout
//   X_f [64, 128]: registers, tile of group 0 (64 x 128 over 128 threads: 8 threads per row, runs of 4; 64 registers)
//   m [64]: registers, row vector of group 0 (4 registers)
//   S [32, 32]: shared memory (<why>)
// Printed by `--print-after-all` on cuda targets and checked by
// tests/cuda/layouts/*.tir.
std::string describeKernelLayouts(const ir::KernelStmt& kernel, const KernelLayoutPlan& plan);

}  // namespace tlc::cuda
