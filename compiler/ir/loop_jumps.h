// `break` and `continue` (BreakStmt, ContinueStmt) leave or restart the
// innermost loop around them. A transformation that removes a loop, merges
// its iterations or moves statements across them must first ask whether the
// loop's body jumps.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::ir {

// True when `body`, the body of a loop, holds a break or continue of that
// loop (one outside every loop nested in `body`).
bool jumpsOutOf(const Stmt& body);

}  // namespace tlc::ir
