// Pass cpu-map-loops: maps the language's loop kinds onto one CPU thread.
//
// Assumes: tile operations are lowered to loops.
// Guarantees: no Parallel or Pipelined loop remains. The innermost Parallel
// loop of each nest becomes Vectorized (the backend marks it for the loop
// vectorizer and declares its memory accesses free of loop-carried
// dependences, as the language guarantees); enclosing Parallel loops become
// Serial. A Pipelined loop becomes Serial: a block runs on one core, whose
// hardware prefetchers and out-of-order window already overlap the next
// tile's loads with the current tile's compute, so there is nothing to stage.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module mapLoopsForCpu(const ir::Module& m);

}  // namespace tlc::cpu
