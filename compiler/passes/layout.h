// Layouts and fragments: the index maps that place tile elements in memory and
// on threads.
//
// A Layout maps a logical index of an N-dimensional tile (its input shape) to a
// physical index (one or more output dimensions). The map is written as index
// expressions over placeholder variables, one per input dimension, so that a
// pass can substitute the real index expressions and emit the arithmetic
// (swizzles, paddings, transposes). Every expression must be integer
// arithmetic over the placeholders (+ - * // % min max & | ^ << >>).
//
// A Fragment maps a logical index to the thread that holds the element and to
// the register index within that thread. An element may be held by several
// threads (replication): the thread expression then also uses the replicate
// placeholder, which ranges over [0, replicate). A Fragment describes a whole
// block's tile: threads range over [0, threadCount).
//
// Composition and inverse are explicit operations: composition substitutes one
// map into the other; the inverse of a bijective Layout is found by
// enumeration and returned as a tabulated Layout (its expressions are a
// closed-form only when the caller supplies one, see Layout::withInverse).
//
// These values are checked by enumeration (tests/cuda/layout_test.cpp): every
// logical index of a fragment lands on a valid (thread, register) and no two
// logical indices collide.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::layout {

// Evaluates an integer index expression with the given variables bound.
// Throws InternalError on an unbound variable or a non-index operation.
int64_t evalIndex(const ir::Expr& e, const std::vector<std::pair<ir::Var, int64_t>>& env);
// Substitutes variables in an expression (by identity), folding constants.
ir::Expr substitute(const ir::Expr& e, const std::vector<std::pair<ir::Var, ir::Expr>>& map);

class Layout {
 public:
  // A layout over `inputShape` given by `forward` expressions in the
  // placeholder variables `inputVars` (one per input dimension).
  Layout(std::vector<int64_t> inputShape, std::vector<ir::Var> inputVars, std::vector<ir::Expr> forward);
  // The row-major identity layout of a shape (one output dimension: the flat offset).
  static Layout rowMajor(const std::vector<int64_t>& shape);
  // A row-major layout whose innermost 16-byte chunks are XOR-swizzled by the
  // row, so that 8 consecutive rows of a [rows, cols] tile of `elemBytes`-sized
  // elements touch 8 distinct bank groups (ldmatrix / cp.async conflict free).
  // The output is the flat element offset. Requires cols * elemBytes to be a
  // multiple of 16; rows of 32, 64 or 128 bytes use 2, 4 or 8 chunk patterns.
  static Layout swizzled(int64_t rows, int64_t cols, int elemBytes);
  // A row-major layout whose runs of `runBytes` (4 or 8) are XOR-swizzled by
  // the row so that any `rows per phase` consecutive rows read at one column
  // touch distinct runs of the 128 bytes of banks: with R rows per 128 bytes
  // (1 for rows of 128 bytes or more), run u of row r moves to
  // u ^ ((r / R) % (rowsPerPhase / R)). Requires rows of a power of two
  // below 128 bytes or of a multiple of 128 bytes, rowsPerPhase > R and
  // rowsPerPhase * runBytes <= 128 (callers check runSwizzleFits).
  static Layout runSwizzled(int64_t rows, int64_t cols, int elemBytes, int64_t runBytes, int64_t rowsPerPhase);
  static bool runSwizzleFits(int64_t cols, int elemBytes, int64_t runBytes, int64_t rowsPerPhase);
  // A row-major layout whose runs of `runElems` elements move along their
  // row by the row's group (r / rowsPerGroup): rotated, run u of row r to
  // (u + r / rowsPerGroup) % runs, or XORed, to u ^ ((r / rowsPerGroup) %
  // period) (period a power of two that divides the runs of a row). Rows must
  // be whole runs. For tiles read across the rows (an MFMA operand whose k
  // runs down the columns: rows r, r + E, ... read at one column in one phase).
  static Layout runRotated(int64_t rows, int64_t cols, int64_t runElems, int64_t rowsPerGroup);
  static Layout runXored(int64_t rows, int64_t cols, int64_t runElems, int64_t rowsPerGroup, int64_t period);
  // A row-major layout whose 16-byte chunks, numbered over the whole tile,
  // are XORed by `mask` (1, 2 or 4) in every other group of `rowsPerGroup`
  // rows: chunk q of row r moves to q ^ (mask * ((r / rowsPerGroup) % 2)).
  // Each aligned run of 8 chunks (128 bytes) keeps its chunks, so row-wise
  // copies stay free of conflicts whatever the row length; a group of rows
  // must be whole runs of 8 chunks (chunksXorFits), so that the XOR moves
  // chunks within runs that one mask covers: a permutation.
  static Layout chunksXored(int64_t rows, int64_t cols, int elemBytes, int64_t rowsPerGroup, int64_t mask);
  static bool chunksXorFits(int64_t rows, int64_t cols, int elemBytes, int64_t rowsPerGroup);
  // The tile as TMA writes it and wgmma reads it: each row cut into panels
  // of `span` bytes (128, 64 or 32), panel p holding all rows of columns
  // [p * span, (p + 1) * span) one after the other, its 16-byte chunks
  // XOR-swizzled by the row as the span's swizzle mode does (128: row % 8;
  // 64: (row / 2) % 4; 32: (row / 4) % 2). The output is the flat element
  // offset; the buffer must be aligned to 1024 bytes.
  // With `slices` > 1 (the A tile of a Hopper gemm whose warps own `slices`
  // 16-row slices each, HopperMainloop::slices), the tile's 16-row chunks
  // are stored in the order the wgmmas read them: chunk q (rows 16 q ..
  // 16 q + 15, of warp w = q / slices, slice a = q % slices) is stored as
  // chunk (w / 4 * slices + a) * 4 + w % 4, so that each wgmma's 64 rows are
  // consecutive. rows must then be a multiple of 64 * slices.
  static Layout panels(int64_t rows, int64_t cols, int elemBytes, int64_t span, int64_t slices = 1);

