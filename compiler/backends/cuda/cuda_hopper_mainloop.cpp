// Emission of the warp-specialized Hopper mainloop planned by
// planHopperMainloop (cuda_hopper.h): the mbarrier ring, the producer
// warpgroup issuing tensor copies, and the consumers' wgmma loop.
//
// Stage s of the ring has two mbarriers in shared memory: full[s] (one
// arrival, the producer's arrive.expect_tx, plus the bytes of both tiles)
// and empty[s] (one arrival per consumer warp, or per consumer thread where
// they read with plain loads a tile the producer threads copied). Iteration
// i uses stage i % stages with phase parity (i / stages) & 1; the producer
// waits for empty with the opposite parity, so its first pass over the ring
// does not wait. A consumer warp releases the stage of iteration i - 1 once
// wgmma.wait_group 1 in iteration i has retired that iteration's wgmmas.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"

#include "compiler/backends/c_names.h"
#include "compiler/ir/buffer_writes.h"
#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// Whether each consumer thread releases a stage itself (the empty barrier
// counts threads, not warps): when the producer threads write a tile by
// cp.async that the consumers read with plain loads, each reader's own
// arrive orders its reads before the next write of the stage.
bool threadsRelease(const HopperMainloop& h) {
  for (const HopperOperand& op : h.tiles)
    if (op.copyNest) return true;
  return false;
}

// The most iterations the producer threads' element-wise copies lag
// behind their loads (emitHopperSetup).
constexpr int64_t kMaxProducerLag = 4;

}  // namespace

// The registers of the kernel's register tiles, per thread, with room for
// a second copy of each product a gemm of the loop clears (the deferred
// form keeps two: cuda_hopper_deferred.cpp); chooseHopperOccupancy weighs
// them against the consumers' share.
int64_t KernelEmitter::hopperTileRegisters() {
  auto regsOf = [&](const BufferNode* b) { return (bufs_[b].elems * dtypeBytes(b->dtype) + 3) / 4; };
  int64_t regs = 0;
  for (auto& [b, info] : bufs_)
    if (info.place == Placement::Register) regs += regsOf(b);
  struct ClearedProducts : IRVisitor {
    std::vector<Buffer> products;
    void visitGemm(const GemmStmt* g) override {
      if (g->clearAccum) products.push_back(g->c.buffer);
    }
  } cleared;
  cleared.visit(hopper_->loop->body);
  for (const Buffer& b : cleared.products)
    if (isRegister(b)) regs += regsOf(b.get());
  return regs;
}

// Accumulator registers per thread of the kernel's widest wgmma
// instruction: an m64nW wgmma gives each of its 128 threads W / 2 elements.
int64_t KernelEmitter::widestWgmmaRegisters() const {
  int64_t regs = 0;
  auto widest = [&](const MmaShape& s, const Buffer& c) {
    std::vector<int64_t> widths = wgmmaWidths(s.n / std::max<int64_t>(s.warpsN, 1));
    if (!widths.empty()) regs = std::max(regs, (widths.front() / 2 * dtypeBytes(c->dtype) + 3) / 4);
  };
  if (hopper_ && hopper_->gemm) widest(hopper_->shape, hopper_->gemm->c.buffer);
  for (const WgmmaGemm& w : wgmma_) widest(w.shape, w.gemm->c.buffer);
  return regs;
}

// Moves a ring position to the next stage, flipping the phase at the end of the ring.
void KernelEmitter::advanceRing(const std::string& stage, const std::string& phase) {
  line("if (++" + stage + " == " + std::to_string(hopper_->stages) + ") { " + stage + " = 0; " + phase +
       " ^= 1; }");
}

// The consumers' ring position (stage, phase and, with `withPrev`, the
// stage to release): a persistent kernel's, which its consumers carry from
// tile to tile; otherwise fresh, declared here at the ring's start.
KernelEmitter::RingPosition KernelEmitter::consumerRing(bool withPrev) {
  if (persistent_) return {ringStage_, ringPhase_, withPrev ? ringPrev_ : ""};
  RingPosition r{fresh("stage"), fresh("phase"), withPrev ? fresh("prev_stage") : ""};
  line("int " + r.stage + " = 0" + (withPrev ? ", " + r.prev + " = 0" : "") + ";");
  line("unsigned " + r.phase + " = 0;");
  return r;
}

