// hoist-guarded-copies: the loads of a guarded group of a Pipelined loop's
// body move out of its guard, so that pipeline-planning can load them ahead.
//
// Assumes: a verified module; runs before pipeline-planning.
//
// A block-sparse gemm skips the tiles its mask marks empty:
//     for k in T.Pipelined(n, num_stages=3):
//         if Mask[by, k]:
//             T.copy(A[by * bm, k * bk], A_s)
//             T.copy(B[k * bk, bx * bn], B_s)
//             T.gemm(A_s, B_s, C_f)
// The `if` is one statement, which pipeline-planning cannot split: the
// loop would run unpipelined, each iteration waiting for its own copies.
// This pass rewrites the body as
//         T.copy(A[by * bm, k * bk], A_s)      (used_when=Mask[by, k])
//         T.copy(B[k * bk, bx * bn], B_s)      (used_when=Mask[by, k])
//         if Mask[by, k]:
//             T.gemm(A_s, B_s, C_f)
// which pipelines: a skipped iteration still loads its tiles (they are not
// used), and one it keeps has them ready before it starts. With the tensor
// cores doing only the kept tiles' work, that is faster than waiting for
// each kept tile's copies unless very few tiles are kept.
//
// Guarantees: only in Pipelined loops of 2 or more stages whose plan the
// user did not write (no order, stage or group), and only copies from
// global to shared memory that stand directly in the `then` block of an
// `if` without `else` among the loop body's statements, and that
//  - fill a whole tile that no statement of the loop outside that block
//    accesses, that no statement of the block before the copy accesses, that
//    only the copy writes, that the condition does not read, and that is not
//    read after the loop (readsAfterLoops);
//  - read a tensor the loop does not write, at a region that uses no
//    variable the loop body binds and reads no memory but tables.
// Such a copy moves, in order, before its `if`; when the condition uses
// nothing the loop body binds and reads only tables, it goes with the copy as
// its `used_when` (ir.h: CopyStmt::usedWhen), so that a target may skip the
// copy where the tile would not be read (the CUDA backend's Hopper producer
// then issues no TMA copy for a skipped stage). A tile it fills is read only
// inside the `if`, where the copy ran before; where the condition is false
// nothing reads the tile before the next iteration overwrites it, nor after
// the loop; reading the source has no effect (copies read out-of-bounds
// elements as zeros). So every value the program computes is unchanged.
// An `if` whose block is left empty is removed.
#pragma once

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

ir::Module hoistGuardedCopies(const ir::Module& m, PassContext& ctx);

}  // namespace tlc::passes
