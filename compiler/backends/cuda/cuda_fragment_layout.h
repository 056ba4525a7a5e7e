// Layout inference for register fragments of the CUDA backend.
//
// Every block-level `T.alloc_fragment` is either kept in registers with a
// layout chosen here, or falls back to shared memory (the placement of
// cuda_kernel_analysis.cpp). The accumulators of tensor-core gemms come with
// a fixed layout (the mma.sync accumulator layout of their warp grid, see
// cuda_mma.h); the other fragments that share a group with them take that
// layout too (see "mma groups" below), the rest get a row-group layout.
//
// The row-group layout of an [R, C] tile over T threads has two parameters:
// G consecutive threads share a row (lanes of one warp when G <= W, whole
// consecutive warps beyond; W, the lanes one group of shuffles spans, is 32,
// or 64 on a CDNA wavefront: shuffleLanes), and each of them owns runs of V
// contiguous columns:
//   thread(i, j)   = (i % P) * G + (j / V) % G            with P = T / G
//   register(i, j) = (i / P) * (C / G) + (j / (G * V)) * V + j % V
// A row vector [R] that follows the tile's rows is replicated over the G
// threads of its row (register i / P); a column vector [C] that follows the
// tile's columns is replicated over the P row slots (register
// (j / (G * V)) * V + j % V).
//
// Tiles the threads do not divide are padded: each thread holds
// ceil(R / P) register rows of ceil(C / (G * V)) runs, and the slots past
// the tile (rows from R, columns from C) hold no element. V always divides
// C, so a run is wholly inside the tile or wholly padding; every loop over
// a thread's registers (Parallel nests, copies, reductions) skips the
// padding slots (RegisterLayout::rowInRange, chunkInRange).
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
// 128 contiguous bytes (stopping at W once a row fills a warp; more only
// when R < T / W, as for a kernel that gives each row the whole block)
// (whole cache lines from global memory; a conflict-free phase of 8 threads
// for 16-byte shared memory accesses). A group reduced along columns and
// not along rows takes the largest G that gives every thread work instead:
// each column's partial results then sit in T / G threads, not T * V / C'
// for the narrow G, and fewer shuffles and shared-memory partials combine
// them. Then a wider G (up to W) that still tiles the group is taken when
// the group's registers per thread are fewer with it (column vectors take
// C / G registers, row vectors R * G / T). Groups needing
// more than kMaxRegisterElems registers per thread fall back to shared memory
// (listed in FragmentLayoutPlan::unfit, for a warning).
// A group that no such layout tiles evenly takes a padded one: V as above,
// and the G (a power of two, at most T) with the fewest registers per
// thread for the group, padding counted; among equals, rows within a warp
// (G <= W) before rows spanning warps, then the narrowest G (the widest
// for a group reduced along columns only).
//
// Mma groups: a group with an accumulator is laid out like it. Its tiles
// are [R, C_k] with the accumulators' R rows and warp grid (every
// accumulator of a group has the same ones), each in the mma.sync
// accumulator layout of its own C_k columns; its row vectors follow the rows
// (replicated over the 4 lanes and the warpsN warps that share a row); a
// column vector needs all tiles to have one C. A fragment of such a group
// may be the A operand of a tensor-core gemm (read straight from registers:
// the accumulator layout of two 16 x 8 atoms is the A layout of a 16 x 16
// one) when the gemm's warp grid is warpsM x 1, its M the group's R, and the
// operand is a 16-bit [R, K] tile that is not transposed. A group without an
// accumulator whose tile is such an operand takes the operand's layout; for
// 8-bit and float32 (tf32) elements that is an mma layout whose lanes hold
// 4 and 1 adjacent columns of each atom (RegisterLayout::vector; the
// accumulator layout holds 2), which no accumulator's group can share. The
// A operand of a
// gemm whose warpgroups split the columns (colMajor) leaves the group for
// shared memory instead. A row reduction of an mma tile whose rows span
// several warps (warpsN > 1) combines their partial results through shared
// memory; an MFMA tile needs its rows within one wavefront. When an mma group
// does not fit, its other members fall back to shared memory and the plan
// lists the accumulators that a row reduction needed in the group (demote):
// the caller plans again with those accumulators in shared memory.
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

