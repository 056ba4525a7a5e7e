// The emitter of one CUDA kernel (one Kernel statement); see cuda_codegen.h
// for the lowering it implements. Internal to the CUDA backend.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/backends/c_emitter.h"
#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/cuda/cuda_fragment_layout.h"
#include "compiler/backends/cuda/cuda_hopper.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/passes/expand_pipelines.h"
#include "compiler/passes/layout.h"

namespace tlc::cuda {

enum class Placement { Global, Shared, Register };

class KernelScan;
struct KernelLayoutPlan;

struct BufferInfo {
  Placement place = Placement::Global;
  std::string name;
  int64_t sharedOffset = 0;
  int64_t elems = 0;  // per version, for shared and register buffers
  // Physical layout of a shared buffer (swizzle); row-major when absent.
  std::optional<layout::Layout> layout;
  // Elements per contiguous run of `layout` (a copy moves no wider vectors
  // into or out of it); 0: runs of 16 bytes or more.
  int64_t layoutRun = 0;
  // Pipelined shared buffers: `versions` copies, the live one chosen by `version`.
  int64_t versions = 1;
  ir::Expr version;
  // Fragments held in registers with an mma accumulator layout.
  std::optional<layout::Fragment> fragment;
  int64_t warpsM = 0, warpsN = 0;
  int64_t mfma = 0;  // the MFMA block of an MFMA accumulator layout (warps are then 64-lane wavefronts)
  bool colMajor = false;  // warps numbered column-major (MmaShape::colMajor)
  // The lane's columns per atom of the mma layout (RegisterLayout::vector):
  // 2, or 4 / 1 for 8-bit / tf32 gemm A operands.
  int64_t mmaVector = 2;
  // Fragments held in registers with an inferred row-group layout.
  std::optional<RegisterTile> tile;
  // Elements of padding after each row of a row-major shared buffer (spreads
  // column-wise accesses of consecutive rows over the banks).
  int64_t rowPad = 0;
};

// A shared buffer whose padded rows are not whole V-element vectors apart
// (the one-word padding against bank conflicts): it moves element by element.
inline bool splitRows(const BufferInfo& bi, const ir::Buffer& b, int64_t V) {
  int64_t last = 0;
  return bi.place == Placement::Shared && bi.rowPad && ir::constInt(b->shape.back(), &last) &&
         (last + bi.rowPad) % V != 0;
}

// Buffers read and written by a statement, counting only memory that other
// threads of the block can see (shared and global).
struct Accesses {
  std::unordered_set<const ir::BufferNode*> reads, writes;
  void merge(const Accesses& o);
  bool conflictsWith(const Accesses& later) const;
};

class KernelEmitter : public backend::CEmitter {
 public:
  KernelEmitter(const ir::PrimFunc& func, const ir::KernelStmt& kernel, const CudaOptions& options,
                DiagnosticEngine& diags, std::string name, const std::vector<KernelArg>& args);
  // Emits the kernel; false after reporting an error.
  bool emit(std::string* source, int64_t* sharedBytes);
  std::string typeName(DType t) const override;
  // After emit(): the threads a block is launched with (the kernel's, plus a
  // producer warpgroup for a warp-specialized mainloop) and its tensor maps.
  int64_t launchThreads() const { return threads_ + (hopper_ ? hopper_->producerThreads : 0); }
  // After emit(): 0, or the blocks per SM of a persistent kernel (CudaOptions::persistent).
  int64_t persistentBlocksPerSM() const { return persistent_ ? hopper_->blocksPerSM : 0; }
  const std::vector<TensorMapArg>& tensorMaps() const { return tensorMaps_; }
  // Whether a tensor map's strides are known only at launch (so that it may
  // not be encodable and the kernel needs a version without TMA).
  bool tensorMapsNeedFallback() const;

 protected:
  std::string loadExpr(const ir::Load* l) override;
  std::string callExpr(const ir::Call* c) override;

 private:
  // analysis (cuda_kernel_analysis.cpp)
  bool planBuffers();
  std::unordered_map<const ir::BufferNode*, int64_t> bankAwarePads(
      const KernelScan& scan, const KernelLayoutPlan& layouts,
      const std::unordered_map<const ir::BufferNode*, int64_t>& versions);
  Accesses accessesOf(const ir::Stmt& s);
  int64_t packSharedBuffers(const std::vector<const ir::BufferNode*>& shared);
  // What one iteration of a serial loop leaves for the next to wait on.
  Accesses loopCarried(const ir::ForStmt* f);
  bool isRegister(const ir::Buffer& b) const;
  // A pipeline tile (several versions): its copy_asyncs are ordered by the
  // pipeline's waits, not by the barrier analysis (AccessScan).
  bool isStagedTile(const ir::Buffer& b) const;
  int64_t hopperTileRegisters();
  int64_t widestWgmmaRegisters() const;
  // The blocks per SM that a kernel without tensor-core gemms asks ptxas to
  // fit (0: no request), with registers left for prefetched tiles or not;
  // see cuda_kernel_analysis.cpp.
  int64_t streamingBlocksPerSM(bool prefetchRoom) const;

