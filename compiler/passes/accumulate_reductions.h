// accumulate-reductions: folds a reduction into a temporary, followed by the
// temporary's elementwise accumulation into another buffer, into one
// accumulating reduction.
//
// Assumes: a verified module.
//
// Guarantees: in a sequence of statements,
//     reduce_<kind>(X, P, dim=d)                  (clear)
//     for j0, j1, ... in parallel(P's shape):
//         A[j0, j1, ...] = A[j0, j1, ...] <op> P[j0, j1, ...]
// with <op> the reduction's combine (`+` for sum and abs-sum, `max` for max
// and abs-max, `min` for min; either operand order) becomes
//     reduce_<kind>(X, A, dim=d, clear=false)
// and P's allocation goes, when P and A are fragments of one shape and one
// element type wider than 16 bits (so no rounding step of P disappears) and
// the kernel touches P nowhere else. The values are the same: a clear=False
// reduction combines the destination with the reduced values.
//
// Why: an accumulating reduction in a loop whose destination nothing else in
// the loop reads lets the CUDA backend keep each thread's partial result
// through the iterations and combine across threads once, after the loop
// (docs/cuda-backend.md, register reductions); the temporary form combines
// across threads in every iteration.
#pragma once

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

ir::Module accumulateReductions(const ir::Module& m, PassContext& ctx);

}  // namespace tlc::passes
