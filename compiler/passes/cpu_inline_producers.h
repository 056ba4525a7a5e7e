// Pass cpu-inline-producers: loops that compute a block-local buffer element
// by element are folded into the statements that read it.
//
// A producer is a nest of loops whose body stores one element of a
// block-local buffer x at the loop variables (`for i, j: x[i, j] = e`,
// possibly under lets of its own), the loops starting at 0 and covering x's
// shape (unit dimensions indexed by 0); e does not read x. In the statement
// list holding it, every later read `x[a, b]` of a statement up to the next
// one that overwrites all of x (a producer of x that reads x only at the
// element it stores) is replaced by e with (i, j) := (a, b), and the
// producer is deleted, when:
//   - no statement before the last such read writes a buffer e reads (so e
//     has the same value where it is read), and x is read by plain loads only
//     (not through a cpu.* intrinsic, which may also write it);
//   - without a later overwrite, nothing after the list can read what the
//     producer stored: the statements after it, the next iteration of each
//     loop around it and what follows those loops, up to x's allocation,
//     overwrite x before they read it, or do not read it;
//   - e is cheap (no call, at most three float operations: a copy's load and
//     conversion, a mask's select), or it is read at one place, inside loops
//     whose variables all index x there (each element computed once);
//   - a load of e that was contiguous along the producer's innermost loop is
//     contiguous (or invariant) along the innermost loop around each read:
//     a copy staged in shared memory to read it transposed stays staged.
// A read in a branch of a select (`T.if_then_else(j < N, x[i, j], -inf)`),
// which the backend evaluates lazily, would put e's loads under the
// condition, where the vectorizer can only mask them: when the read's
// indices provably lie inside x, e is bound by a let in front of the reading
// statement instead, computed for every element as the producer did (such
// lets make the statement a producer with lets, when it is one). A producer
// with lets is inlined only where they can be bound: in stores and
// evaluates, and under a select only at indices inside x.
// Buffers left without accesses lose their allocation. A nest of Parallel
// loops storing to several buffers, one of them block-local (`x = x + r;
// sq = x * x`), is first split into one nest per store (its iterations are
// independent); the split stays only if some producer was inlined.
// cpu-hoist-fast-paths puts the fast loops of copies next to their readers
// first; a copy, an elementwise loop and the copy out of a fragment then
// become one loop, and a copy followed by a reduction one pass over the
// tensor.
//
// Assumes: a verified module whose copies, fills and reductions are lowered.
// Guarantees: the same results (float operations are neither reassociated nor
// contracted beyond what the backend does anyway).
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module inlineProducers(const ir::Module& m);

}  // namespace tlc::cpu
