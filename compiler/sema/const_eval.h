// Compile-time evaluation: constant folding of scalar IR expressions and
// symbolic comparison of shape extents.
//
// The fold* functions build the IR node for an operation and fold it to an
// IntImm/FloatImm when every operand is a constant. They assume the operands
// already have the dtypes the operation needs (sema's type rules insert the
// casts) and that an integer divisor folded here is not zero (sema reports
// division by zero before folding). Integer results wrap to the width of
// their dtype, so folding never has undefined behaviour.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::sema {

bool isConstant(const ir::Expr& e);
std::optional<int64_t> constIntValue(const ir::Expr& e);
std::optional<double> constFloatValue(const ir::Expr& e);  // of an IntImm or FloatImm

// An integer constant wrapped to the width of `t` (bool: 0 or 1).
int64_t wrapToDType(int64_t v, DType t);

ir::Expr foldBinary(ir::BinaryOp op, ir::Expr a, ir::Expr b, SourceLoc loc);
ir::Expr foldUnary(ir::UnaryOp op, ir::Expr a, SourceLoc loc);
ir::Expr foldCast(DType t, ir::Expr v, SourceLoc loc);
ir::Expr foldSelect(ir::Expr cond, ir::Expr t, ir::Expr f, SourceLoc loc);
// A call of a pure math builtin (exp, log, ...); folded on float constants.
ir::Expr foldMathCall(const std::string& callee, std::vector<ir::Expr> args, DType t, SourceLoc loc);

// Whether two integer extents are equal for every value of the shape
// variables: Equal and Different are proofs (over linear forms with integer
// coefficients); Unknown when neither could be shown.
enum class Equality { Equal, Different, Unknown };
Equality compareExtents(const ir::Expr& a, const ir::Expr& b);
// a - b when it is one constant for every value of the shape variables.
std::optional<int64_t> constantDifference(const ir::Expr& a, const ir::Expr& b);
// Whether e is q * m, for one integer q, for every value of the shape
// variables (0 is a multiple of everything; `k * 64` of 64 and of 32;
// `by * bm` of `bm`).
bool provablyMultipleOf(const ir::Expr& e, const ir::Expr& m);

// Source-like text of an expression or a shape, for messages: "(block_M, 32)".
std::string formatExpr(const ir::Expr& e);
std::string formatShape(const std::vector<ir::Expr>& shape);

}  // namespace tlc::sema
