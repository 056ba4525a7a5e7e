// Block-level `T.alloc_local` / `T.alloc_var` buffers that serve as scratch
// of each iteration of Parallel loops: every access lies in the body of an
// innermost Parallel loop, which writes all its elements before reading any
// of them (statements of the body in order: stores at constant indices, or a
// serial or unrolled loop storing element `u` for every `u` of the buffer's
// single dimension, the stored values not reading the buffer). No value then
// flows from one iteration to another or out of the loops, so each thread
// may keep its own copy in registers, as it does for the buffers Parallel
// loops do not write; a buffer written in Parallel loops otherwise lives in
// shared memory, where the block's threads see one copy (docs/cuda-backend.md).
#pragma once

#include <unordered_set>

#include "compiler/ir/ir.h"

namespace tlc::cuda {

std::unordered_set<const ir::BufferNode*> iterationPrivateLocals(const ir::Stmt& kernelBody);

}  // namespace tlc::cuda
