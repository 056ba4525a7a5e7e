// Structural equality of tile-IR expressions: same kinds, dtypes, operators,
// constants and children; variables and buffers compare by identity.
// Locations are ignored.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::ir {

bool structurallyEqual(const Expr& a, const Expr& b);
// Element by element (index lists, call arguments).
bool structurallyEqual(const std::vector<Expr>& a, const std::vector<Expr>& b);

}  // namespace tlc::ir
