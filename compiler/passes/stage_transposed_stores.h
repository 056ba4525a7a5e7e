// stage-transposed-stores: a Parallel nest that reads global memory along
// its inner loop and writes global memory along its outer one (a transpose
// written element by element, `B[bx * b + j, by * b + i] = A[by * b + i,
// bx * b + j]`) goes through a shared tile, so that both the reads and the
// writes run along rows.
//
// Assumes: a verified module.
//
// Guarantees: a nest `for i in parallel(0 : +R) { for j in parallel(0 : +C)
// { S } }` at block level in a kernel (not inside another Parallel loop,
// nor inside a Pipelined loop, whose plan numbers its statements),
// with R and C constants, whose body S is one store `G[idx] = v` to a global
// tensor, or such a store under an `if` without `else`, becomes
//     alloc G_t: shared <G's dtype>[R, C]
//     for i, j in parallel(R, C): [if cond:] G_t[i, j] = v
//     for j', i' in parallel(C, R): [if cond':] G[idx'] = G_t[i', j']
// (primed: with i', j' for i, j) when
//  - G's last index moves with i alone (coefficient 1, j absent) and some
//    other index of G uses j: consecutive i write consecutive elements;
//  - `v` or the condition reads a global tensor whose last index moves with
//    j alone (coefficient 1): consecutive j read consecutive elements;
//  - neither reads G, and R and C each span at least 16 bytes of G's type;
//  - the tile, with a 16-byte pad per row, takes at most kMaxTransposeBytes.
// The values stored are the same: each element is computed once, under the
// same condition, converted to G's type as the store did, and written by
// the second nest under the condition again. The loop order of the second
// nest puts i innermost, which the backends vectorize along G's rows.
#pragma once

#include <cstdint>

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

constexpr int64_t kMaxTransposeBytes = 32 * 1024;

ir::Module stageTransposedStores(const ir::Module& m, PassContext& ctx);

}  // namespace tlc::passes
