// Pass cpu-select-stores: a guarded store of a vector loop into a block's
// own buffer becomes an unconditional store of a select.
//
// `for j in vectorized(0 : +64) { if j == arg[i] { x[i, j] = -inf } }` (a
// top-k masking the element it took) left as it is, LLVM sees a store to
// `x[i, j]` under `j == arg[i]`, rewrites its address as `x[i, arg[i]]`, and
// vectorizes the loop into masked scatters to that one address, one per 16
// lanes: slower than the scalar loop. As
// `x[i, j] = select(j == arg[i], -inf, x[i, j])` the loop is a load, a
// compare, a blend and a store per vector.
//
// Rewritten: in the body of a Vectorized loop over v, an `if` without
// `else` whose block is one Store to a local buffer (a block's own memory
// after cpu-block-local-storage: no other block or thread sees it) with
// every index a constant or the variable of an enclosing loop of the
// kernel whose range lies inside that dimension (so the element exists in
// every iteration, whatever the condition), v among them (so no two
// iterations store to one element).
//
// Assumes: cpu-block-local-storage has run.
// Guarantees: the same values: where the condition is false the element is
// stored its own value, which only this iteration accesses.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module selectGuardedStores(const ir::Module& m);

}  // namespace tlc::cpu
