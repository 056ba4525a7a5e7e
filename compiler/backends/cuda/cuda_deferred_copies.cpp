// Element-wise producer copies of a pipeline, split around the iteration.
//
// A producer copy of a pipelined loop that no asynchronous copy can move (a
// column of 2-byte scales: cp.async moves 4, 8 or 16 contiguous bytes) goes
// element by element, and a thread storing such an element into shared
// memory first waits for its global load: issued at the top of every
// iteration, the copy would stall the block for a memory latency each time.
// Such a copy is split instead. Its loads are issued where the copy stands
// (depth - 1 iterations ahead of their use), into a few registers per
// thread; its stores into the stage run after the iteration's consumers, so
// that the loads' latency overlaps the iteration's work. The stage they
// write is free for the whole iteration (its last readers finished before
// the barrier at the top of the iteration) and is read depth - 1 >= 1
// iterations later, after that many barriers. The prologue loads the
// elements of all its stages before it stores any. The producer threads of
// a warp-specialized loop split such copies too (emitHopperSetup: stores
// stages - 2 iterations, at least one, behind the loads, each after the
// wait for its iteration's stage).
//
// Register staging (dialects without asynchronous copies: HIP, whose
// gfx90a / gfx942 have no cp.async): every producer of a pipelined loop is
// split so, moving runs of up to 16 bytes (vectorWidth) where both sides
// allow. With two stages, iteration i loads iteration i + 1's tiles into
// registers before its consumers (the MFMAs) and stores them into the other
// stage after them: the global latency overlaps the math, and one barrier
// per iteration (at its top) orders both the stores before their readers
// and the readers of a stage before its next stores. The registers a
// thread stages are bounded (kMaxStagedBytes); a loop needing more, or with
// a gather nest or a jump, runs unpipelined, and so does one whose second
// stages the buffer plan cannot fit in the LDS (planBuffers).
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_region_index.h"
#include "compiler/ir/loop_jumps.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;
using namespace regions;

namespace {

// The most elements a thread holds per split copy: a column of scales for
// 128 or 256 rows is one or two per thread.
constexpr int64_t kMaxDeferredPerThread = 4;

// The most bytes a thread stages in registers for one register-staged
// pipeline: 64 of a CDNA lane's 512 32-bit registers (256 VGPRs and 256
// AGPRs at one wavefront per SIMD). An element moved alone takes a register
// of its own.
constexpr int64_t kMaxStagedBytes = 256;

}  // namespace

PipelineSchedule KernelEmitter::dialectSchedule(const ForStmt* f) {
  PipelineSchedule sched = pipelineSchedule(f);
  if (options_.dialect().asyncCopies || sched.empty()) return sched;
  // A gather nest has no register-staged form; a `continue` or `break`
  // would skip the stores at the bottom.
  if (!sched.gathers.empty() || jumpsOutOf(f->body)) return {};
  int64_t bytes = 0;
  for (const CopyStmt* c : sched.producers) {
    std::optional<DeferredCopy> d = stagedCopy(c);
    if (!d) return {};
    bytes += d->perThread * std::max<int64_t>(d->vector * dtypeBytes(c->src.buffer->dtype), 4);
  }
  if (bytes > kMaxStagedBytes) return {};
  // The loads run one iteration ahead into registers: two stages suffice.
  sched.depth = 2;
  return sched;
}

// Producer `c` of a register-staged pipeline (its register names still
// unset): runs of V elements (as vectorWidth: the buffers are in memory),
// each thread moving every threads_-th; nullopt when its size is unknown.
std::optional<KernelEmitter::DeferredCopy> KernelEmitter::stagedCopy(const CopyStmt* c) {
  int64_t elems = 0;
  if (!constInt(product(extentsOf(c->src, nonUnitDims(c->src))), &elems) || elems <= 0) return std::nullopt;
  const int64_t V = std::max<int64_t>(runWidth(c), 1), total = elems / V;
  return DeferredCopy{c, "", (total + threads_ - 1) / threads_, total, "tid", threads_, V};
}

std::vector<KernelEmitter::DeferredCopy> KernelEmitter::deferredCopies(const ForStmt* f,
                                                                        const PipelineSchedule& sched) {
  std::vector<DeferredCopy> out;
  // A `continue` or `break` would skip the stores at the bottom.
  if (jumpsOutOf(f->body)) return out;
  if (!options_.dialect().asyncCopies) {
    // Register staging: every producer (dialectSchedule admitted the loop).
    for (const CopyStmt* c : sched.producers) {
      TLC_CHECK(bufs_[c->src.buffer.get()].place == Placement::Global &&
                    bufs_[c->dst.buffer.get()].place == Placement::Shared,
                "a register-staged producer copies global to shared memory");
      out.push_back(*stagedCopy(c));
      out.back().regs = fresh("staged");
    }
    return out;
  }
  for (const CopyStmt* c : sched.producers) {
    const BufferInfo& src = bufs_[c->src.buffer.get()];
    const BufferInfo& dst = bufs_[c->dst.buffer.get()];
    if (src.place != Placement::Global || dst.place != Placement::Shared || src.fragment || dst.fragment ||
        src.tile || dst.tile || vectorWidth(c) != 0)
      continue;
    if (auto split = splitCopy(c, "tid", threads_)) out.push_back(*split);
  }
  return out;
}