// A consumer's release of stage `stage` once its reads are done: each thread
// arrives, or each warp's first lane after the warp's lanes are past them.
void KernelEmitter::releaseStage(const std::string& stage) {
  if (threadsRelease(*hopper_)) {
    line("tlc::mbar_arrive(&tlc_empty[" + stage + "]);");
  } else {
    line("__syncwarp();");
    line("if (tid % 32 == 0) tlc::mbar_arrive(&tlc_empty[" + stage + "]);");
  }
}

std::string KernelEmitter::syncThreads() const {
  // wgmma reads shared memory through the async proxy, and so do TMA
  // stores: the generic writes (stores, cp.async) a barrier orders before
  // them need a proxy fence first.
  std::string fence = wgmma_.empty() && tmaStores_.empty() ? "" : "tlc::fence_proxy_async(); ";
  ++barriersEmitted_;
  return fence + (hopper_ ? "tlc::named_barrier(1, " + std::to_string(threads_) + ");" : "__syncthreads();");
}

int KernelEmitter::paramIndexOf(const BufferNode* b) const {
  for (size_t p = 0; p < func_.params.size(); ++p)
    if (func_.params[p].buffer.get() == b) return (int)p;
  return -1;
}

// The kernel parameters of the two tensor maps (after the function's).
std::string KernelEmitter::tensorMapParams() {
  if (!hopper_) return "";
  std::string params;
  tmapName_.clear();
  // Operands of a gemm the kernel only reads may be staged at launch.
  const bool gemm = hopper_->gemm || !wgmma_.empty();
  const ir::BufferWrites writes = ir::collectBufferWrites(kernel_.body);
  for (size_t i = 0; i < hopper_->tiles.size(); ++i) {
    const HopperOperand& op = hopper_->tiles[i];
    const int64_t boxRows = i == 0 && hopper_->gemm && hopper_->slices > 1 ? 16 : op.rows;
    if (op.im2col) {  // im2col mode over the image (box: pixels, channels)
      TensorMapArg t;
      t.paramIndex = paramIndexOf(op.im2col->x);
      TLC_CHECK(t.paramIndex >= 0, "an im2col image is not a tensor parameter");
      t.box = {boxRows, op.span / dtypeBytes(op.tile->dtype)};
      t.swizzle = (int)op.span;
      t.im2col = true;
      const ir::Im2colGeometry& g = op.im2col->geometry;
      for (int a = 0; a < 2; ++a) {
        t.geometry.kernel[a] = (int)g.kernel[a];
        t.geometry.stride[a] = (int)g.stride[a];
        t.geometry.pad[a] = (int)g.pad[a];
        t.geometry.dilation[a] = (int)g.dilation[a];
      }
      tensorMaps_.push_back(t);
      tmapName_.push_back(fresh(bufs_[op.im2col->x].name + "_im2col_tmap"));
      params += ", const __grid_constant__ tlc::TensorMap " + tmapName_[i];
      continue;
    }
    if (!op.copy) {  // a gather: no tensor map
      tmapName_.push_back("");
      continue;
    }
    const Region& src = op.copy->src;
    TensorMapArg t;
    t.paramIndex = paramIndexOf(src.buffer.get());
    TLC_CHECK(t.paramIndex >= 0, "a TMA source is not a tensor parameter");
    t.box.assign(src.buffer->shape.size(), 1);
    t.box[op.rowDim] = boxRows;
    t.box[op.colDim] = op.span / dtypeBytes(op.tile->dtype);
    t.swizzle = (int)op.span;
    t.stage = options_.stageTma && gemm && !writes.buffers.count(src.buffer.get());
    tensorMaps_.push_back(t);
    tmapName_.push_back(fresh(bufs_[src.buffer.get()].name + "_tmap"));
    params += ", const __grid_constant__ tlc::TensorMap " + tmapName_[i];
  }
  return params + tmaStoreParams();
}

