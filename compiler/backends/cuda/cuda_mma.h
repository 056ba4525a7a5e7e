// Tensor-core gemm lowering for sm_80+: which gemms use mma.sync, the warp
// grid of each, the accumulator fragments kept in registers, and the shared
// operand buffers that get a swizzled layout.
//
// A gemm is eligible when its A and B operands are shared (or shared-placed)
// buffers, M, N, K are compile-time constants that the warp grid and the mma
// shape divide, and the input types are float16, bfloat16 (k16), float32
// (tf32, k8) or int8 (k32) with float32 / int32 accumulators (float16 and
// bfloat16 accumulators are accepted too and rounded after each gemm).
// A fragment accumulator lives in registers (the mma.sync m16n8 accumulator
// layout, layout::Fragment::mmaAccumulator) when every use of it is a fill,
// a full-tile copy, an eligible gemm, or a Parallel loop nest over exactly its
// shape that indexes it by the loop variables in order.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/ir/gather_nest.h"
#include "compiler/ir/ir.h"
#include "compiler/passes/layout.h"

namespace tlc::cuda {

// F8E4M3 / F8E5M2: float8 operands (both of that type) with a float32 accumulator.
enum class MmaKind { F16, BF16, TF32, S8, F8E4M3, F8E5M2 };
inline bool isF8(MmaKind k) { return k == MmaKind::F8E4M3 || k == MmaKind::F8E5M2; }
// Whether k reads 8-bit operands in k-steps of 32 (int8 and float8).
inline bool isByteMma(MmaKind k) { return k == MmaKind::S8 || isF8(k); }
// Whether wgmma of kind k reads both operands K-major (it has no transposes
// but for 16-bit types).
inline bool wgmmaKMajorOnly(MmaKind k) { return isByteMma(k) || k == MmaKind::TF32; }

struct MmaShape {
  MmaKind kind;
  int64_t m = 0, n = 0, k = 0;     // the gemm
  int64_t warpsM = 0, warpsN = 0;  // warp grid over C (of 64-lane wavefronts for MFMA)
  int64_t kStep = 16;              // mma k
  // CDNA matrix cores: the block S of v_mfma_f32_SxSxK (32: 32x32x8, 16:
  // 16x16x16); 0: NVIDIA's mma.sync layout. See mfmaShapeOf.
  int64_t mfma = 0;
  // Warps numbered column-major over the grid (RegisterLayout::colMajor):
  // wgmma warpgroups that split the columns.
  bool colMajor = false;
};

// The MFMA form of a float16 / bfloat16 / int8 / float32 / float8 (gfx942) gemm on CDNA (the HIP
// dialect): wavefronts of 64 lanes, threads / 64 of them in a grid
// minimizing the rows plus columns per wavefront (warps x 1 for `fullRow`
// when the rows divide so), and per wavefront S x S blocks: v_mfma_*_32x32xK
// (S = 32) when the wavefront's tile is whole 32 x 32 blocks, else
// v_mfma_*_16x16xK (S = 16). Both give the same operand reuse per k step;
// the 32 x 32 form issues half the instructions. False when the tile is not
// whole 16 x 16 blocks per wavefront, the gemm's k not whole k steps, or
// float8 on gfx90a (which has no float8 MFMA).
bool mfmaShapeOf(int64_t threads, bool fullRow, const std::string& arch, MmaShape* s);
// A and B elements per lane of an MFMA of `kind` on `arch`: 4, 8 for
// gfx942's int8 and float8 forms (v_mfma_i32_32x32x16_i8,
// v_mfma_f32_32x32x16_fp8_fp8, their 16x16 forms), 1
// for float32 (v_mfma_f32_32x32x2f32, v_mfma_f32_16x16x4f32).
int64_t mfmaLaneElems(MmaKind kind, const std::string& arch);
// The LDS wavefronts of one 32-lane warp's access of `bytes` a lane at these
// byte offsets, as the emulator counts them: phases of 32 lanes for accesses
// of up to 4 bytes, 16 for 8, 8 for 16; in each, the most distinct words one
// of the 32 banks serves.
int64_t ldsWavefronts(const std::vector<int64_t>& offsets, int64_t bytes);
// The LDS wavefronts of a copy writing a [rows, cols] tile of `bytes`-sized
// elements in 16-byte chunks in row-major order, 32 lanes at a time, with
// element (r, c) at element offset offset(r, c).
int64_t rowMajorCopyWavefronts(int64_t rows, int64_t cols, int64_t bytes,
                               const std::function<int64_t(int64_t, int64_t)>& offset);
// The row pitch (elements) of the LDS stage of an MFMA A operand held in
// registers ([m, k] of `bytes`-sized elements, E a lane, S x S blocks): the
// row length, padded so that the accumulator-layout stores and the operand
// reads find free banks.
int64_t mfmaStagePitch(int64_t m, int64_t k, int64_t bytes, int64_t E, int64_t S);
// The staging tile ([rows, cols] of `bytes`) of an MFMA accumulator's store
// to global memory, padded by `padElems` a row: a layout with its 16-byte
// chunks XORed by groups of 4 rows (Layout::chunksXored) where that leaves
// fewer LDS wavefronts to the MFMA stores (16 or 32 columns of a row per
// lane group, the groups 4 rows apart) and the row-wise copy out than the
// pad does (rows of 64 bytes, whose pad cannot suit both), else nullopt.
std::optional<layout::Layout> mfmaStagingLayout(int64_t rows, int64_t cols, int64_t bytes, int64_t padElems);
// Its k step with block S: 64 / S lane groups of mfmaLaneElems each.
inline int64_t mfmaKStep(MmaKind kind, int64_t block, const std::string& arch) {
  return 64 / block * mfmaLaneElems(kind, arch);
}
// The logical (row, column) of register `reg` of thread `tid` in the MFMA
// accumulator (Fragment::mfmaAccumulator) of block `block`.
std::pair<ir::Expr, ir::Expr> mfmaAccumulatorIndex(int64_t m, int64_t n, int64_t wavesM, int64_t wavesN, int64_t block,
                                                   const ir::Expr& tid, const ir::Expr& reg);

// The two matrix dimensions of a region (its non-unit dimensions), with
// constant extents; false when there are not exactly two of them.
bool matrixDims(const ir::Region& r, int* d0, int* d1, int64_t* e0, int64_t* e1);

// Whether a 16-bit gemm operand can be read with ldmatrix: 16-byte rows
// along its contiguous (last) dimension, at constant, aligned origins.
bool ldmatrixOperandOk(const ir::Region& reg);

// The (row, k) element of A whose row address lane `lane` gives an x4
// ldmatrix of the 16 x 16 atom at (rowBase, kk); the (k, col) element of B
// for the 16 x 8 atom at (kk, colBase), or two of them side by side (`pair`,
// x4). The stored orientation (transposed or not) picks the lane mapping.
std::pair<ir::Expr, ir::Expr> ldmatrixAElement(const ir::Expr& lane, const ir::Expr& rowBase, const ir::Expr& kk,
                                               bool transA);
std::pair<ir::Expr, ir::Expr> ldmatrixBElement(const ir::Expr& lane, const ir::Expr& colBase, const ir::Expr& kk,
                                               bool transB, bool pair);
// The buffer index of the operand element (first, second) = (row, k) of A or
// (k, col) of B, within the gemm's region of a transposed or plain operand.
std::vector<ir::Expr> operandIndex(const ir::Region& r, bool transposed, const ir::Expr& first, const ir::Expr& second);

// A gemm A operand read from registers: a tile in the mma layout of its
// warp's rows with `vector` V columns per lane and atom (2 for 16-bit
// elements, 4 for 8-bit ones, 1 for tf32: Fragment::mmaAccumulator),
// `atomsK` 16 x 4V atoms wide. The A fragment register q (0..3) of the k-step
// at row atom `a`, column `kk` (a multiple of 8V, the k-step), packs tile
// registers r .. r + V - 1 for the r returned: atoms (a, kk / 4V) and
// (a, kk / 4V + 1), rows g and g + 8.
ir::Expr registerAOperand(int64_t a, int64_t atomsK, const ir::Expr& kk, int q, int64_t vector);

// The mma shape of a gemm, or false when it is not eligible. The warp grid
// minimizes the rows plus columns per warp; `fullRow` asks for every warp
// along M (warps x 1) where the rows divide so. Not eligible either: an
// accumulator of more than kMaxAccumulatorRegisters registers per thread,
// unless `registerBudget` is false.
constexpr int64_t kMaxAccumulatorRegisters = 192;
bool mmaShapeOf(const ir::GemmStmt* g, int64_t threads, const CudaOptions& options, MmaShape* out,
                bool fullRow = false, bool registerBudget = true);

struct MmaFragment {
  layout::Fragment fragment;
  int64_t warpsM, warpsN;
  int64_t mfma = 0;  // MmaShape::mfma
  bool colMajor = false;  // MmaShape::colMajor
};

struct MmaPlan {
  std::unordered_map<const ir::BufferNode*, MmaFragment> registerFragments;
  std::unordered_map<const ir::BufferNode*, layout::Layout> swizzled;
};

// `fullRow`: the gemms whose accumulators give each warp whole rows
// (fullRowGemms); `demoted`: accumulators to leave in shared memory;
// `grids`: gemms whose warp grid is already chosen (the wgmma gemms: the
// Hopper mainloop's, cuda_hopper.h, and those in place, WgmmaGemm).
MmaPlan planMma(const ir::KernelStmt& kernel, const std::vector<const ir::GemmStmt*>& gemms, int64_t threads,
                const CudaOptions& options, const std::unordered_set<const ir::BufferNode*>& writtenInParallel,
                const std::unordered_set<const ir::GemmStmt*>& fullRow = {},
                const std::unordered_set<const ir::BufferNode*>& demoted = {},
                const std::unordered_map<const ir::GemmStmt*, MmaShape>& grids = {});

// The logical (row, column) of register `reg` of thread `tid` in an mma
// accumulator of an [m, n] tile over a warpsM x warpsN warp grid: the
// closed-form inverse of Fragment::mmaAccumulator; with `mfma` (the MFMA
// block S), of Fragment::mfmaAccumulator over a wavefront grid; `vector`:
// the lane's columns per atom (Fragment::mmaAccumulator).
std::pair<ir::Expr, ir::Expr> mmaAccumulatorIndex(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN,
                                                  const ir::Expr& tid, const ir::Expr& reg, int64_t mfma = 0,
                                                  bool colMajor = false, int64_t vector = 2);

// How the cuda backend runs a Pipelined loop, from the plan that the
// pipeline-planning pass wrote on it (see cuda_kernel_analysis.cpp): the
// producer copies and gather nests that run ahead into `depth` versions of
// their shared buffers, `depth - 1` iterations ahead of the rest. No
// producers: the loop runs unpipelined, and `unsupported` says why when the
// plan asked for more.
struct PipelineSchedule {
  std::vector<const ir::CopyStmt*> producers;
  std::vector<ir::GatherNest> gathers;
  int64_t depth = 0;
  std::string unsupported;
  bool empty() const { return producers.empty() && gathers.empty(); }
  // The shared buffers the producers fill, copies first.
  std::vector<const ir::BufferNode*> tiles() const;
  // Whether `s` is one of the producers (a copy or a gather nest).
  bool produces(const ir::StmtNode* s) const;
};
PipelineSchedule pipelineSchedule(const ir::ForStmt* loop);

}  // namespace tlc::cuda