// `c` moved by `threads` threads (`thread` the C name of the index), split,
// or nullopt when it has more than a few elements per thread.
std::optional<KernelEmitter::DeferredCopy> KernelEmitter::splitCopy(const CopyStmt* c, const std::string& thread,
                                                                    int64_t threads) {
  int64_t total = 0;
  if (!constInt(product(extentsOf(c->src, nonUnitDims(c->src))), &total) || total <= 0) return std::nullopt;
  int64_t per = (total + threads - 1) / threads;
  if (per > kMaxDeferredPerThread) return std::nullopt;
  return DeferredCopy{c, fresh("deferred"), per, total, thread, threads};
}

const KernelEmitter::DeferredCopy* KernelEmitter::PipelineExpansion::deferredOf(const CopyStmt* c) const {
  for (const DeferredCopy& d : deferred)
    if (d.copy == c) return &d;
  return nullptr;
}

// Opens the loop over the thread's slots of a split copy (the C name of the
// slot index in `*slot`; inside, the element `e` the slot holds, which is in
// the region) and returns the variable `e`.
Var KernelEmitter::openDeferredSlots(const DeferredCopy& d, std::string* slot) {
  Var e = makeVar("e");
  markNonNegative(e);
  std::string k = fresh("k");
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + k + " = 0; " + k + " < " +
       std::to_string(d.perThread) + "; ++" + k + ")");
  line("const int " + varName(e) + " = " + k + " * " + std::to_string(d.threads) + " + " + d.thread + ";");
  if (d.total % d.threads != 0) open("if (" + varName(e) + " < " + std::to_string(d.total) + ")");
  *slot = k;
  return e;
}

void KernelEmitter::closeDeferredSlots(const DeferredCopy& d) {
  if (d.total % d.threads != 0) close();
  close();
}

// A run of V elements from `idx` on along the last dimension of region
// `r`, moved as one vector `vectorMove` where the whole run is inside the
// buffer and aligned (the region's rows start on multiples of V, no padding
// splits them, and the address is aligned), else element by element
// (`elementMove` of element v's index).
void KernelEmitter::moveRun(const Region& r, const std::vector<Expr>& idx, int64_t V,
                            const std::function<void(const std::string&)>& vectorMove,
                            const std::function<void(const std::vector<Expr>&, const std::string&)>& elementMove) {
  const Buffer& b = r.buffer;
  const BufferInfo& info = bufs_[b.get()];
  auto last = idx;
  last.back() = add(last.back(), makeInt(V - 1));
  std::string ptr = fresh("run_ptr");
  line((info.place == Placement::Global ? "const " : "") + typeName(b->dtype) + "* " + ptr + " = " + info.name + " + " +
       expr(offsetExpr(b, idx)) + ";");
  Expr whole =
      passes::simplifyExpr(logicalAnd(logicalAnd(inBounds(b, idx), inBounds(b, last)), vectorRowStarts(r, V)));
  std::string cond = expr(whole) + " && tlc::aligned(" + ptr + ", " + std::to_string(V * dtypeBytes(b->dtype)) + ")";
  if (splitRows(info, b, V)) cond = "false";
  open("if (" + cond + ")");
  vectorMove(ptr);
  close("} else {");
  ++indent_;
  Var v = makeVar("v");
  markNonNegative(v);
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(v) + " = 0; " + varName(v) + " < " +
       std::to_string(V) + "; ++" + varName(v) + ")");
  auto at = idx;
  at.back() = add(at.back(), makeVarRef(v));
  elementMove(at, varName(v));
  close();
  close();
}

void KernelEmitter::emitDeferredLoads(const DeferredCopy& d, const std::string& regs) {
  const CopyStmt* c = d.copy;
  LocationScope at(*this, c->loc);
  const Region& src = c->src;
  const DType ts = src.buffer->dtype;
  auto sd = nonUnitDims(src);
  std::string slot;
  Var e = openDeferredSlots(d, &slot);
  if (d.vector == 1) {
    auto sIdx = regionIndex(src, sd, unflatten(makeVarRef(e), extentsOf(src, sd)));
    line(regs + "[" + slot + "] = " + maskedRead(src.buffer, sIdx, ts) + ";");
  } else {
    const std::string V = std::to_string(d.vector), run = regs + " + " + slot + " * " + V;
    auto sIdx = regionIndex(src, sd, unflatten(mul(makeVarRef(e), makeInt(d.vector)), extentsOf(src, sd)));
    moveRun(
        src, sIdx, d.vector, [&](const std::string& p) { line("tlc::copy_vec<" + typeName(ts) + ", " + V + ">(" + run + ", " + p + ");"); },
        [&](const std::vector<Expr>& idx, const std::string& v) {
          line("(" + run + ")[" + v + "] = " + maskedRead(src.buffer, idx, ts) + ";");
        });
  }
  closeDeferredSlots(d);
}