bool KernelEmitter::tensorMapsNeedFallback() const {
  for (const TensorMapArg& t : tensorMaps_) {
    if (t.store) continue;  // stored without TMA where the launch cannot map it
    const Buffer& b = func_.params[t.paramIndex].buffer;
    int64_t inner = dtypeBytes(b->dtype);
    for (size_t d = b->shape.size(); d-- > 1;) {
      int64_t n;
      if (!constInt(b->shape[d], &n)) return true;
      inner *= n;
      if (inner % 16) return true;
    }
  }
  return false;
}

// The stage `stage` of an operand tile, as a pointer into shared memory.
std::string KernelEmitter::hopperTile(const HopperOperand& op, const std::string& stage) {
  const BufferInfo& info = bufs_[op.tile];
  return "(reinterpret_cast<" + typeName(op.tile->dtype) + "*>(tlc_smem + " + std::to_string(info.sharedOffset) +
         ") + (" + stage + ") * " + std::to_string(info.elems) + ")";
}

// At the top of the kernel: the barriers, then the producer warpgroup, which
// runs only the copies of the mainloop and leaves.
void KernelEmitter::emitHopperSetup() {
  const HopperMainloop& h = *hopper_;
  LocationScope at(*this, h.loop->loc);
  const std::string S = std::to_string(h.stages), T = std::to_string(threads_);
  line("unsigned long long* tlc_full = reinterpret_cast<unsigned long long*>(tlc_smem + " +
       std::to_string(barrierOffset_) + ");");
  line("unsigned long long* tlc_empty = tlc_full + " + S + ";");
  // full: the TMA thread's arrive.expect_tx, and with gathers one arrival
  // from each producer thread once its cp.async of the stage have landed.
  const bool gathers = hasGathers(h);
  int64_t tmaTiles = 0, bytes = 0;
  for (const HopperOperand& op : h.tiles)
    if (op.tma()) {
      ++tmaTiles;
      bytes += op.stageBytes;
    }
  open("if (tid == 0)");
  open("for (int s = 0; s < " + S + "; ++s)");
  line("tlc::mbar_init(&tlc_full[s], " + std::to_string((tmaTiles ? 1 : 0) + (gathers ? h.producerThreads : 0)) + ");");
  line("tlc::mbar_init(&tlc_empty[s], " + std::to_string(threadsRelease(h) ? threads_ : threads_ / 32) + ");");
  close();
  line("tlc::mbar_init_fence();");
  close();
  line("__syncthreads();");
  open("if (tid >= " + T + ")");
  line("tlc::reg_dealloc<" + std::to_string(h.producerRegs) + ">();");
  // One thread issues the tensor copies; with gathers all the producer
  // threads run the loop.
  open(gathers ? "" : "if (tid == " + T + ")");
  const std::string ptid = gathers ? fresh("ptid") : "";
  if (gathers) line("const int " + ptid + " = tid - " + T + ";");
  const std::string tmaThread = gathers ? ptid + " == 0" : "";
  for (const HopperOperand& op : h.tiles)
    if (op.gather) {  // the gathers store through the tile's name
      const BufferInfo& info = bufs_[op.tile];
      std::string t = typeName(op.tile->dtype);
      line(t + "* " + info.name + " = reinterpret_cast<" + t + "*>(tlc_smem + " + std::to_string(info.sharedOffset) +
           ");");
    }
  if (tmaTiles && gathers) open("if (" + tmaThread + ")");
  for (const std::string& m : tmapName_)
    if (!m.empty()) line("tlc::tma_prefetch(&" + m + ");");
  if (tmaTiles && gathers) close();
  const ForStmt* f = h.loop;
  std::string n = fresh("n_iter"), it = fresh("iter"), stage = fresh("stage"), phase = fresh("phase");
  line("int " + stage + " = 0;");
  line("unsigned " + phase + " = 0;");
  // When every copy of the producer threads goes element by element, each
  // thread stores a stage's elements and arrives on that stage's `full`
  // `lag` iterations later, after its wait for that iteration's stage: the
  // loads' latency overlaps the waits instead of holding up each arrival.
  // A thread's store waits for its load, so the producer runs `lag`
  // iterations per memory latency: one was a stage per latency, which bound
  // the W4A16 decode (bench/RESULTS.md, 2026-12-07). The consumers, waiting
  // on `full` of stage i, have released every stage the producer waits for
  // up to iteration i + lag when lag <= stages - 1; lag <= stages - 2 leaves
  // them a stage of work while the producer gets to it. Each lagging
  // iteration keeps its elements in registers of its own (the loop is
  // unrolled by `lag`): a move of a register whose load is in flight would
  // wait for it.
  std::vector<std::pair<const HopperOperand*, DeferredCopy>> split;
  for (const HopperOperand& op : h.tiles) {
    if (!op.gather) continue;
    std::optional<DeferredCopy> d;
    if (op.elementCopy) d = splitCopy(op.elementCopy.get(), ptid, h.producerThreads);
    if (!d) {
      split.clear();
      break;
    }
    split.emplace_back(&op, *d);
  }
  // A persistent kernel's producer walks the same tiles as its consumers,
  // continuing around the ring from one tile to the next.
  if (persistent_) openTiles();
  line("const int " + n + " = " + expr(substitute(f->extent, h.producerLets)) + ";");
  const int64_t lag = split.empty() ? 1 : std::clamp<int64_t>(h.stages - 2, 1, kMaxProducerLag);
  // Per lagging iteration: the stage its elements go to, and per copy its registers.
  std::vector<std::string> prevStage;
  std::vector<std::vector<std::string>> regsOf(lag);
  for (int64_t r = 0; r < lag && !split.empty(); ++r) {
    prevStage.push_back(fresh("prev_stage"));
    line("int " + prevStage[r] + " = 0;");
    for (auto& [op, d] : split) {
      regsOf[r].push_back(r ? fresh(d.regs) : d.regs);
      line(typeName(d.copy->src.buffer->dtype) + " " + regsOf[r].back() + "[" + std::to_string(d.perThread) + "];");
    }
  }
  // The split copies' stores from registers set `r` into their stage, and the arrival.
  auto storeSplit = [&](int64_t r) {
    Var version = makeVar("stage");
    markNonNegative(version);
    line("const int " + varName(version) + " = " + prevStage[r] + ";");
    for (size_t c = 0; c < split.size(); ++c) {
      auto& [op, d] = split[c];
      bufs_[op->tile].version = makeVarRef(version);
      emitDeferredStores(d, regsOf[r][c]);
      bufs_[op->tile].version = nullptr;
    }
    line("tlc::mbar_arrive(&tlc_full[" + prevStage[r] + "]);");
  };
  // Tensor copies whose tiles are read only where one condition holds
  // (CopyStmt::usedWhen: hoist-guarded-copies' block-sparse loads) are not
  // issued where it does not; the stage's `full` then completes on the
  // producer's plain arrival, and the consumers skip the stage's work.
  Expr usedWhen;
  if (tmaTiles && !gathers && split.empty())
    for (const HopperOperand& op : h.tiles) {
      if (!op.tma()) continue;
      Expr u = op.copy ? op.producerCopy()->usedWhen : nullptr;
      bool same = u && (!usedWhen || structurallyEqual(u, usedWhen));
      usedWhen = same ? u : nullptr;
      if (!same) break;
    }
  // One iteration of the loop, `it` its index, `r` the register set of its split copies.
  auto iteration = [&](int64_t r) {
    line("tlc::mbar_wait(&tlc_empty[" + stage + "], " + phase + " ^ 1);");
    const std::string expectTx = "tlc::mbar_arrive_expect_tx(&tlc_full[" + stage + "], " + std::to_string(bytes) + ");";
    if (tmaTiles && !gathers && !usedWhen) line(expectTx);
    if (isNonNegative(f->min)) markNonNegative(f->var);
    line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(substitute(f->min, h.producerLets)) +
         " + " + it + ";");
    if (tmaTiles && gathers) {
      open("if (" + tmaThread + ")");
      line(expectTx);
    }
    if (usedWhen) {
      open("if (" + expr(usedWhen) + ")");
      line(expectTx);
    }
    for (size_t i = 0; i < h.tiles.size(); ++i) {
      const HopperOperand& op = h.tiles[i];
      if (op.im2col) {
        emitIm2colLoads(i, stage);
        continue;
      }
      if (!op.copy) continue;
      LocationScope copyAt(*this, op.copy->loc);
      const Region& src = op.producerCopy()->src;
      int64_t panelElems = op.span / dtypeBytes(op.tile->dtype);
      // The gemm form's A: 16-row chunks go where their wgmma reads them (HopperMainloop::slices).
      int64_t chunks = i == 0 && h.gemm && h.slices > 1 ? op.rows / 16 : 1;
      for (int64_t p = 0; p < op.panels; ++p)
        for (int64_t q = 0; q < chunks; ++q) {
          int64_t w = q / h.slices, a = q % h.slices;
          int64_t physical = chunks > 1 ? ((w / 4 * h.slices + a) * 4 + w % 4) * 16 : 0;
          std::string coords;
          for (size_t d = src.ranges.size(); d-- > 0;) {
            Expr c = src.ranges[d].min;
            if ((int)d == op.colDim && p) c = add(c, makeInt(p * panelElems, c->dtype));
            if ((int)d == op.rowDim && chunks > 1 && q) c = add(c, makeInt(q * 16, c->dtype));
            coords += ", (int)(" + expr(c) + ")";
          }
          line("tlc::tma_load_" + std::to_string(src.ranges.size()) + "d(" + hopperTile(op, stage) + " + " +
               std::to_string(p * op.rows * panelElems + physical * panelElems) + ", &" + tmapName_[i] + ", &tlc_full[" +
               stage + "]" + coords + ");");
        }
    }
    if (tmaTiles && gathers) close();
    if (usedWhen) {
      close("} else {");
      ++indent_;
      line("tlc::mbar_arrive(&tlc_full[" + stage + "]);");
      close();
    }
    if (!split.empty()) {
      // Iteration it - lag's elements into their stage (its registers are
      // read at once, before this iteration's loads overwrite them).
      open("if (" + it + " >= " + std::to_string(lag) + ")");
      storeSplit(r);
      close();
      for (size_t c = 0; c < split.size(); ++c) emitDeferredLoads(split[c].second, regsOf[r][c]);
      line(prevStage[r] + " = " + stage + ";");
    } else if (gathers) {
      // The gathers' runs into this stage, then one arrival per thread on
      // `full` when they have landed (at once after element-wise stores,
      // which a plain arrival releases).
      Var version = makeVar("stage");
      markNonNegative(version);
      line("const int " + varName(version) + " = " + stage + ";");
      std::string sync = fresh("sync");
      line("bool " + sync + " = false;");
      for (const HopperOperand& op : h.tiles)
        if (op.gather) {
          bufs_[op.tile].version = makeVarRef(version);
          emitGather(*op.producerGather, ptid, h.producerThreads, sync, f->var.get());
          bufs_[op.tile].version = nullptr;
        }
      line("if (" + sync + ") { tlc::cp_async_wait_all(); tlc::mbar_arrive(&tlc_full[" + stage + "]); }");
      line("else tlc::cp_async_mbar_arrive(&tlc_full[" + stage + "]);");
    }
    advanceRing(stage, phase);
  };
  line("#pragma unroll 1");  // rolled: same speed, much less for NVRTC to compile (bench/RESULTS.md)
  if (lag == 1) {
    open("for (int " + it + " = 0; " + it + " < " + n + "; ++" + it + ")");
    iteration(0);
  } else {
    // Unrolled by `lag`: iteration first + r keeps its elements in set r.
    const std::string first = fresh("iter_first"), L = std::to_string(lag);
    open("for (int " + first + " = 0; " + first + " < " + n + "; " + first + " += " + L + ")");
    for (int64_t r = 0; r < lag; ++r) {
      open(r ? "if (" + first + " + " + std::to_string(r) + " < " + n + ")" : "");
      line("const int " + it + " = " + first + " + " + std::to_string(r) + ";");
      iteration(r);
      close();
    }
  }
  close();
  // The last iterations' elements (of each register set, the iteration that used it last).
  for (int64_t r = 0; r < lag && !split.empty(); ++r) {
    open("if (" + n + " > " + std::to_string(r) + ")");
    storeSplit(r);
    close();
  }
  if (persistent_) close();
  close();
  line("return;");
  close();
  if (h.consumerRegs > 0) line("tlc::reg_alloc<" + std::to_string(h.consumerRegs) + ">();");
}