  const std::vector<int64_t>& inputShape() const { return inputShape_; }
  const std::vector<ir::Var>& inputVars() const { return inputVars_; }
  const std::vector<ir::Expr>& forward() const { return forward_; }
  bool isTabulated() const { return !table_.empty(); }
  int64_t inputSize() const;
  // The smallest shape that holds every output (max + 1 per output dimension).
  std::vector<int64_t> outputShape() const;

  // The physical index of a logical index.
  std::vector<int64_t> apply(const std::vector<int64_t>& index) const;
  // The output expressions with the placeholders replaced by `index`.
  std::vector<ir::Expr> applyExpr(const std::vector<ir::Expr>& index) const;

  // Every logical index maps to a distinct physical index.
  bool isInjective() const;
  bool isBijective() const;  // injective and onto its output shape
  // this ∘ inner: first `inner`, then this layout. inner's output rank and
  // extents must match this layout's input shape.
  Layout compose(const Layout& inner) const;
  // The inverse map (physical → logical) of a bijective layout; nullopt otherwise.
  std::optional<Layout> inverse() const;
  // Printed as "Layout[8, 64] (i0, i1) -> (i0 * 64 + (i1 ^ ...))".
  std::string str() const;

 private:
  friend class Fragment;
  std::vector<int64_t> inputShape_;
  std::vector<ir::Var> inputVars_;
  std::vector<ir::Expr> forward_;
  // For tabulated layouts: the outputs of every input in row-major order.
  std::vector<std::vector<int64_t>> table_;
};

class Fragment {
 public:
  // `thread` may use the replicate variable `rep` (ranging over [0, replicate));
  // `registers` are the register index expressions (usually one).
  Fragment(std::vector<int64_t> inputShape, std::vector<ir::Var> inputVars, ir::Expr thread,
           std::vector<ir::Expr> registers, int64_t threadCount, int64_t replicate = 1, ir::Var rep = nullptr);

