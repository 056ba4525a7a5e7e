// Bounds on how deeply the IR nests.
//
// Every walker over the IR (verifier, printer, simplifier, substitute,
// equality, the passes, the interpreter and both code generators) recurses
// once per level, so the depth of the IR bounds the stack they need:
//  - no expression is deeper than kMaxExprDepth: the .tir parser rejects
//    deeper text, the verifier reports deeper trees without descending into
//    them, and passes that combine expressions keep their parts apart rather
//    than build a deeper one;
//  - no statement is nested deeper than kMaxStmtDepth (each scalar binding
//    nests the rest of its block inside its let): the front ends report
//    deeper programs and the verifier checks it. The driver runs on a stack
//    sized for this depth (compiler/support/large_stack.h).
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::ir {

inline constexpr int kMaxExprDepth = 1500;
// Source expressions a front end evaluates: each level lowers to about one
// level of IR; the margin covers the few levels lowering adds (implicit
// casts, ceildiv).
inline constexpr int kMaxSourceExprDepth = kMaxExprDepth - 100;
inline constexpr int kMaxStmtDepth = 400000;
// Scalar bindings (lets) a front end accepts in one kernel: with the block
// nesting the parsers allow, this keeps kernels under kMaxStmtDepth.
inline constexpr int kMaxKernelLets = kMaxStmtDepth / 4;

// The direct operands of `e`, in order.
std::vector<const ExprNode*> exprOperands(const ExprNode& e);

// The height of `e` (a leaf has height 1), computed without recursion.
// Shared subtrees are measured once.
int exprHeight(const Expr& e);

}  // namespace tlc::ir
