// Pass cpu-interchange-serial: serial loops inside a vector loop move out of
// it, so that the vector loop is innermost and LLVM's loop vectorizer (which
// vectorizes innermost loops only) can vectorize it.
//
// A Parallel loop whose body walks a serial loop per iteration (a running
// sum along a row, `for i in T.Parallel(M): for j in T.serial(N): ...`)
// becomes, after cpu-map-loops, a Vectorized loop around a serial one. Its
// iterations are independent (the language's guarantee for Parallel
// loops), so its body may run statement by statement over all iterations
// (loop distribution), and a serial loop of the body may run outside it
// (interchange): each iteration still runs the serial loop's steps in order.
//
// Assumes: cpu-map-loops has run (Vectorized loops hold no Parallel loop).
// Guarantees: a Vectorized loop whose body is a statement list with a serial
// loop in it becomes one Vectorized loop per statement, each serial loop
// among them with the Vectorized loop moved inside it (and again, inside,
// until no serial loop is left directly in its body). Left alone: bodies
// that bind a value around the list (a let) or allocate a buffer in it (one
// per iteration, such as a running sum's variable), that break out of or continue
// the vector loop, serial loops whose bounds use the vector variable or read
// memory, and serial loops whose body jumps out of them (a break would then
// leave the vector loop) or allocates.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module interchangeSerialLoops(const ir::Module& m);

}  // namespace tlc::cpu