  // statements (cuda_kernel_emitter.cpp)
  void emitBlock(const ir::Stmt& s, Accesses& pending);
  void emitBlockLoop(const ir::ForStmt* f, Accesses& pending);
  void emitBlockLeaf(const ir::Stmt& s);
  void emitThread(const ir::Stmt& s);
  void emitAlloc(const ir::AllocStmt* a, bool blockLevel);
  std::string fragmentPlacement(const ir::BufferNode* b, const BufferInfo& info) const;
  void emitParallelNest(const ir::ForStmt* f);
  std::string ownerGuard(const ir::BufferNode* b);
  void defineNestVars(const std::vector<const ir::ForStmt*>& nest, size_t count, ir::Expr flat);
  // T.print (cuda_print.cpp): a block-level print (one thread, or each owner
  // of a register fragment's elements), and the printf of one line.
  void emitBlockPrint(const ir::PrintStmt* p);
  void emitPrintLine(const ir::PrintStmt* p, const std::string& element, const std::vector<ir::Expr>& index,
                     const ir::Expr& value);
  void emitSerialFor(const ir::ForStmt* f, const std::function<void()>& body);
  // Whether Pipelined loop `f` runs as a pipeline of its schedule (*sched):
  // two or more stages, every tile given that many versions.
  bool runsPipelined(const ir::ForStmt* f, PipelineSchedule* sched);
  void emitPipelined(const ir::ForStmt* f, const PipelineSchedule& sched, Accesses& pending);
  void emitExpandedPipeline(const ir::ForStmt* f, const passes::PipelineExpansion& x, Accesses& pending);
  passes::ExpandedLoop openExpandedPipeline(const ir::ForStmt* f, const passes::PipelineExpansion& x,
                                            Accesses& pending);
  void emitVersion(const ir::VersionStmt* v, Accesses& pending);
  void emitAsyncCopy(const ir::CopyStmt* c, Accesses& pending);
  static std::vector<ir::Stmt> nonProducers(const ir::ForStmt* f, const PipelineSchedule& sched);
  // An element-wise producer copy split into loads issued ahead and stores
  // after the iteration's consumers (cuda_deferred_copies.cpp).
  // Without asynchronous copies (HIP) every producer is split so, in runs
  // of `vector` elements (register staging).
  struct DeferredCopy {
    const ir::CopyStmt* copy;
    std::string regs;   // the C name of the thread's registers
    int64_t perThread;  // runs per thread
    int64_t total;      // runs of the region
    std::string thread = "tid";  // the C name of the thread's index among
    int64_t threads = 0;         // the threads that move the copy
    int64_t vector = 1;          // elements per run
  };
  // The schedule Pipelined loop `f` runs with on this dialect: the planned
  // one where copies are asynchronous; without them, register-staged (two
  // stages, cuda_deferred_copies.cpp) or, when that cannot hold, empty (the
  // loop runs unpipelined). Whether the stages fit the shared memory is the
  // buffer plan's decision (planBuffers).
  PipelineSchedule dialectSchedule(const ir::ForStmt* f);
  struct PipelineExpansion {
    const ir::ForStmt* loop;
    const PipelineSchedule* schedule;
    ir::Var version;         // the stage a producer copy writes
    std::string iterations;  // the C name of the trip count
    std::string stageCounter;  // the C name of the current iteration's stage (see advanceStage)
    std::vector<DeferredCopy> deferred;  // the producers split around the iteration
    const DeferredCopy* deferredOf(const ir::CopyStmt* c) const;
  };
  PipelineExpansion openPipeline(const ir::ForStmt* f, const PipelineSchedule& sched, Accesses& pending,
                                 bool splitElementCopies = false);
  void advanceStage(const PipelineExpansion& px);
  std::string stagePlus(int64_t depth, const std::string& stage, int64_t by);
  void defineProducerIteration(const PipelineExpansion& px, const std::string& iter, const std::string& stage);
  void issueProducers(const PipelineExpansion& px, const std::string& iter, const std::string& stage, bool prologue);
  std::vector<DeferredCopy> deferredCopies(const ir::ForStmt* f, const PipelineSchedule& sched);
  std::optional<DeferredCopy> splitCopy(const ir::CopyStmt* c, const std::string& thread, int64_t threads);
  std::optional<DeferredCopy> stagedCopy(const ir::CopyStmt* c);
  ir::Var openDeferredSlots(const DeferredCopy& d, std::string* slot);
  void closeDeferredSlots(const DeferredCopy& d);
  void moveRun(const ir::Region& r, const std::vector<ir::Expr>& idx, int64_t V,
               const std::function<void(const std::string&)>& vectorMove,
               const std::function<void(const std::vector<ir::Expr>&, const std::string&)>& elementMove);
  void emitDeferredLoads(const DeferredCopy& d, const std::string& regs);
  void emitDeferredStores(const DeferredCopy& d, const std::string& regs);
  void issueDeferredPrologue(const PipelineExpansion& px);
  void declareDeferredRegisters(const PipelineExpansion& px);
  void storeDeferred(const PipelineExpansion& px, const std::string& iter);
  void issueAhead(const PipelineExpansion& px, const std::string& iter);
  void setProducerVersion(const PipelineExpansion& px, const ir::Var* v);
  // Register prefetch (cuda_register_prefetch.cpp): a global -> register
  // tile copy at the top of a loop's iterations, loaded one iteration ahead.
  const ir::CopyStmt* registerPrefetch(const ir::ForStmt* loop, const std::vector<ir::Stmt>& body);
  // Whether some serial or pipelined loop of the kernel would prefetch.
  bool hasRegisterPrefetch();
  struct RegisterPrefetch {
    const ir::ForStmt* loop;
    const ir::CopyStmt* copy;
    std::string current, next;  // the C names of the tile and of the next iteration's tile
    std::string first, end;     // the C names of the loop's bounds
  };
  RegisterPrefetch openRegisterPrefetch(const ir::ForStmt* f, const ir::CopyStmt* copy, Accesses& pending);
  void issueRegisterPrefetch(const RegisterPrefetch& p, const std::string& iter);
  void takeRegisterPrefetch(const RegisterPrefetch& p);
  void emitPrefetchedLoop(const ir::ForStmt* f, const ir::CopyStmt* prefetch, Accesses& pending);
  void barrier(Accesses& pending);
  // A barrier of the kernel's threads: __syncthreads(), or a named barrier
  // when a producer warpgroup runs beside them.
  std::string syncThreads() const;

