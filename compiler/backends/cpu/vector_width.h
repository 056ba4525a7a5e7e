// The vectorization width the CPU backend asks LLVM for, per loop.
//
// LLVM's x86 cost model prices the widening of float16 and bfloat16 vectors
// to float32 (`fpext <16 x half>`) far above what it costs, so on its own the
// loop vectorizer runs every loop that reads a narrow float tile into a
// float32 one (the copies into float32 fragments of almost every float16 or
// bfloat16 kernel) 4 lanes at a time: 16-byte stores where a 64-byte one
// would do. The rule: an innermost Vectorized loop that loads float16 or
// bfloat16 values and computes or stores values of W > 2 bytes is given
// the width vectorBits / (8 W) (the widest type fills one register), capped
// by its constant extent; every other loop keeps the cost model's choice.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

// The width for `loop` under the rule above, or 0 for the cost model's.
int forcedVectorWidth(const ir::ForStmt& loop, int vectorBits);

}  // namespace tlc::cpu