void KernelEmitter::openTiles() {
  open("for (unsigned long long tlc_tile = blockIdx.x; tlc_tile < tlc_tiles; tlc_tile += gridDim.x)");
  emitBlockIndices("tlc_tile");
}

void KernelEmitter::openTileLoop() {
  ringStage_ = fresh("ring_stage");
  ringPrev_ = fresh("ring_prev");
  ringPhase_ = fresh("ring_phase");
  line("int " + ringStage_ + " = 0, " + ringPrev_ + " = 0;");
  line("unsigned " + ringPhase_ + " = 0;");
  openTiles();
}

void KernelEmitter::emitHopperConsumer(const ForStmt* f, Accesses& pending) {
  const HopperMainloop& h = *hopper_;
  LocationScope at(*this, h.gemm->loc);
  const GemmStmt* g = h.gemm;
  int64_t eb = dtypeBytes(h.a.tile->dtype);
  std::string kind = h.shape.kind == MmaKind::F16 ? "0" : "1";
  std::string ta = h.a.mnMajor ? "1" : "0", tb = h.b.mnMajor ? "1" : "0";
  open("");
  std::string n = fresh("n_iter"), it = fresh("iter"), wg = fresh("warpgroup");
  const std::string& acc = bufs_[g->c.buffer.get()].name;
  const std::string pin = "tlc::fence_registers<" + std::to_string(bufs_[g->c.buffer.get()].elems) + ">(" + acc + ");";
  line("const int " + n + " = " + expr(f->extent) + ";");
  line("const int " + wg + " = tid / 128;");
  line(pin);
  const auto [stage, phase, prev] = consumerRing(true);
  line("#pragma unroll 1");  // rolled: same speed, much less for NVRTC to compile (bench/RESULTS.md)
  open("for (int " + it + " = 0; " + it + " < " + n + "; ++" + it + ")");
  line("tlc::mbar_wait(&tlc_full[" + stage + "], " + phase + ");");
  // Gathered tiles were written by cp.async (the generic proxy); wgmma reads through the async proxy.
  if (gathersIntoPanels(h)) line("tlc::fence_proxy_async();");
  line("tlc::wgmma_fence();");
  line(pin);
  auto dA = descOffsets(h.a), dB = descOffsets(h.b);
  // The descriptors of this stage, at its first k-step and the warpgroup's rows.
  std::string da = fresh("desc_a"), db = fresh("desc_b");
  std::string wgRows = h.a.mnMajor ? std::to_string(64 / (h.a.span / eb)) + " * " + std::to_string(h.a.rows * h.a.span)
                                   : std::to_string(h.slices * 64 * h.a.span);
  line("const unsigned long long " + da + " = tlc::smem_desc(reinterpret_cast<const char*>(" + hopperTile(h.a, stage) +
       ") + " + wg + " * " + wgRows + ", " + std::to_string(dA.lbo) + ", " + std::to_string(dA.sbo) + ", " +
       std::to_string(h.a.span) + ");");
  line("const unsigned long long " + db + " = tlc::smem_desc(" + hopperTile(h.b, stage) + ", " +
       std::to_string(dB.lbo) + ", " + std::to_string(dB.sbo) + ", " + std::to_string(h.b.span) + ");");
  // Each wgmma covers 32 bytes of k: k16 of 16-bit elements, k32 of 8-bit
  // ones, k8 of tf32 (wgmmaHelper; all but the 16-bit kinds K-major).
  const int64_t kStep = 32 / eb;
  for (int64_t kk = 0; kk < h.shape.k / kStep; ++kk) {
    for (int64_t a = 0; a < h.slices; ++a) {
      int64_t c0 = 0;
      for (int64_t w : wgmmaWidths(h.shape.n)) {
        int64_t offA = tileOffset(h.a, kk, a * 64, eb), offB = tileOffset(h.b, kk, c0, eb);
        std::string op = wgmmaHelper(h.shape.kind, w) +
                         (wgmmaKMajorOnly(h.shape.kind) ? "(" : "<" + kind + ", " + ta + ", " + tb + ">(");
        line(op + "&" + acc + "[" + std::to_string((a * h.shape.n + c0) / 8 * 4) + "], " + da + " + " +
             std::to_string(offA >> 4) + ", " + db + " + " + std::to_string(offB >> 4) + ", 1);");
        c0 += w;
      }
    }
  }
  line("tlc::wgmma_commit();");
  line("tlc::wgmma_wait<1>();");
  line(pin);
  line("if (" + it + " > 0 && tid % 32 == 0) tlc::mbar_arrive(&tlc_empty[" + prev + "]);");
  line(prev + " = " + stage + ";");
  advanceRing(stage, phase);
  close();
  line("tlc::wgmma_wait<0>();");
  line(pin);
  // The last stage goes back to the producer, which fills it for the next tile.
  if (persistent_) line("if (" + n + " > 0 && tid % 32 == 0) tlc::mbar_arrive(&tlc_empty[" + prev + "]);");
  close();
  pending = accessesOf(f->body);
}

