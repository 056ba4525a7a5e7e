// Builds loop nests for the CPU tile-op lowering passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

struct LoopDim {
  ir::Expr lo;      // first value of the loop variable
  ir::Expr hi;      // one past the last value
  std::string name; // loop variable name
};

// Nested loops over dims (outermost first), all of kind `kind`, whose body is
// made by `body` from the loop variables. No dims: just the body.
ir::Stmt buildLoopNest(const std::vector<LoopDim>& dims, ir::ForKind kind,
                       const std::function<ir::Stmt(const std::vector<ir::Expr>&)>& body, SourceLoc loc);

// A For statement.
ir::Stmt makeFor(const ir::Var& v, ir::Expr min, ir::Expr extent, ir::ForKind kind, ir::Stmt body,
                 SourceLoc loc = {});

// Zero of a dtype.
ir::Expr zeroOf(DType t);

// `if (cond) then`, dropping the if when cond folds to true.
ir::Stmt guarded(const ir::Expr& cond, ir::Stmt then, SourceLoc loc);

}  // namespace tlc::cpu
