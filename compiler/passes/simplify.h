// simplify: target-independent algebraic simplification of the tile IR.
//
// Assumes: a verified module. Integer arithmetic wraps at its dtype's width
// (two's complement); integer division and modulo are floor division/modulo.
//
// Guarantees: the result computes the same values and has the same effects,
// and still verifies. It
//  - folds operations on constants: integer arithmetic at the dtype's width,
//    comparisons, logic, casts, and float32/float64 arithmetic and
//    comparisons done in the dtype's own precision (never division by zero
//    for integers, never a shift out of range, nothing on float16/bfloat16/
//    float8 values but negation);
//  - applies exact identities: x+0, x-0, x*1, x*0, floordiv(x,1),
//    floormod(x,1), x-x, min(x,x), x==x for integers; x*1.0, x/1.0, x-0.0
//    for floats (never x+0.0, x*0.0, nor any reassociation of floats);
//    true/false in and/or; double negation; select with a constant
//    condition or equal arms; integer constant chains (x+1)+2 -> x+3,
//    (x*2)*4 -> x*8, floordiv(x*8, 4) -> x*2 (this one assumes the product
//    does not overflow, as index arithmetic does not), with constants moved
//    to the right of commutative integer operators;
//  - decides comparisons, min/max, floordiv and floormod of int32/int64
//    index expressions from the ranges of loop variables ([min, min+extent)),
//    kernel block variables ([0, grid)) and lets (interval arithmetic over
//    + - * floordiv floormod min max, assuming index arithmetic does not
//    overflow): `0 <= bx * 32 + i` becomes true inside the loops;
//  - removes `if` with a constant condition, loops whose extent is a
//    constant <= 0, loops and ifs with empty bodies, evaluations of
//    side-effect-free expressions, lets whose variable is unused, and
//    copies/fills of empty regions;
//  - replaces loops of extent 1 (except pipelined ones, whose annotations
//    later passes read) by their body with the loop variable substituted,
//    and lets of constants or variables by substitution.
// Calls of builtins (no dot in the callee: exp, sqrt, ...) are pure; an
// expression containing a target intrinsic ("cuda.sync", ...) may have
// effects and is never dropped.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::passes {

ir::Module simplify(const ir::Module& m);
ir::Stmt simplifyStmt(const ir::Stmt& s);
// The same for a statement inside loops the caller knows: each variable of
// `ranges` lies in [min, min + extent) throughout `s`.
struct VarRange {
  ir::Var var;
  ir::Expr min, extent;
};
ir::Stmt simplifyStmt(const ir::Stmt& s, const std::vector<VarRange>& ranges);
ir::Expr simplifyExpr(const ir::Expr& e);
ir::Expr simplifyExpr(const ir::Expr& e, const std::vector<VarRange>& ranges);

}  // namespace tlc::passes