  // The warp-specialized Hopper mainloop (cuda_hopper_mainloop.cpp).
  std::string tensorMapParams();
  int paramIndexOf(const ir::BufferNode* b) const;  // the function parameter holding tensor b, or -1
  // The producer's TMA loads of tile `i`, an im2col tile, into stage `stage` (cuda_im2col.cpp).
  void emitIm2colLoads(size_t i, const std::string& stage);
  void emitHopperSetup();
  // Opens the loop of a persistent kernel over its tiles and declares the
  // block variables (openTiles); openTileLoop first declares the consumers'
  // ring position, which lives across tiles.
  void openTiles();
  void openTileLoop();
  void emitHopperConsumer(const ir::ForStmt* f, Accesses& pending);
  void emitHopperLoop(const ir::ForStmt* f, Accesses& pending);
  // The general form with the statements after a gemm one iteration behind
  // its wgmmas (cuda_hopper_deferred.cpp): the gemm's index in `consumers`
  // when that computes the same values, else -1.
  int deferrableGemm(const ir::ForStmt* f, const std::vector<ir::Stmt>& consumers);
  void emitDeferredHopperLoop(const ir::ForStmt* f, const std::vector<ir::Stmt>& consumers, int gemmAt);
  void advanceRing(const std::string& stage, const std::string& phase);
  void releaseStage(const std::string& stage);  // a consumer's arrival on the stage's empty barrier
  // Loads `stmts` (a pipelined iteration's statements) always evaluate of
  // global tensors the kernel never writes, at addresses the statements do
  // not bind, loaded here into registers that stand for them until
  // preloaded_ is cleared (cuda_preloads.cpp).
  // `afterGemm`: only loads after a gemm of `stmts` (those before one are
  // issued early already).
  void preloadInvariantLoads(const std::vector<ir::Stmt>& stmts, bool afterGemm = true);
  // The loads preloadInvariantLoads would load for `stmts`, none where a
  // statement jumps; `bindings`: statements whose bound variables the
  // addresses must not use besides those of `stmts`.
  std::vector<const ir::Load*> invariantLoads(const std::vector<ir::Stmt>& stmts, bool afterGemm,
                                              const std::vector<ir::Stmt>& bindings = {});
  // Emits `name = load;` for a register declared earlier, and makes the
  // load stand for it (preloadedName) until preloaded_ is cleared.
  void assignPreload(const ir::Load* l, const std::string& name);
  void usePreload(const ir::Load* l, const std::string& name);
  const std::string* preloadedName(const ir::Load* l) const;
  std::string hopperTile(const HopperOperand& op, const std::string& stage);
  // tile operations (cuda_tile_ops.cpp); `partitioned`: spread over the block's
  // threads, otherwise executed in full by the calling thread.
  void emitCopy(const ir::CopyStmt* c, bool partitioned, bool async = false);
  void emitFill(const ir::FillStmt* f, bool partitioned);
  void emitReduce(const ir::ReduceStmt* r, bool partitioned);
  void emitGemm(const ir::GemmStmt* g, bool partitioned);
  void emitGemmScalar(const ir::GemmStmt* g, bool partitioned);
  bool emitGemmMma(const ir::GemmStmt* g);    // cuda_mma.cpp
  // The 32-bit A fragment register of a register A operand whose first tile
  // register is `reg` (registerAOperand), `vector` of them packed:
  // pack2 of 16-bit, pack4_bytes of 8-bit elements, a float rounded to tf32.
  std::string registerAWord(const std::string& tile, const ir::Expr& reg, int64_t vector);
  // Without NVIDIA tensor cores: accumulators `acc` (`regs` per thread, the
  // mma layout) by multiply-adds (cuda_mma_fma.cpp).
  void emitGemmLayoutFma(const ir::GemmStmt* g, const MmaShape& s, const std::string& acc, int64_t regs);
  // CDNA matrix cores: operands from LDS (a register A staged there) into
  // MFMA operand registers, one v_mfma per block and k step (cuda_mfma.cpp).
  void emitGemmMfma(const ir::GemmStmt* g, const MmaShape& s, const std::string& acc);
  // wgmma in place (cuda_wgmma.cpp); `wait` false: the caller waits for the
  // wgmmas (wgmma_wait<0>) and pins the accumulator afterwards
  // (wgmmaPin), so that other work runs while they do.
  bool emitGemmWgmma(const ir::GemmStmt* g, bool wait = true);
  std::string wgmmaPin(const ir::GemmStmt* g);
  bool isWgmmaGemm(const ir::GemmStmt* g);
  // wgmma kept in flight across a loop body's statements (cuda_wgmma.cpp):
  // the in-place gemms at the body's top level issued and not yet waited for.
  struct InFlightWgmma {
    std::vector<const ir::GemmStmt*> gemms;
    std::unordered_set<std::string> accumulators, operands;  // C names of their accumulators / operands
    Accesses reads;  // what they read of shared memory
  };
  std::optional<InFlightWgmma> inFlight_;
  const ir::GemmStmt* issuing_ = nullptr;  // emitted without its wait (joins inFlight_)
  // Whether the top-level body statement `s` may run while the wgmmas in
  // flight do (then emitted as usual), may join them (an in-place gemm: true
  // with *joins set), or needs them retired first (false).
  bool runsBesideWgmma(const ir::Stmt& s, bool* joins);
  // Waits for the wgmmas in flight and pins their accumulators; their reads
  // of shared memory become pending again (barriers emitted while they ran
  // did not order them).
  void retireWgmma(Accesses& pending);
  // The prefetching tensor-core mainloop (cuda_mma_mainloop.cpp).
  bool mmaMainloopEligible(const ir::GemmStmt* g, const PipelineSchedule& sched);
  void emitPipelinedMma(const ir::ForStmt* f, const PipelineSchedule& sched, const ir::GemmStmt* g,
                        Accesses& pending);
  void emitExpandedMma(const ir::ForStmt* f, const passes::PipelineExpansion& x, const ir::GemmStmt* g,
                       Accesses& pending);
  void openMmaMainloop(const ir::GemmStmt* g, const MmaShape& s);
  void emitMmaIteration(const MmaShape& s, const std::function<void()>& current,
                        const std::function<void(int buf)>& nextStage);
  void setTileVersion(const ir::Expr& v);
  void emitStageFragments(const MmaShape& s, const std::string& cond, const ir::Var& stage, const std::string& value,
                          int buf);
  void emitMmaFragmentLoads(const MmaShape& s, const ir::Expr& kk, int buf);
  void emitMmaSteps(const MmaShape& s, int buf);
  void emitFragmentCopy(const ir::CopyStmt* c);
  int64_t vectorWidth(const ir::CopyStmt* c);
  int64_t runWidth(const ir::CopyStmt* c);
  ir::Expr vectorRowStarts(const ir::Region& r, int64_t V);
  ir::Expr wholeVectorRows(const ir::Region& r, int64_t V);
  std::optional<std::vector<int64_t>> perThreadValues(const ir::Expr& e);
  ir::Expr regionInside(const ir::Region& r);
  bool loadsShifted(const ir::CopyStmt* c, int64_t V);
  // Copies whose source rows are not aligned (cuda_shifted_copies.cpp).
  ir::Expr elementsAfter(const ir::Buffer& b, const std::vector<ir::Expr>& index, int64_t n);
  std::string alignedRows(const ir::Region& r, int64_t V);
  void emitShiftedEdgeTile(const ir::CopyStmt* c, int64_t V);
  void declareCopyThreadOffsets(const ir::CopyStmt* c);
  // Gather nests as asynchronous copies (cuda_async_gather.cpp).
  struct GatherRuns {
    int64_t lanes = 1, bytes = 0;  // elements and bytes per cp.async (bytes 0: element by element)
    const ir::Load* load = nullptr;  // the global load stored (zero where the condition fails)
    // The condition's terms: those the same for every lane, and comparisons
    // that move with the lane (checked at the first and the last lane).
    std::vector<ir::Expr> free, edges;
    ir::VarMap lets;  // the nest's lets, inlined (to evaluate an edge at another lane)
    // The load's element offset as two int64 sums: the terms that stay the
    // same through the pipelined loop (the row of an im2col tile: image,
    // output row and column) and those that move with it (filter tap and
    // channel), so that the first are computed once per thread.
    ir::Expr invariantOffset, movingOffset;
    // Whether every run's first element lies a multiple of `lanes` from the
    // tensor's start: its alignment then follows from the tensor's. (Only
    // with the offsets split: the form that uses it addresses by them.)
    bool lanesAligned = false;
  };
  GatherRuns planGatherRuns(const ir::GatherNest& g, const ir::VarNode* iterVar);
  void splitGatherOffset(const ir::GatherNest& g, const ir::VarNode* iterVar, GatherRuns* r);
  void emitGather(const ir::GatherNest& g, const std::string& thread, int64_t threads, const std::string& syncFlag,
                  const ir::VarNode* iterVar);

