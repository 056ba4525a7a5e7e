// Vector accesses in plain Parallel nests: a nest that touches no register
// fragment is spread over the block's threads element by element (the flat
// mapping). When the accesses of some global or shared buffers move along the
// innermost loop one element per iteration, each thread instead takes runs of
// `lanes` consecutive innermost iterations ("a chunk"), and those buffers are
// read and written with one 16-byte access per run (or a few, for wider
// elements), so a warp moves 512 contiguous bytes per instruction instead of
// 64 for 16-bit data.
//
// Semantics are those of the element-wise loop: the body runs once per
// iteration (unrolled over the chunk's lanes). A vector load is issued by the
// first lane that reaches its statement, only when the whole run lies inside
// the buffer and is aligned; otherwise every lane loads its element itself.
// Stores of a run are collected and written after the chunk's lanes, as one
// vector when every lane stored and the run is aligned, element by element
// otherwise. Buffers whose accesses do not all move with the innermost loop
// (or that are read after being written in the body) keep element accesses.
// A chunk whose every lane passes the body's `if` conditions (conjuncts that
// do not depend on the lane, or comparisons with one side moving with the
// lane, checked at the first and the last lane) and whose vector loads are
// whole, aligned runs goes straight: its runs loaded first, no test per lane
// (KernelEmitter::wholeChunkCondition); the other chunks, at the tensor's
// edges, run the lanes one by one as above.
// Internal to the CUDA backend.
#pragma once

#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cuda {

struct VectorNestPlan {
  int64_t lanes = 0;  // innermost iterations per chunk (a power of two >= 2)
  // The buffers accessed as vectors: every access moves with the innermost loop.
  std::unordered_set<const ir::BufferNode*> buffers;
};

// How an expression varies over the lanes of a chunk: `atLane(e)` is `e` at
// lane `lane` of the chunk, `atFirst(e)` at its first lane (both simplified).
// Used to tell the conditions and addresses that hold, or move by one, along
// a run of lanes (the whole-chunk condition, gathers as asynchronous stages).
struct LaneProbe {
  std::function<ir::Expr(const ir::Expr&)> atLane, atFirst;
  ir::Var lane;
  // The same value at every lane.
  bool same(const ir::Expr& e) const;
  // The first lane's value plus the lane.
  bool moves(const ir::Expr& e) const;
  // An ordering comparison of an expression that moves with the lane and one
  // that does not: where it holds at the first and the last lane of a chunk,
  // it holds at every lane.
  bool edge(const ir::Expr& condition) const;
};

// Whether the Parallel nest `loops` with innermost body `body` takes vector
// accesses, and how. `vectorizable(b)`: the placement of `b` allows vector
// accesses (global memory, or shared memory laid out row-major). Bodies with
// loops, tile operations or jumps are left element-wise.
std::optional<VectorNestPlan> planVectorNest(const std::vector<const ir::ForStmt*>& loops, const ir::Stmt& body,
                                             const std::function<bool(const ir::BufferNode*)>& vectorizable);

}  // namespace tlc::cuda
