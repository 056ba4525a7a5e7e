// Gather nests: Parallel loops that fill a shared tile from global memory
// with computed indices (an implicit-GEMM convolution's im2col tile, rows
// picked through an index table), which a pipelined loop can run ahead of
// its other statements like a copy (pipeline-planning, the CUDA backend's
// asynchronous copies).
#pragma once

#include <optional>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::ir {

struct GatherNest {
  const ForStmt* outer = nullptr;      // the outermost Parallel loop (the statement)
  std::vector<const ForStmt*> loops;   // outermost first, one per tile dimension
  std::vector<const LetStmt*> lets;    // between the innermost loop and the store, in order
  const StoreStmt* store = nullptr;    // tile[loop vars...] = value
  const BufferNode* tile = nullptr;    // the shared tile written
};

// `s` as a gather nest of the body of `loop`, or nullopt. A gather nest is
// perfectly nested Parallel loops, one per dimension of a shared tile, each
// over [0, the tile's extent) (constant), whose innermost body is lets and
// one store of the tile at the loop variables in order, whose loads are all
// of global tensors that `loop` never writes (tables), and whose values use
// no variable that `loop`'s body binds outside the nest: what it stores is
// the same whenever it runs, so it may run iterations ahead.
std::optional<GatherNest> gatherNest(const Stmt& s, const ForStmt* loop);

// The copy `c` of a global region into a whole shared tile of constant
// shape, written as the Parallel nest a gather nest is: one loop per tile
// dimension, storing the source element, or zero where it lies outside the
// source tensor (as the copy reads it). Null when `c` is not such a copy
// or its region and tile do not pair their non-unit dimensions in order.
Stmt copyAsGatherNest(const CopyStmt* c);

}  // namespace tlc::ir
