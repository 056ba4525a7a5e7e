// Pass lower-buffer-prints: a print of a whole buffer becomes a loop nest of
// element prints.
//
// `print(A)` of a buffer of shape [S0, S1, ...] becomes serial loops
// `for i0 in 0:S0, i1 in 0:S1, ...` around `print(A[i0, i1, ...],
// element="A"[i0, i1, ...])` with the same message and location: the lines
// and their order (row-major) are those of the whole-buffer print. Targets
// whose blocks run on one thread (the CPU) run it before lowering buffers.
// Assumes: nothing. Guarantees: every print has a value; every other
// statement is unchanged.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::passes {

ir::Module lowerBufferPrints(const ir::Module& m);

}  // namespace tlc::passes