  // register fragments with a row-group layout (cuda_register_tiles.cpp)
  struct TileLoops {
    ir::Expr row, col, reg[3];  // reg: the register index by FragmentRole
    int opened = 0;
    ir::Var pairLane;  // with `pairs`: the lane within the pair (0 or 1), a loop the caller opens
  };
  // Opens unrolled loops over the calling thread's elements of a `kind`
  // fragment; without `vectorLoop` the column is the first of each run.
  // With `pairs` (a Tile of even vector width), the vector loop steps over
  // pairs of lanes and the lane is 2 * pair + `pairLane`.
  TileLoops openTileLoops(const RegisterLayout& l, FragmentRole kind, bool vectorLoop, bool pairs = false);
  void closeTileLoops(const TileLoops& loops);
  void emitRegisterNest(const ir::ForStmt* f, const RegisterNest& nest);
  // Register nests computed two lanes at a time in 16-bit float pairs
  // (cuda_register_pairs.cpp): the store of the nest's body when it can be.
  const ir::StoreStmt* pairedStore(const ir::Stmt& body, const std::vector<const ir::ForStmt*>& loops,
                                   const RegisterNest& nest);
  // The body with its column `colLoop`'s variable as 2 * h + lane, h the
  // pair's first column / 2 (defined here): what is the same for both lanes
  // then reads the same.
  ir::Stmt pairColumns(const ir::Stmt& body, const ir::ForStmt* colLoop, const TileLoops& t);
  // A pairedStore body inside the pair loops of `t`: everything but the
  // pair arithmetic per lane, then that in pairs.
  void emitPairedBody(const ir::Stmt& body, const TileLoops& t, const std::function<void()>& defineLoopVars);
  // A 4-bit value unpacked from a byte of a shared tile whose aligned 32-bit
  // words are whole (cuda_register_pairs.cpp): read as the word holding the
  // byte, with the nibble's index in that word. Empty when it is not such a read.
  struct PackedWordRead {
    std::string word, index;
  };
  std::optional<PackedWordRead> packedWordRead(const ir::Call* c);
  // `packed`: a load that keeps the source elements, unconverted, packed in
  // the 32-bit words of the destination's register array (see packableLoad).
  void emitTileCopy(const ir::CopyStmt* c, bool packed = false);
  // Whether runs of the tile in `other` can be moved as vectors.
  bool vectorRuns(const ir::Region& other, const RegisterTile& tile);
  // Whether a global -> register tile copy can load packed words (whole vector runs of 32-bit multiples).
  bool packableLoad(const ir::CopyStmt* c);
  // Reductions of register tiles (cuda_register_tiles.cpp). The accumulator
  // type, identity, combining functor and combine expression of `r`.
  struct ReduceOps {
    DType acc;
    std::string accType, identity, op;
    bool isAbs = false, isSum = false;
    std::function<std::string(const std::string&, const std::string&)> combine;
    // A register tile source: its element in register `reg`, accumulator-typed.
    std::function<std::string(const std::string& reg)> value;
  };
  ReduceOps reduceOps(const ir::ReduceStmt* r);
  // How much of a register reduction to emit: all of it; only each thread's
  // own registers, combined into its partial destination values (a reduction
  // whose cross-thread combine waits until after its loop, see
  // deferredReductions); or only the combine, across the threads that hold
  // one row or column, of those partial values.
  enum class ReducePart { Whole, InThread, AcrossThreads };
  void emitRegisterReduce(const ir::ReduceStmt* r, ReducePart part);
  // The lanes the reductions' xor shuffles span (shuffleLanes): a warp of
  // 32, or a whole 64-lane CDNA wavefront.
  int64_t warpLanes() const { return shuffleLanes(options_.dialect(), threads_); }
  // reduce(X, m, dim=1) with a row's threads in one warp (of warpLanes()):
  // each thread combines its registers of a row, then xor shuffles combine
  // the row's lanes.
  void emitRowReduce(const ir::ReduceStmt* r, const ReduceOps& o, ReducePart part);
  // reduce(X, m, dim=1) of a register tile whose rows span several warps (a
  // row group wider than a warp, or an mma tile over warpsN > 1 warps):
  // shuffles within each warp, then the warps of a row combine their partial
  // results through shared memory (rowScratchOffset_), between two barriers.
  void emitWarpSpanningReduce(const ir::ReduceStmt* r, const ReduceOps& o, ReducePart part);
  // Assigns the scratch halves of the row reductions across warps; the
  // scratch bytes every user needs (0: none).
  int64_t planReductionScratch();
  // The scratch halves a statement's reductions (and MFMA register
  // operands, which stage through the scratch) read and write.
  Accesses scratchAccesses(const ir::Stmt& s);
  Accesses scratchAccesses(const ir::ReduceStmt* r);
  // Reads and writes of the given scratch halves.
  Accesses scratchUse(std::initializer_list<int> halves);
  // reduce(X, w, dim=0) of a register tile into a column vector of its group:
  // each thread combines its rows, xor shuffles combine the lanes holding the
  // same columns, and the warps holding them combine through shared memory
  // (rowScratchOffset_) between two barriers; every replica gets the result.
  void emitColumnReduce(const ir::ReduceStmt* r, const ReduceOps& o, ReducePart part);
  // The destination element of row slot `ri` of a row reduction of a register tile (see cuda_register_tiles.cpp).
  std::string reduceTarget(const ir::ReduceStmt* r, const RegisterLayout& l, const ir::Expr& ri, std::string* guard);
  // A thread's registers of row slot `ri` (column register `c`) folded into a new variable `a` (cuda_register_reduce.cpp).
  void emitThreadFold(const ReduceOps& o, const std::string& a, const RegisterLayout& l, const ir::Var& ri,
                      const ir::Var& c);
  // `if (...) ` that skips the padding (column register `c` past the tile) in a combine; empty when none.
  std::string columnGuard(const RegisterLayout& l, const ir::Expr& c);
  // The accumulating register reductions of loop `f` whose combine across
  // threads can wait until after the loop: reduce(..., clear=False) of a
  // register tile into a register vector that nothing else in the body
  // touches, at the body's top level (no branch or inner loop around it),
  // in a loop that does not jump. Each replica of the destination then
  // carries a partial result through the iterations (the first replica
  // starts from the destination's value, the others from the identity
  // where the combine is a sum); the combine after the loop makes them whole.
  std::vector<const ir::ReduceStmt*> deferredReductions(const ir::ForStmt* f);
  void emitDeferralStart(const ir::ReduceStmt* r);
  std::unordered_set<const ir::ReduceStmt*> deferred_;