void KernelEmitter::emitDeferredStores(const DeferredCopy& d, const std::string& regs) {
  const CopyStmt* c = d.copy;
  LocationScope at(*this, c->loc);
  const Region &src = c->src, &dst = c->dst;
  const DType ts = src.buffer->dtype, td = dst.buffer->dtype;
  auto sd = nonUnitDims(src), dd = nonUnitDims(dst);
  auto es = extentsOf(src, sd), ed = extentsOf(dst, dd);
  std::string slot;
  Var e = openDeferredSlots(d, &slot);
  if (d.vector == 1) {
    auto dIdx = regionIndex(dst, dd, unflatten(makeVarRef(e), sameExtents(es, ed) ? es : ed));
    storeInside(dst.buffer, dIdx, cast(td, ts, regs + "[" + slot + "]"));
  } else {
    const std::string V = std::to_string(d.vector), run = regs + " + " + slot + " * " + V;
    auto dIdx = regionIndex(dst, dd, unflatten(mul(makeVarRef(e), makeInt(d.vector)), ed));
    moveRun(
        dst, dIdx, d.vector,
        [&](const std::string& p) {
          if (ts == td) {
            line("tlc::copy_vec<" + typeName(td) + ", " + V + ">(" + p + ", " + run + ");");
            return;
          }
          line("__align__(16) " + typeName(td) + " out_v[" + V + "];");
          line("#pragma unroll");
          line("for (int v = 0; v < " + V + "; ++v) out_v[v] = " + cast(td, ts, "(" + run + ")[v]") + ";");
          line("tlc::copy_vec<" + typeName(td) + ", " + V + ">(" + p + ", out_v);");
        },
        [&](const std::vector<Expr>& idx, const std::string& v) {
          storeInside(dst.buffer, idx, cast(td, ts, "(" + run + ")[" + v + "]"));
        });
  }
  closeDeferredSlots(d);
}

// The prologue's split copies: the loads of every stage it fills, then the
// stores (a loop of depth - 1 iterations, unrolled: the registers of each).
void KernelEmitter::issueDeferredPrologue(const PipelineExpansion& px) {
  if (px.deferred.empty()) return;
  int64_t n = px.schedule->depth - 1;
  open("");
  for (const DeferredCopy& d : px.deferred)
    line(std::string(d.vector > 1 ? "__align__(16) " : "") + typeName(d.copy->src.buffer->dtype) + " " + d.regs +
         "_pro[" + std::to_string(n) + "][" + std::to_string(d.perThread * d.vector) + "];");
  for (bool stores : {false, true}) {
    std::string p = fresh("pre");
    open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + p + " = 0; " + p + " < " +
         std::to_string(n) + "; ++" + p + ")");
    open("if (" + p + " < " + px.iterations + ")");
    defineProducerIteration(px, p, p);
    for (const DeferredCopy& d : px.deferred) {
      if (stores)
        emitDeferredStores(d, d.regs + "_pro[" + p + "]");
      else
        emitDeferredLoads(d, d.regs + "_pro[" + p + "]");
    }
    setProducerVersion(px, nullptr);
    close();
    close();
  }
  close();
}

void KernelEmitter::declareDeferredRegisters(const PipelineExpansion& px) {
  for (const DeferredCopy& d : px.deferred)
    line(std::string(d.vector > 1 ? "__align__(16) " : "") + typeName(d.copy->src.buffer->dtype) + " " + d.regs + "[" +
         std::to_string(d.perThread * d.vector) + "];");
}

// After the consumers of iteration `iter`: the stores of the copies issued
// at its top (for iteration iter + depth - 1), if any were.
void KernelEmitter::storeDeferred(const PipelineExpansion& px, const std::string& iter) {
  if (px.deferred.empty()) return;
  int64_t ahead = px.schedule->depth - 1;
  open("if (" + iter + " + " + std::to_string(ahead) + " < " + px.iterations + ")");
  defineProducerIteration(px, iter + " + " + std::to_string(ahead),
                          stagePlus(px.schedule->depth, px.stageCounter, ahead));
  for (const DeferredCopy& d : px.deferred) emitDeferredStores(d, d.regs);
  setProducerVersion(px, nullptr);
  close();
}

}  // namespace tlc::cuda