// The register layout of a tile of a group of register fragments: a
// row-group layout (the parameters G and V above), or the mma.sync
// accumulator layout of a warpsM x warpsN warp grid (layout::Fragment::
// mmaAccumulator), which a tensor-core gemm fixes for its accumulator and
// every fragment of its group shares. Both give each thread rowsPerThread()
// rows (register row ri) and, in each, chunksPerRow() runs of vector()
// contiguous columns (register column chunk * vector + v).
struct RegisterLayout {
  enum class Kind { RowGroups, Mma };
  int64_t rows = 0, cols = 0;  // the tile shape [R, C]
  int64_t threads = 0;         // T
  int64_t group = 1;           // RowGroups: G, threads sharing one row
  // RowGroups: V, contiguous columns per run. Mma: the columns a lane holds
  // side by side in each 16 x 4V atom: 2 (the accumulator layout, the A
  // operand of 16-bit gemms), 4 (8-bit A operands), 1 (tf32 A operands).
  int64_t vector = 1;
  Kind kind = Kind::RowGroups;
  int64_t warpsM = 0, warpsN = 0;  // Mma: the warp grid (of 64-lane wavefronts for MFMA)
  // Mma on CDNA: the MFMA block S (32 or 16) of Fragment::mfmaAccumulator;
  // 0: the mma.sync layout. A thread holds one column of each S x S block
  // and S * S / 64 of its rows (group = S lanes share a row, vector = 1).
  int64_t mfma = 0;
  // Mma (not MFMA): warps numbered column-major over the grid, as wgmma's
  // warpgroups that split the columns (layout::Fragment::mmaAccumulator).
  bool colMajor = false;

  static RegisterLayout mma(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN, int64_t mfma = 0,
                            bool colMajor = false, int64_t vector = 2);
  // The rows (16, or S) and columns (4V, or S) of one atom.
  int64_t atomRows() const { return mfma ? mfma : 16; }
  int64_t atomCols() const { return mfma ? mfma : 4 * vector; }
  bool isMma() const { return kind == Kind::Mma; }
  // Mma: the warp-grid row and column of thread `tid`'s warp (of its 64-lane
  // wavefront for MFMA).
  ir::Expr warpRow(const ir::Expr& tid) const;
  ir::Expr warpCol(const ir::Expr& tid) const;
  int64_t rowSlots() const { return threads / group; }  // RowGroups, P: rows handled at once
  int64_t rowsPerThread() const;
  int64_t chunksPerRow() const;
  // RowGroups: whether the threads leave padding slots past the tile's rows
  // or columns (see the header), which loops over the registers skip.
  bool paddedRows() const;
  bool paddedColumns() const;
  // Whether register row `ri` (run `chunk`) of thread `tid` holds a row
  // (runs of columns) of the tile: true where nothing is padded.
  ir::Expr rowInRange(const ir::Expr& ri, const ir::Expr& tid) const;
  ir::Expr chunkInRange(const ir::Expr& chunk, const ir::Expr& tid) const;
  int64_t colsPerThread() const { return chunksPerRow() * vector; }
  // Threads sharing one row: consecutive lanes of a warp (rowLanes), in
  // rowWarps warps; the row-vector replicas. A row group counts warps of
  // `warp` lanes (the shuffles' span, shuffleLanes: 32, or a 64-lane CDNA
  // wavefront); an mma tile, those of its grid.
  int64_t rowLanes(int64_t warp) const;
  int64_t rowWarps(int64_t warp) const;
  // Whether two tiles place their rows (and so their row vectors) alike.
  bool sameRows(const RegisterLayout& o) const;
  bool operator==(const RegisterLayout& o) const;
  // The logical row of register row `ri` and column of run `chunk`,
  // element `v`, in thread `tid`; the tile register of (ri, chunk, v).
  ir::Expr rowOf(const ir::Expr& ri, const ir::Expr& tid) const;
  ir::Expr colOf(const ir::Expr& chunk, const ir::Expr& v, const ir::Expr& tid) const;
  ir::Expr tileRegister(const ir::Expr& ri, const ir::Expr& chunk, const ir::Expr& v) const;
  // The same for the thread's column register c = chunk * vector + v.
  ir::Expr tileRegisterAt(const ir::Expr& ri, const ir::Expr& c) const;
  // The threads that write out a replicated row or column vector (one replica each).
  ir::Expr rowVectorOwner(const ir::Expr& tid) const;
  ir::Expr columnVectorOwner(const ir::Expr& tid) const;
  // The layouts as Fragment values (thread, register) for enumeration.
  layout::Fragment tile() const;
  layout::Fragment rowVector() const;
  layout::Fragment columnVector() const;
};