  // vector accesses in plain Parallel nests (cuda_vector_loops.cpp)
  struct VectorRun {
    const ir::Load* load;        // a run read ahead (or nullptr)
    const ir::StoreStmt* store;  // a run written after the lanes (or nullptr)
    std::string name;            // its array of lanes
    std::string ok;              // loads: whether the array holds the run; stores: the mask of lanes that stored
    std::string first;           // loads in a whole chunk: the address of the run (C)
  };
  struct VectorNest {
    int64_t lanes = 0;
    ir::Var laneVar;
    std::string lane;  // the C name of the lane counter
    std::vector<VectorRun> loads, stores;
    std::unordered_map<const ir::Load*, size_t> loadOf;
    std::unordered_map<const ir::StoreStmt*, size_t> storeOf;
    // In a chunk known whole (cuda_vector_loops.cpp): the ifs whose
    // conditions hold at every lane, emitted as their then-branches.
    std::unordered_set<const ir::IfStmt*> taken;
    bool straight = false;  // emitting such a chunk: its runs are loaded
  };
  // The condition, as C, under which every lane of the chunk whose first
  // iteration is `first` runs the body of `nest` straight: each if's
  // condition holds at every lane, every vector load's run lies inside its
  // buffer and is aligned. Empty when some condition is not of that form.
  std::string wholeChunkCondition(const std::vector<const ir::ForStmt*>& nest, const ir::Stmt& body,
                                  const ir::Var& first, VectorNest& vn);
  bool vectorAccessible(const ir::BufferNode* b) const;
  std::string vectorMove(DType t, int64_t lanes, const std::string& dst, const std::string& src);
  // Before a statement of a vectorized nest: the vector loads of the runs its expressions read.
  void ensureVectorLoads(const std::vector<ir::Expr>& exprs);
  // Whether the run of `V` elements from `first` can be read as vectors (C).
  std::string runReadable(const ir::Buffer& b, const std::vector<ir::Expr>& first, int64_t V);
  // How many of a thread's chunks of the nest load their runs together
  // before any of them computes (see emitVectorNest); 0 for one at a time.
  int64_t batchedChunks(const ir::Expr& totalChunks, const VectorNest& vn, const std::string& whole) const;
  // Emits the nest with vector accesses when planVectorNest finds some; false otherwise.
  bool emitVectorNest(const std::vector<const ir::ForStmt*>& nest, const ir::Stmt& body);

