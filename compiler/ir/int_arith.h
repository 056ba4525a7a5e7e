// Integer arithmetic with the tile IR's semantics, shared by everything that
// evaluates integer constants (the verifier's shape checks, simplify): values
// wrap at their dtype's width (two's complement), division and modulo are
// floor division / floor modulo, and undefined operations (division by zero,
// INT64_MIN / -1, shifts by a negative amount or by the width or more) have
// no value.
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/ir/ir.h"

namespace tlc::ir {

// Truncates to the dtype's width and sign- or zero-extends back (bool: 0 or 1).
int64_t wrapToDType(uint64_t bits, DType t);
// `x op y` for integer or bool operands of dtype `t` (comparisons give 0/1).
std::optional<int64_t> foldIntBinary(BinaryOp op, int64_t x, int64_t y, DType t);
// `x op y` for integer operands of dtype `t` without wrapping: `overflow`
// when the exact result of + - * // % or << lies outside `t`'s range (for
// compile-time evaluation, which reports it instead of wrapping); otherwise
// `value` is foldIntBinary's.
struct CheckedInt {
  std::optional<int64_t> value;
  bool overflow = false;
};
CheckedInt checkedIntBinary(BinaryOp op, int64_t x, int64_t y, DType t);
// Whether `v` is a value of the integer dtype `t`.
bool fitsDType(int64_t v, DType t);
// The value of an integer expression made of literals, binary and unary
// operators and integer casts only; nullopt when it depends on anything else.
std::optional<int64_t> evalConstInt(const Expr& e);

}  // namespace tlc::ir