// The lane's columns per atom (RegisterLayout::vector) of a register A
// operand of element type `t`: 2 for 16-bit, 4 for 8-bit, 1 for 32-bit
// (tf32) elements.
inline int64_t registerOperandVector(DType t) {
  const int bytes = dtypeBytes(t);
  return bytes == 1 ? 4 : bytes == 4 ? 1 : 2;
}

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
  RegisterLayout layout;
};

// A Parallel nest over register fragments: iterates each thread's registers.
struct RegisterNest {
  FragmentRole kind = FragmentRole::Tile;  // Tile: (i, j); Rows: (i); Columns: (j)
  int group = 0;
  RegisterLayout layout;
};

struct FragmentLayoutPlan {
  std::unordered_map<const ir::BufferNode*, RegisterTile> buffers;
  std::unordered_map<const ir::ForStmt*, RegisterNest> nests;
  std::vector<RegisterLayout> groups;
  // Fragments left in shared memory, with the reason (for tests and --verbose output).
  std::unordered_map<const ir::BufferNode*, std::string> fallback;
  // Groups whose every use fits registers but that no register layout
  // holds (too many registers per thread, threads not whole warps): one
  // member (a tile where there is one) and why, with what to change; they
  // are in `fallback` too, and the layout inference pass warns about them.
  std::vector<std::pair<const ir::BufferNode*, std::string>> unfit;
  // Annotations that no layout satisfies; the plan is not usable when there are any.
  std::vector<LayoutConflict> conflicts;
  // Accumulators whose group does not fit although a use needs it (a row
  // reduction of the accumulator): they must live in shared memory instead.
  std::vector<std::pair<const ir::BufferNode*, std::string>> demote;  // with the reason
  // Groups kept out of registers (in shared memory, or an annotation's
  // conflict) only by the per-group register limit.
  int overLimit = 0;
};

// Most register elements per thread that one group of fragments may take.
constexpr int64_t kMaxRegisterElems = 128;
// A block of at most kSmallBlockThreads threads may give its threads up to
// 255 registers each (512 fit the register file): one group over
// kMaxRegisterElems stays in registers there when all of the kernel's
// register fragments together take at most kSmallBlockRegisterElems.
constexpr int64_t kSmallBlockThreads = 256;
constexpr int64_t kSmallBlockRegisterElems = 192;

// The gemms whose accumulators should give each warp whole rows (a warp
// grid of warps x 1): those whose accumulator shares a group with a row
// reduction or with another gemm's A operand, and the gemms that read a
// fragment as their A operand.
std::unordered_set<const ir::GemmStmt*> fullRowGemms(const ir::KernelStmt& kernel);

// The fragments that come with a layout (mma accumulators) and that layout.
using FixedLayouts = std::unordered_map<const ir::BufferNode*, RegisterLayout>;

// Infers the layouts of the fragments of `kernel` run by `threads` threads;
// `fixed` are the fragments that already have a layout (mma accumulators),
// `annotations` the kernel's layout annotations, `warp` the lanes one group
// of shuffles spans (W above).
FragmentLayoutPlan inferFragmentLayouts(const ir::KernelStmt& kernel, int64_t threads, const FixedLayouts& fixed,
                                        const LayoutAnnotations& annotations = {}, int64_t warp = 32);

}  // namespace tlc::cuda
