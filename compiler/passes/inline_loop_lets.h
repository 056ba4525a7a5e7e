// inline-loop-lets: substitutes the scalar lets of a Pipelined loop's body
// that read no memory into the statements they bind, so that each statement
// of the body is a pipeline statement of its own.
//
// Assumes: a verified module.
//
// Guarantees: in the body of every Pipelined loop (its top-level statement
// sequence), a `let v = e` whose value calls no target intrinsic and reads
// no memory but tables, global tensors the loop never writes (arithmetic on
// the loop variable, block indices and shape variables: `k0 = k * block_K`;
// a page-table lookup `p = block_table[b, k]`) is removed, and `e` takes the
// place of `v` in the statements it bound; the statements it held join the
// loop body's sequence. A let whose value reads memory the loop writes
// stays. The values computed are the same: `e` is evaluated where `v` was
// read, and nothing it depends on changes in between.
//
// Why: a let binds the statements after it, so a body written as
//     for k in T.Pipelined(n, num_stages=3):
//         k0 = k * block_K
//         T.copy(A[by * block_M, k0], A_s)
//         ...
// is one statement to pipeline-planning, which then plans it unpipelined.
#pragma once

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

ir::Module inlineLoopLets(const ir::Module& m, PassContext& ctx);

}  // namespace tlc::passes