  // addressing
  std::string access(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
  ir::Expr offsetExpr(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
  ir::Expr inBounds(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
  std::string maskedRead(const ir::Buffer& b, const std::vector<ir::Expr>& idx, DType as);
  void storeInside(const ir::Buffer& b, const std::vector<ir::Expr>& idx, const std::string& value);
  // Opens a loop over [0, total) with a fresh index variable: partitioned over
  // threads or serial. Returns the variable; close with close().
  ir::Var openLoop(const ir::Expr& total, bool partitioned, const std::string& hint);
  ir::Expr threadIdx() const { return ir::makeVarRef(tid_); }

  const ir::PrimFunc& func_;
  const ir::KernelStmt& kernel_;
  const CudaOptions& options_;
  DiagnosticEngine& diags_;
  std::string name_;
  const std::vector<KernelArg>& args_;
  std::unordered_map<const ir::BufferNode*, BufferInfo> bufs_;
  std::unordered_set<const ir::BufferNode*> writtenInParallel_;
  std::unordered_set<const ir::GemmStmt*> warnedScalar_;  // cuda-gemm-scalar reported
  FragmentLayoutPlan tiles_;  // register fragments and the Parallel nests over them
  // Register fragments inside a Parallel nest over their layout: the register index.
  std::unordered_map<const ir::BufferNode*, ir::Expr> fragmentRegister_;
  int64_t sharedBytes_ = 0;
  // Shared memory where the warps of a row combine a reduction (rows wider than a warp); -1 when unused.
  int64_t rowScratchOffset_ = -1;
  // The row reductions across warps use the scratch in two alternating halves
  // of scratchHalfBytes_ (their half in scratchHalf_) and end without a
  // barrier: the two halves are pseudo-buffers of the barrier analysis
  // (scratchAccesses), so the next use of a half waits for the reads of the
  // last one only where no barrier came between.
  std::unordered_map<const ir::ReduceStmt*, int> scratchHalf_;
  int64_t scratchHalfBytes_ = 0;
  // The row pitch of each MFMA gemm's register A operand staged through the
  // scratch (mfmaStagePitch, chosen by planBuffers).
  std::unordered_map<const ir::GemmStmt*, int64_t> mfmaStagePitches_;
  ir::Buffer scratchBuffers_[2];
  // Set by a leaf statement's emission that knows better than its accesses
  // what it leaves unordered for the statements after it (emitBlock takes it
  // instead of merging them): nothing, when it ends with a block barrier after
  // all its accesses (reductions across warps that keep their final barrier,
  // an MFMA operand staged from registers); a row reduction ending without
  // one, its reads of its scratch half after its barrier.
  std::optional<Accesses> pendingAfter_;
  // Inside loops whose emission does not carry the barrier analysis across
  // iterations (emitDeferredHopperLoop): reductions keep their final barrier.
  bool scratchUntracked_ = false;
  // A loop body's statements, and its prefix for the barrier at the end of
  // an iteration (emitBlockLoop, emitHopperLoop).
  Accesses emitIteration(const std::vector<ir::Stmt>& stmts, Accesses& inner);
  static Accesses nextIterationPrefix(Accesses prefix, const Accesses& carried);
  // Block barriers emitted so far (syncThreads).
  mutable int64_t barriersEmitted_ = 0;
  int64_t threads_ = 0;
  ir::Var tid_;
  bool failed_ = false;
  int parallelDepth_ = 0;
  // Per-thread (source, destination) offsets of a repeated copy's chunks,
  // declared before its loop (declareCopyThreadOffsets).
  std::unordered_map<const ir::CopyStmt*, std::vector<std::pair<std::string, std::string>>> hoistedCopyOffsets_;
  // The gemm of the mainloop being emitted, its warp coordinates and its
  // double-buffered operand fragments ([2][atoms][registers]).
  struct MmaMainloop {
    const ir::GemmStmt* gemm = nullptr;
    ir::Var lane, warpM, warpN;
    std::string aFrag, bFrag;
    std::vector<const ir::BufferNode*> tiles;  // the pipeline's tiles, whose stage setTileVersion selects
  } mmaMainloop_;
  // Shared buffers placed over each other's bytes (disjoint lifetimes) -> one
  // representative, so that the barrier analysis orders their accesses.
  std::unordered_map<const ir::BufferNode*, const ir::BufferNode*> sharedAlias_;
  std::optional<HopperMainloop> hopper_;
  // A persistent kernel: its blocks loop over the tiles of the logical grid
  // (tlc_tile); the consumers' ring position lives across tiles in
  // ringStage_ / ringPrev_ / ringPhase_.
  bool persistent_ = false;
  std::string ringStage_, ringPrev_, ringPhase_;
  struct RingPosition {
    std::string stage, phase, prev;
  };
  RingPosition consumerRing(bool withPrev);
  // The grid rows of a rasterization panel (1: the row order;
  // cuda_block_indices.cpp).
  int64_t rasterPanel() const;
  // The block variables of tile `tile` (a linear index over the logical
  // grid, x fastest; in panels of rasterPanel() rows), or of this block.
  void emitBlockIndices(const std::string& tile);
  std::vector<WgmmaGemm> wgmma_;  // gemms run as wgmma in place
  bool hasGemms_ = false;         // the kernel has block-level gemms (planBuffers)
  bool registerPrefetch_ = true;  // loops may load register tiles ahead (off where that costs blocks per SM)
  std::vector<TensorMapArg> tensorMaps_;
  std::vector<std::string> tmapName_;  // the tensor-map parameters of the loop's tiles
  // Staging tiles of accumulators stored to global memory by TMA
  // (cuda_tma_stores.cpp): the tile, its copy to the tensor, the tile's
  // shape and panel span, and the tensor's map (TensorMapArg::store).
  struct TmaStore {
    const ir::BufferNode* tile = nullptr;
    const ir::CopyStmt* copy = nullptr;
    int64_t rows = 0, cols = 0, span = 0;
    TensorMapArg arg;  // its box: the tile's rows along one tensor dimension, its panels along the last
    std::string mapName;
  };
  std::vector<TmaStore> tmaStores_;
  bool inTmaStorePlain_ = false;  // emitting the copy a TMA store falls back to
  void planTmaStores(const std::unordered_set<const ir::BufferNode*>& stagingTiles);
  const TmaStore* tmaStoreOf(const ir::BufferNode* tile) const;
  std::string tmaStoreParams();  // their map parameters, after the ring's
  void emitTmaStore(const ir::CopyStmt* c, const TmaStore& ts, const std::function<void()>& plain);
  int64_t barrierOffset_ = -1;  // full[stages] then empty[stages] mbarriers in shared memory
  VectorNest* vecNest_ = nullptr;  // the vectorized nest being emitted
  struct Preload {
    const ir::BufferNode* buffer;
    std::vector<ir::Expr> indices;  // simplified: a nest's body may be simplified before it is emitted
    std::string name;
  };
  std::vector<Preload> preloaded_;  // preloadInvariantLoads
  // Inside a Parallel nest over a replicated row or column vector: the C
  // condition of the replica that writes memory (see ownerGuard).
  std::string replicaOwner_;
  bool noUnroll_ = false;  // keep partitioned loops rolled (pipelined producers: register pressure)
  std::string body_;  // emitted statements

  friend class MmaGemm;
};

}  // namespace tlc::cuda
