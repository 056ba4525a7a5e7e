// cuda-async-copies: block-level copies from global into shared memory
// outside pipelines are issued as cp.async, so that every thread's loads of
// a tile are in flight together and land in shared memory without passing
// through registers.
//
// Assumes: a verified module without asynchronous statements (the input of
// the CUDA pipeline; expand-pipelines output is rejected before it).
//
// Guarantees: in every statement list of a kernel outside Parallel,
// Vectorized and Pipelined loops, each maximal run of adjacent copies from
// global into shared memory of one element type becomes the same copies as
// `copy_async`, then `commit_group`, then `wait_group(0)`. The wait stands
// before the first later statement of the list that touches one of the
// copies' destinations or could itself wait or synchronize (a loop other
// than a Parallel nest, an if, a let, another copy), or at the end of the
// list: a Parallel nest, fill, reduction or gemm on other buffers runs while
// the copies are in flight. A copy that is the whole body of a loop or a
// branch becomes those three statements. Values are unchanged: no statement
// between a copy and its wait touches its destination, and the copy reads
// its source when issued, where the synchronous copy read it.
#pragma once

#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::cuda {

ir::Module asyncCopies(const ir::Module& m);

passes::Pass asyncCopiesPass();

}  // namespace tlc::cuda