  // The accumulator layout of mma.sync m16n8k16 (and m16n8k8) for an [m, n]
  // tile computed by a warpsM x warpsN grid of warps: each warp owns
  // (m / warpsM) x (n / warpsN) and covers it with 16x8 atoms; thread t of a
  // warp holds rows t/4 and t/4+8, columns 2*(t%4) and 2*(t%4)+1 of each atom.
  // Warps are numbered row-major over the grid (warp = wm * warpsN + wn) or,
  // `colMajor`, column-major (warp = wn * warpsM + wm): the order of wgmma
  // warpgroups that split the columns, each warpgroup's 4 warps stacked
  // along M. With `vector` V other than 2 the atoms are 16 x 4V and thread
  // t holds columns V*(t%4) .. V*(t%4)+V-1 of each: the A-operand layout of
  // mma.sync / wgmma for 8-bit (V = 4, k32) and tf32 (V = 1, k8) elements,
  // as the accumulator layout (V = 2) is the A-operand layout of 16-bit ones.
  static Fragment mmaAccumulator(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN, bool colMajor = false,
                                 int64_t vector = 2);
  // The index of the warp at (`row`, `col`) of a warpsM x warpsN grid
  // numbered as mmaAccumulator numbers it.
  static ir::Expr gridWarp(const ir::Expr& row, const ir::Expr& col, int64_t warpsM, int64_t warpsN, bool colMajor);
  // The accumulator layout of the CDNA MFMA instructions v_mfma_f32_SxSxK
  // (S = `block`, 32 or 16) for an [m, n] tile computed by a wavesM x wavesN
  // grid of 64-lane wavefronts: each wavefront owns (m / wavesM) x
  // (n / wavesN) and covers it with S x S blocks; in a block, lane l holds
  // column l % S and, in register r (0 .. S*S/64 - 1), row
  // 4 * (64 / S) * (r / 4) + 4 * (l / S) + r % 4.
  static Fragment mfmaAccumulator(int64_t m, int64_t n, int64_t wavesM, int64_t wavesN, int64_t block);
  // A layout that gives each of `threads` threads a contiguous run of
  // `vector` elements in row-major order, cycling (thread-strided) over the tile.
  static Fragment rowMajorStrided(const std::vector<int64_t>& shape, int64_t threads, int64_t vector);

  const std::vector<int64_t>& inputShape() const { return inputShape_; }
  const std::vector<ir::Var>& inputVars() const { return inputVars_; }
  const ir::Expr& threadExpr() const { return thread_; }
  const std::vector<ir::Expr>& registerExprs() const { return registers_; }
  int64_t threadCount() const { return threadCount_; }
  int64_t replicate() const { return replicate_; }
  const ir::Var& replicateVar() const { return rep_; }
  // Registers each thread needs (the product of the register extents).
  int64_t registersPerThread() const;

  int64_t threadOf(const std::vector<int64_t>& index, int64_t rep = 0) const;
  int64_t registerOf(const std::vector<int64_t>& index) const;  // flattened register index
  ir::Expr threadExprAt(const std::vector<ir::Expr>& index, const ir::Expr& rep) const;
  ir::Expr registerExprAt(const std::vector<ir::Expr>& index) const;  // flattened

  // Every (thread, register) pair holds at most one logical index, and every
  // thread/register is in range.
  bool isValid(std::string* why = nullptr) const;
  // The same fragment seen through `view`: the fragment of view's input shape
  // that places element x where this fragment places view(x).
  Fragment compose(const Layout& view) const;
  // Replicates the fragment `times` more over threads: threads [k*T, (k+1)*T)
  // hold copy k (used when a reduction result is needed by every thread).
  Fragment replicateOver(int64_t times) const;
  // The inverse map (thread, register) -> logical index (row-major flattened),
  // tabulated; entries not held are -1. Indexed [thread * registersPerThread + reg].
  std::vector<int64_t> inverseTable() const;
  bool operator==(const Fragment& o) const;  // same map by enumeration
  std::string str() const;

 private:
  std::vector<int64_t> inputShape_;
  std::vector<ir::Var> inputVars_;
  ir::Expr thread_;
  std::vector<ir::Expr> registers_;
  int64_t threadCount_;
  int64_t replicate_;
  ir::Var rep_;
};

// Enumerates every index of a shape in row-major order.
void forEachIndex(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& f);

}  // namespace tlc::layout
