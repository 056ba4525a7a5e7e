// The tile-IR verifier: structural invariants every module must satisfy
// between passes.
//
// Checks, reporting located diagnostics (kinds in ir_diagnostics.def):
//  - scoping: every variable and buffer used is bound where it is used
//    (shape variables, parameters, kernel block variables, loop variables,
//    lets, and allocations until the end of their Seq) [ir-unbound-name];
//  - dtypes: binary operands agree and results have the operator's dtype;
//    store/fill/atomic values have the buffer's dtype; a let's variable has
//    its value's dtype; loop and grid bounds have their variable's dtype
//    [ir-dtype-mismatch]; indices, shapes, bounds and regions are integers,
//    conditions are bool, `/` is for floats, bit operations for integers
//    [ir-operand-type]; integer literals fit their dtype [ir-invalid-literal];
//  - ranks: one index per dimension, one range per dimension, gemm operands
//    are matrices [ir-rank-mismatch]; constant shapes of copy, gemm and
//    reduce agree [ir-shape-mismatch];
//  - structure: allocations only inside kernels [ir-alloc-outside-kernel];
//    kernels have 1-3 grid extents, one block variable each, a positive
//    thread count, and do not nest [ir-invalid-kernel]; tensor parameters are
//    global and allocations are not [ir-invalid-scope]; reduce dims and
//    pipeline annotations are in range [ir-invalid-attribute];
//  - calls: the callee is an intrinsic of intrinsics.h [ir-unknown-callee]
//    with its number of operands [ir-argument-count] and operand dtypes
//    [ir-operand-type, ir-dtype-mismatch]; target intrinsics (`cpu.*`) only
//    in lowered IR [ir-target-intrinsic];
//  - tile operations: gemm operands A and B share a float or integer dtype
//    and C is of the same family; atomics work on 32- and 64-bit integers
//    and 16-, 32- and 64-bit floats [ir-operand-type];
//  - bounds: outside lowered IR, a constant index lies inside a constant
//    dimension [ir-index-out-of-bounds];
//  - size: no expression is nested deeper than kMaxExprDepth (limits.h)
//    [ir-nesting-too-deep], so the verifier and every later walker recurse
//    a bounded number of levels;
//  - module: function names are unique [ir-redefinition].
// A null node is a compiler bug and raises an InternalError.
#pragma once

#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::ir {

struct VerifyOptions {
  // The module is the output of a target's lowering passes rather than
  // compiler input: target intrinsics may appear, and constant indices are
  // not checked against constant shapes (lowered code may hold accesses its
  // guards never run).
  bool lowered = false;
};

// True when no error was reported.
bool verifyModule(const Module& m, DiagnosticEngine& diags, const VerifyOptions& options = {});
bool verifyFunc(const PrimFunc& f, DiagnosticEngine& diags, const VerifyOptions& options = {});

}  // namespace tlc::ir
