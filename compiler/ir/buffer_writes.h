// Which buffers a statement writes.
//
// A buffer is written by a Store, an Atomic, and as the destination of a
// Copy, Fill, Reduce or Gemm (its accumulator). Used wherever a tool needs to
// tell a kernel's inputs from its outputs (argument roles, const pointers in
// generated headers).
#pragma once

#include <set>

#include "compiler/ir/ir.h"

namespace tlc::ir {

struct BufferWrites {
  std::set<const BufferNode*> buffers;
  // True when some write accumulates into its destination (Gemm, Reduce,
  // Atomic), so results depend on summation order.
  bool accumulates = false;
};

// The writes anywhere in `s` (null: none).
BufferWrites collectBufferWrites(const Stmt& s);

}  // namespace tlc::ir
