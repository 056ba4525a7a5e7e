// The Hopper (sm_90a) gemm mainloop: a Pipelined loop of two global->shared
// copies followed by one float16 / bfloat16 gemm on the copied tiles becomes
// a warp-specialized loop. One extra warpgroup (the producer, threads
// [threads, threads + 128)) issues tensor copies (TMA) into a ring of
// `num_stages` shared-memory stages, each guarded by a `full` and an `empty`
// mbarrier; the kernel's own threads (the consumers, whole warpgroups) wait
// for a stage, multiply it with wgmma from shared-memory descriptors, and
// release it once the next stage's wgmmas are issued (wgmma.wait_group 1).
//
// The shared tiles are stored as TMA writes them: rows of the tile's
// contiguous dimension cut into panels of `span` bytes (128, 64 or 32, the
// swizzle span), each panel `rows` rows of `span` bytes with the swizzle of
// that span; wgmma reads them through descriptors with the same swizzle.
// The accumulator keeps the mma.sync layout of a warp grid of threads / 32
// warps by 1: each warp owns `slices` consecutive 16-row slices, each of
// which is the wgmma m64nN layout of the warp within one m64 instruction of
// its warpgroup (see HopperMainloop::slices).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/ir/im2col.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/substitute.h"

namespace tlc::cuda {

// One tile of the ring, fed by TMA (`copy`) or by the producer warpgroup's
// cp.async of a gather nest (`gather`; also a copy TMA cannot describe,
// `copyNest`).
struct HopperOperand {
  const ir::CopyStmt* copy = nullptr;  // the producer copy global -> shared
  const ir::BufferNode* tile = nullptr;
  int64_t rows = 0, cols = 0;  // the shared tile [rows, cols], cols contiguous
  bool mnMajor = false;        // contiguous along M (A) or N (B): a transposed wgmma operand
  int64_t span = 0;            // swizzle span in bytes (128, 64, 32)
  int64_t panels = 0;          // cols * element bytes / span
  int64_t stageBytes = 0;      // rows * cols * element bytes
  int rowDim = -1, colDim = -1;  // the tensor dimensions the tile's rows and columns run along
  // The copy with the kernel's lets before the loop substituted into its
  // regions (general form; the producer runs before those lets).
  std::shared_ptr<const ir::CopyStmt> substituted;
  const ir::CopyStmt* producerCopy() const { return substituted ? substituted.get() : copy; }
  // A gather nest of the loop (`gather->outer` is the loop's statement) and
  // the nest the producer runs: the same with the lets before the loop
  // substituted (`producerGather` points into `gatherStmt`).
  std::optional<ir::GatherNest> gather, producerGather;
  ir::Stmt gatherStmt;
  // A copy TMA cannot describe, issued by the producer threads: the nest
  // that `gather` points into (ir::copyAsGatherNest).
  ir::Stmt copyNest;
  // Such a copy without runs of 4 bytes (a column of 2-byte scales), with
  // the lets before the loop substituted: the producer threads move it
  // element by element, loading an iteration ahead of their stores.
  std::shared_ptr<const ir::CopyStmt> elementCopy;
  // A tile T.c2d_im2col fills (ir/im2col.h), loaded by TMA in im2col mode:
  // the nest's match, with the lets before the loop substituted into its
  // steps (the producer runs before them).
  std::optional<ir::Im2colMatch> im2col;
  // Whether TMA loads the tile (a tensor copy, or an im2col tile).
  bool tma() const { return copy || im2col; }
  // Whether wgmma reads the tile: it is then stored in panels (`span`);
  // otherwise (span 0) it keeps its own layout.
  bool inPanels() const { return span > 0; }
};

// A warp-specialized loop. Its gemm form (`gemm` set): the body is the two
// copies of the gemm's operands `a` and `b` and the gemm, whose consumer loop
// keeps one stage of wgmmas in flight. Its general form (`gemm` null): any
// body whose stage-0 statements are tensor copies (`tiles`; the K and V
// loads of attention): the consumers wait for a stage's tiles, run the other
// statements in program order (their gemms as wgmma in place, reading the
// tiles in the panel layout TMA writes, layout::Layout::panels), and release
// the stage at the end of the iteration.
// The span of a [rows, cols] tile's panels (128, 64 or 32 bytes), or 0 when
// its rows are of no panel width (32, 64 or a multiple of 128 bytes).
int64_t panelSpan(int64_t cols, int64_t elemBytes);
// Fills the shape fields of `out` (tile, rows, cols, span, panels, stageBytes) for a tile with panels of `span`.
void setPanelShape(const ir::BufferNode* tile, int64_t rows, int64_t cols, int64_t span, HopperOperand* out);

struct HopperMainloop {
  const ir::ForStmt* loop = nullptr;
  const ir::GemmStmt* gemm = nullptr;
  HopperOperand a, b;
  std::vector<HopperOperand> tiles;  // every tensor copy of the loop, then every gather (gemm form: a, b)
  ir::VarMap producerLets;           // the lets the producer substitutes (see HopperOperand)
  MmaShape shape;  // warpsM = threads / 32, warpsN = 1
  int64_t stages = 0;
  // 16-row slices of the accumulator per warp (block_M / (16 * warps)). Warp
  // w owns rows [w * 16 * slices, + 16 * slices); slice a of the warps of
  // warpgroup g is one m64 wgmma, whose 64 A rows the producer stores
  // together: logical 16-row chunk q of A lands at chunk
  // ((g * slices + a) * 4 + w % 4) of the tile, w = q / slices, a = q % slices.
  int64_t slices = 1;
  // Set by chooseHopperOccupancy once the kernel's shared memory is known.
  int64_t consumerRegs = 0, producerRegs = 0;  // setmaxnreg targets
  int64_t blocksPerSM = 1;                     // __launch_bounds__ minimum blocks per SM
  // Threads [threads, threads + producerThreads) produce: one warpgroup, or
  // two where gathers would leave one warp per scheduler issuing every run.
  int64_t producerThreads = 128;
};

// The tile of the loop's tensor copies that is `b`, or null.
const HopperOperand* loopTile(const HopperMainloop& h, const ir::BufferNode* b);

// The warp-specialized mainloop of `kernel` run by `threads` threads, or
// nullopt with *whyNot (empty when the kernel has no candidate loop).
std::optional<HopperMainloop> planHopperMainloop(const ir::KernelStmt& kernel, int64_t threads,
                                                 const CudaOptions& options, std::string* whyNot = nullptr);

// Whether the producer warpgroup runs gathers (all its threads then work).
bool hasGathers(const HopperMainloop& h);
// The bytes a stage's gathers fill (their tiles, one version each).
int64_t gatheredBytes(const HopperMainloop& h);
// Whether it gathers into a tile wgmma reads (through the async proxy, which
// the consumers fence after their wait).
bool gathersIntoPanels(const HopperMainloop& h);

// Registers per thread at the entry of a warp-specialized kernel of
// `threads` consumer threads, `producers` producer threads and `blocks`
// blocks per SM (a multiple of 8).
int64_t hopperEntryRegisters(int64_t blocks, int64_t threads, int64_t producers = 128);
// Whether `blocks` such blocks fit an SM: their shared memory, and the
// widest wgmma's accumulator (`instructionRegisters`) and 32 more at entry.
bool hopperBlocksFit(int64_t blocks, int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes,
                     int64_t instructionRegisters);
// Whether a gemm-form mainloop takes two blocks per SM: one consumer
// warpgroup, and two blocks fit.
bool gemmTakesTwoBlocks(int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes, int64_t instructionRegisters);

// Sets the blocks per SM the kernel is compiled for and the register
// targets that follow: two blocks when one consumer warpgroup would leave
// the tensor cores idle half the time and two blocks' shared memory fits;
// for a general-form loop, as many as leave the consumers the registers of
// the kernel's register tiles (`tileRegisters` per thread) and 32 more. A
// loop that gathers kTwoProducersGatheredBytes or more per stage at one
// block per SM takes two producer warpgroups where their registers allow
// (kGatherProducerRegisters each).
// Never more blocks than leave the widest wgmma's accumulator
// (`instructionRegisters` per thread) and 32 more at the kernel's entry.
void chooseHopperOccupancy(HopperMainloop* plan, int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes,
                           int64_t tileRegisters, int64_t instructionRegisters);

// The registers a gathering producer thread needs for its runs' addresses
// (ptxas spilled a convolution's gather below 88).
constexpr int64_t kGatherProducerRegisters = 88;
// The gathered bytes per stage from which a producer at one block per SM
// takes two warpgroups (chooseHopperOccupancy).
constexpr int64_t kTwoProducersGatheredBytes = 16 * 1024;

// Whether `options` targets the Hopper path at all (sm_90a, tensor cores, TMA).
bool hopperTarget(const CudaOptions& options);

// A tensor-core gemm outside a gemm mainloop (a loop body of copies and one
// gemm) that runs on sm_90a as wgmma in place: the warpgroups issue its
// wgmmas (k-steps of 16, widths of up to 256 columns) and wait for them
// before the next statement. B comes from a shared tile in the panel layout
// wgmma reads (layout::Layout::panels); A too (SS), or from registers (RS):
// a 16-bit tile of an accumulator's group (cuda_fragment_layout.h, "Mma
// groups"), which the emitter checks once the fragments are placed, falling
// back to mma.sync when A ended up in shared memory. The accumulator is a
// float32 fragment with one 16-row slice per warp: the warp grid is warps x 1
// when block_M = 16 x warps (each warpgroup owns 64 rows), or, when block_M
// is a smaller multiple of 64, the warpgroups split the columns too
// (block_M / 16 x warpgroups * 64 / block_M warps, numbered column-major:
// warpgroup g takes rows 64 * (g % (block_M / 64)) and the column slice
// g / (block_M / 64)). Such a gemm reads a fragment A operand from shared
// memory (each warpgroup needs whole rows of it), as a panel tile.
struct WgmmaGemm {
  const ir::GemmStmt* gemm = nullptr;
  MmaShape shape;          // the warp grid above; colMajor when warpsN > 1
  bool registerA = false;  // A is a fragment
  HopperOperand a, b;      // the shared tiles (`a` unused with registerA); no copy
};

// The shared operand tile of one of `gemms` that is `b`, or null.
const HopperOperand* wgmmaTile(const std::vector<WgmmaGemm>& gemms, const ir::BufferNode* b);

// The gemms of `kernel` that run as wgmma in place, with their operand tiles.
std::vector<WgmmaGemm> planWgmmaGemms(const ir::KernelStmt& kernel, const std::vector<const ir::GemmStmt*>& gemms,
                                      int64_t threads, const CudaOptions& options, const ir::GemmStmt* mainloop);

// wgmma descriptor arithmetic on an operand tile (rows along M or N for a
// K-major tile, along K for an MN-major one, in panels of `span` bytes):
// the widths of the instructions covering n columns (largest first), the
// descriptor's leading and stride byte offsets, and the byte offset of
// k-step `kk` (16 elements) at row / column `mn`.
std::vector<int64_t> wgmmaWidths(int64_t n);
// The wgmma helper (runtime/cuda/tlc_cuda.h) of kind k for an instruction
// `width` columns wide, each covering 32 bytes of k, with A from a
// shared-memory descriptor or (`registerA`, the RS form) from registers:
// with its template arguments for the K-major-only kinds (int8, float8,
// tf32); the 16-bit helper takes <kind, transA, transB> (RS: <kind, transB>)
// from the caller.
std::string wgmmaHelper(MmaKind k, int64_t width, bool registerA = false);
struct DescOffsets {
  int64_t lbo, sbo;
};
DescOffsets descOffsets(const HopperOperand& op);
int64_t tileOffset(const HopperOperand& op, int64_t kk, int64_t mn, int64_t elemBytes);

}  // namespace tlc::cuda
