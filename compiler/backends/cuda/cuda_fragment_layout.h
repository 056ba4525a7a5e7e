// Layout inference for register fragments of the CUDA backend.
//
// Every block-level `T.alloc_fragment` that is not an mma.sync accumulator
// (those have the fixed mma layout, see cuda_mma.h) is either kept in
// registers with a row-group layout chosen here, or falls back to shared
// memory (the placement of cuda_kernel_analysis.cpp).
//
// The row-group layout of an [R, C] tile over T threads has two parameters:
// G consecutive threads share a row (lanes of one warp when G <= 32, whole
// consecutive warps beyond), and each of them owns runs of V contiguous
// columns:
//   thread(i, j)   = (i % P) * G + (j / V) % G            with P = T / G
//   register(i, j) = (i / P) * (C / G) + (j / (G * V)) * V + j % V
// A row vector [R] that follows the tile's rows is replicated over the G
// threads of its row (register i / P); a column vector [C] that follows the
// tile's columns is replicated over the P row slots (register
// (j / (G * V)) * V + j % V).
//
// Buffers are grouped by their uses: a Parallel nest over (i, j) that indexes
// X[i, j], m[i] and w[j] puts X (tile), m (rows) and w (columns) in one group;
// reduce(X, m, dim=1) makes m a row vector of X's group; a copy between two
// fragments makes them share a group and a role. A group stays in registers
// when every use of every member fits: element accesses only inside Parallel
// nests over the group's shape, indexed by the nest variables in order;
// whole-buffer copies and fills; reductions along the last dimension of a
// tile into a row vector of the same group. Any other use (a transposed or
// shifted index, a gemm operand, a scalar access outside a Parallel loop, a
// reduction along dim 0) sends the whole group to shared memory.
//
// The parameters follow a cost rule: V is a 16-byte vector of the narrowest
// global element the tile is copied from or to (halved until it divides C);
// G is the smallest power of two (at most T) for which every thread has work
// (T / G rows at a time divide R) and the G threads of a row read at least
// 128 contiguous bytes (stopping at 32 once a row fills a warp; more only
// when R < T / 32, as for a kernel that gives each row the whole block) (whole cache lines from global memory; a conflict-free
// phase of 8 threads for 16-byte shared memory accesses). Groups needing
// more than kMaxRegisterElems registers per thread fall back to shared memory.
//
// Layout annotations (T.annotate_layout) are strict constraints: a group
// with an annotated member takes the annotated G and V (every annotated
// member must have the same annotation) or, for shared_fallback, lives in
// shared memory. When the annotation cannot hold (the group's uses need
// shared memory, the parameters do not divide the tile over the threads, the
// registers exceed the budget, the fragment is an mma accumulator, members
// disagree) the plan records a conflict instead: a located error at the
// annotation with notes at the uses involved. An annotated group never
// falls back silently.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/passes/layout.h"

namespace tlc::cuda {

// The row-group layout parameters of one group of register fragments.
struct RowGroupLayout {
  int64_t rows = 0, cols = 0;  // the tile shape [R, C]
  int64_t threads = 0;         // T
  int64_t group = 1;           // G: threads sharing one row
  int64_t vector = 1;          // V: contiguous columns per run

  int64_t rowSlots() const { return threads / group; }          // P: rows handled at once
  int64_t rowsPerThread() const { return rows / rowSlots(); }   // R / P
  int64_t chunksPerRow() const { return cols / (group * vector); }
  int64_t colsPerThread() const { return cols / group; }
  // The layouts as Fragment values (thread, register) for enumeration.
  layout::Fragment tile() const;
  layout::Fragment rowVector() const;
  layout::Fragment columnVector() const;
};

enum class FragmentRole { Tile, Rows, Columns };

// The layout annotation of each annotated buffer of a kernel.
using LayoutAnnotations = std::unordered_map<const ir::BufferNode*, const ir::AnnotateLayoutStmt*>;

struct LayoutNote {
  SourceLoc loc;
  std::string message;
};

// A layout annotation that cannot hold: reported as an error at `loc` (the
// annotation) with notes at the uses and annotations involved.
struct LayoutConflict {
  const ir::BufferNode* buffer;
  SourceLoc loc;
  std::string message;
  std::vector<LayoutNote> notes;
};

struct RegisterTile {
  int group = 0;  // index into FragmentLayoutPlan::groups
  FragmentRole role = FragmentRole::Tile;
  int64_t registers() const;  // per thread, given the group's layout
  RowGroupLayout layout;
};

// A Parallel nest over register fragments: iterates each thread's registers.
struct RegisterNest {
  FragmentRole kind = FragmentRole::Tile;  // Tile: (i, j); Rows: (i); Columns: (j)
  int group = 0;
  RowGroupLayout layout;
};

struct FragmentLayoutPlan {
  std::unordered_map<const ir::BufferNode*, RegisterTile> buffers;
  std::unordered_map<const ir::ForStmt*, RegisterNest> nests;
  std::vector<RowGroupLayout> groups;
  // Fragments left in shared memory, with the reason (for tests and --verbose output).
  std::unordered_map<const ir::BufferNode*, std::string> fallback;
  // Annotations that no layout satisfies; the plan is not usable when there are any.
  std::vector<LayoutConflict> conflicts;
};

// Most register elements per thread that one group of fragments may take.
constexpr int64_t kMaxRegisterElems = 128;

// Infers the layouts of the fragments of `kernel` run by `threads` threads;
// `fixed` are the fragments that already have a layout (mma accumulators),
// `annotations` the kernel's layout annotations.
FragmentLayoutPlan inferFragmentLayouts(const ir::KernelStmt& kernel, int64_t threads,
                                        const std::unordered_set<const ir::BufferNode*>& fixed,
                                        const LayoutAnnotations& annotations = {});

}  // namespace tlc::cuda