// The general form's consumers: each iteration waits for its stage's tiles,
// runs the loop's other statements in program order with the tiles at that
// stage, and releases the stage: every read of it is complete by then (the
// in-place wgmmas are waited for), so each warp arrives once its lanes are
// past the body. No block-wide barrier orders the iterations unless what the
// body accesses after its last barrier conflicts with what it accesses before
// its first.
void KernelEmitter::emitHopperLoop(const ForStmt* f, Accesses& pending) {
  const HopperMainloop& h = *hopper_;
  LocationScope at(*this, f->loc);
  barrier(pending);
  std::vector<Stmt> consumers = nonProducers(f, pipelineSchedule(f));
  if (int g = deferrableGemm(f, consumers); g >= 0) {  // cuda_hopper_deferred.cpp
    emitDeferredHopperLoop(f, consumers, g);
    pending = accessesOf(f->body);
    return;
  }
  // The tiles are ordered by the barriers of the ring, not by the block's.
  auto withoutTiles = [&](Accesses a) {
    for (const HopperOperand& op : h.tiles) {
      a.reads.erase(op.tile);
      a.writes.erase(op.tile);
    }
    return a;
  };
  Accesses carried = withoutTiles(loopCarried(f));
  open("");
  // A persistent kernel's consumers continue around the ring from tile to tile.
  std::string n = fresh("n_iter"), it = fresh("iter");
  line("const int " + n + " = " + expr(f->extent) + ";");
  const RingPosition ring = consumerRing(false);
  const std::string &stage = ring.stage, &phase = ring.phase;
  line("#pragma unroll 1");  // rolled: same speed, much less for NVRTC to compile (bench/RESULTS.md)
  open("for (int " + it + " = 0; " + it + " < " + n + "; ++" + it + ")");
  line("tlc::mbar_wait(&tlc_full[" + stage + "], " + phase + ");");
  if (gathersIntoPanels(h)) line("tlc::fence_proxy_async();");
  open("");
  if (isNonNegative(f->min)) markNonNegative(f->var);
  line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(f->min) + " + " + it + ";");
  Var version = makeVar("stage");
  markNonNegative(version);
  line("const int " + varName(version) + " = " + stage + ";");
  for (const HopperOperand& op : h.tiles) bufs_[op.tile].version = makeVarRef(version);
  Accesses inner;
  preloadInvariantLoads(consumers);
  Accesses prefix = emitIteration(consumers, inner);
  preloaded_.clear();
  for (const HopperOperand& op : h.tiles) bufs_[op.tile].version = nullptr;
  // The accesses since the body's last barrier against the next iteration's
  // before its first: a barrier only where they conflict.
  if (withoutTiles(inner).conflictsWith(nextIterationPrefix(withoutTiles(prefix), carried))) line(syncThreads());
  close();
  // Tiles the body wrote (the generic proxy) are refilled by the tensor copies
  // (the asynchronous proxy) once the stage is released.
  bool tilesWritten = false;
  for (const Stmt& c : consumers) {
    Accesses a = accessesOf(c);
    for (const HopperOperand& op : h.tiles) tilesWritten |= a.writes.count(op.tile) > 0;
  }
  if (tilesWritten) line("tlc::fence_proxy_async();");
  releaseStage(stage);
  advanceRing(stage, phase);
  close();
  close();
  // Past the loop nothing orders the consumers' last reads of the tiles with
  // what the block does next (memory that reuses the ring's bytes, such as an
  // accumulator's staging buffer): they stay pending.
  pending = accessesOf(f->body);
}

}  // namespace tlc::cuda
