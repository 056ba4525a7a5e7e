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
// one iteration behind the loads, after the wait for the next stage).
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_region_index.h"
#include "compiler/ir/loop_jumps.h"

namespace tlc::cuda {

using namespace ir;
using namespace regions;

namespace {

// The most elements a thread holds per split copy: a column of scales for
// 128 or 256 rows is one or two per thread.
constexpr int64_t kMaxDeferredPerThread = 4;

}  // namespace

std::vector<KernelEmitter::DeferredCopy> KernelEmitter::deferredCopies(const ForStmt* f,
                                                                        const PipelineSchedule& sched) {
  std::vector<DeferredCopy> out;
  // A `continue` or `break` would skip the stores at the bottom.
  if (jumpsOutOf(f->body)) return out;
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

void KernelEmitter::emitDeferredLoads(const DeferredCopy& d, const std::string& regs) {
  const CopyStmt* c = d.copy;
  LocationScope at(*this, c->loc);
  const Region& src = c->src;
  auto sd = nonUnitDims(src);
  std::string slot;
  Var e = openDeferredSlots(d, &slot);
  auto sIdx = regionIndex(src, sd, unflatten(makeVarRef(e), extentsOf(src, sd)));
  line(regs + "[" + slot + "] = " + maskedRead(src.buffer, sIdx, src.buffer->dtype) + ";");
  closeDeferredSlots(d);
}

void KernelEmitter::emitDeferredStores(const DeferredCopy& d, const std::string& regs) {
  const CopyStmt* c = d.copy;
  LocationScope at(*this, c->loc);
  const Region &src = c->src, &dst = c->dst;
  auto sd = nonUnitDims(src), dd = nonUnitDims(dst);
  auto es = extentsOf(src, sd), ed = extentsOf(dst, dd);
  std::string slot;
  Var e = openDeferredSlots(d, &slot);
  auto dIdx = regionIndex(dst, dd, unflatten(makeVarRef(e), sameExtents(es, ed) ? es : ed));
  storeInside(dst.buffer, dIdx, cast(dst.buffer->dtype, src.buffer->dtype, regs + "[" + slot + "]"));
  closeDeferredSlots(d);
}

// The prologue's split copies: the loads of every stage it fills, then the
// stores (a loop of depth - 1 iterations, unrolled: the registers of each).
void KernelEmitter::issueDeferredPrologue(const PipelineExpansion& px) {
  if (px.deferred.empty()) return;
  int64_t n = px.schedule->depth - 1;
  open("");
  for (const DeferredCopy& d : px.deferred)
    line(typeName(d.copy->src.buffer->dtype) + " " + d.regs + "_pro[" + std::to_string(n) + "][" +
         std::to_string(d.perThread) + "];");
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
    line(typeName(d.copy->src.buffer->dtype) + " " + d.regs + "[" + std::to_string(d.perThread) + "];");
}

// After the consumers of iteration `iter`: the stores of the copies issued
// at its top (for iteration iter + depth - 1), if any were.
void KernelEmitter::storeDeferred(const PipelineExpansion& px, const std::string& iter) {
  if (px.deferred.empty()) return;
  int64_t ahead = px.schedule->depth - 1;
  open("if (" + iter + " + " + std::to_string(ahead) + " < " + px.iterations + ")");
  defineProducerIteration(px, iter + " + " + std::to_string(ahead), stagePlus(px, px.stageCounter, ahead));
  for (const DeferredCopy& d : px.deferred) emitDeferredStores(d, d.regs);
  setProducerVersion(px, nullptr);
  close();
}

}  // namespace tlc::cuda
