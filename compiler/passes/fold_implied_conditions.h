// fold-implied-conditions: integer comparisons that the conditions of the
// enclosing ifs and the ranges of the enclosing loops decide become
// constants.
//
// Assumes: a verified module. Index arithmetic (int32/int64) does not
// overflow (as `simplify` assumes).
//
// Guarantees: the same values and effects. A comparison `a < b` (or <=, >,
// >=) of integer expressions that are linear in variables (sums of
// variables times constants, through widening casts and the lets that bind
// them) is replaced by `true` when some fact `F <= 0` makes `a - b + 1 <= 0`
// follow from bounds alone: `(a - b + 1) - F` has a constant upper bound of
// at most 0 once each variable left in it is replaced by its loop range
// (constant min and extent). By `false` when the same holds for its
// negation. The facts are, in the body of `if C`, each conjunct of C that is
// such a comparison (read only variables: no loads); in a loop over
// `v in [m, m + e)`, `m <= v` and `v < m + e`; for a kernel's block index
// `0 <= bx < grid`. Then `select(true, x, y)` becomes x, `true and c` c,
// `if true` its body, and so on; nothing else changes.
//
// Why: the fast path of a copy or a reduction on the CPU runs under
// `if [likely] k * 1024 + 1024 <= N` (cpu-hoist-fast-paths), yet each
// element of it still tests the user's edge mask `k * 1024 + j < N`
// (`T.if_then_else(k * block_N + j < N, x, -inf)`): a vector compare and
// select per element that LLVM does not remove (the row maximum of float16
// data built its masks in 64-bit lanes).
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::passes {

ir::Module foldImpliedConditions(const ir::Module& m);

}  // namespace tlc::passes
