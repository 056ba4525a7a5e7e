// Index patterns of lowered tile IR that the CPU backend's memory rules
// (streaming_stores.h, next_block_prefetch.h) look for.
#pragma once

#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

// Whether `e` refers to the variable `v`.
bool usesVar(const ir::Expr& e, const ir::VarNode* v);

// Whether consecutive values of `v` address consecutive elements: the last
// index is `v`, `x + v` or `v + x` with x free of v, and the other indices are
// free of v.
bool contiguousIn(const std::vector<ir::Expr>& indices, const ir::VarNode* v);

}  // namespace tlc::cpu
