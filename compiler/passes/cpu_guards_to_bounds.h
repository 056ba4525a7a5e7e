// Pass cpu-guards-to-bounds: takes the guards of vector loops out of their
// bodies.
//
// Users guard the elements of a Parallel loop that fall outside a tensor
// (`if r < M and c < N: Y[r, c] = ...`) and compute per-row values inside it
// (`src = index[r]`). Left in the body of a vectorized loop, the guard makes
// every access a masked one, a read of a row-wide value (`gamma[c]`,
// `index[r]`) a masked gather, and an address through such a value
// (`X[src, c]`) a gather, since LLVM cannot prove the value is the same in
// every iteration. For each Vectorized loop over v whose body is a chain of
// lets and if-without-else statements (the guard's parts joined by `and`):
//   - a part that does not depend on v (nor on a let that does) becomes an
//     `if` around the loop;
//   - a part `A + v < B` (also `<=`, `>`, `>=`, either side, A free of v)
//     narrows the loop's range instead;
//   - a let whose value does not depend on v and reads no buffer that the
//     loop writes moves before the loop (when it reads memory or divides by a
//     variable, only under a test that the narrowed range is not empty, so it
//     runs only when the original would have run it);
//   - parts that are neither stay in an `if` in the body.
// A part that reads memory moves only when every part before it moved too
// (`and` evaluates its right side only when the left is true).
//
// Assumes: cpu-map-loops has run (Vectorized loops are innermost).
// Guarantees: the same stores and loads happen, in the same order within an
// iteration; the loop visits only the values of v that passed the moved parts.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module moveGuardsToBounds(const ir::Module& m);

}  // namespace tlc::cpu
