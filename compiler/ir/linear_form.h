// Integer index expressions as linear forms: a constant plus a sum of terms,
// each an integer coefficient times an expression that is not a sum, a
// difference, a negation or a product with a constant (compared
// structurally). Lets a slice `A[k * 64:(k + 1) * 64]` see that its extent
// is the constant 64, which no constant folding of `(k + 1) * 64 - k * 64`
// finds. Index arithmetic is assumed not to overflow.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::ir {

struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;  // (term, coefficient), coefficients non-zero
  int64_t constant = 0;
};

// The linear form of an integer expression (every expression has one; a
// term may be the whole expression).
LinearForm linearForm(const Expr& e);

// The coefficient of the variable `v` in `e` (0 when `e` does not use it),
// or nullopt when `v` appears inside a term (`floordiv(v, 2)`, `v * n`).
std::optional<int64_t> coefficientOf(const Expr& e, const VarNode* v);

// `a - b` when it is a constant (the terms of the two cancel), else nullopt.
std::optional<int64_t> constantDifference(const Expr& a, const Expr& b);

// A positive number that the integer `e` is known to be a multiple of (1
// when nothing is known; at most 2^40): constants, products by constants,
// sums and differences, floormod by a constant (whose result keeps the
// common factor) and integer casts that keep the value.
int64_t knownMultiple(const Expr& e);

}  // namespace tlc::ir
