// Index arithmetic shared by the CPU lowering passes: buffer strides, the part
// of a region that lies inside its buffer, bounds conditions folded where they
// are provable, and structural equality of index expressions.
#pragma once

#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

// Row-major strides (in elements) of a buffer, innermost = 1, as int64 exprs.
std::vector<ir::Expr> rowMajorStrides(const ir::Buffer& b);

// True when two expressions are the same tree (same constants, same variables).
bool sameExpr(const ir::Expr& a, const ir::Expr& b);

// Integer comparisons that fold when both sides are constants or when the
// sides are the same expression (a <= a); otherwise build the comparison.
ir::Expr foldLe(ir::Expr a, ir::Expr b);
ir::Expr foldGe(ir::Expr a, ir::Expr b);
bool isTrue(const ir::Expr& cond);

// The loop bounds [lo, hi) of offsets i in [0, extent) for which
// 0 <= min + i < shape, i.e. lo = max(0, -min), hi = max(lo, min(extent, shape - min)).
struct ValidSpan {
  ir::Expr lo, hi;
};
ValidSpan validSpan(const ir::Range& r, const ir::Expr& shape);

// Condition that 0 <= index < shape (folded where provable).
ir::Expr inBounds(const ir::Expr& index, const ir::Expr& shape);

// Condition that the whole region lies inside its buffer.
ir::Expr regionInBounds(const ir::Region& r);

// index clamped into [0, shape - 1].
ir::Expr clampIndex(const ir::Expr& index, const ir::Expr& shape);

// The number of elements of a region's range that lie in the buffer, assuming
// the range starts inside the buffer or before it: max(0, min(extent, shape - min)).
ir::Expr validExtent(const ir::Range& r, const ir::Expr& shape);

// Converts an integer expression to int64 (no-op when it already is).
ir::Expr toI64(const ir::Expr& e);

}  // namespace tlc::cpu
