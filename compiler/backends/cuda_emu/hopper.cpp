// The emulated GPU's Hopper side (see machine.h): mbarriers, tensor copies
// (TMA), wgmma and the warpgroup collectives, setmaxnreg.
//
// Ordering model. A block that uses an mbarrier keeps, per thread, a vector
// clock over the block's threads and the latest observed phase of each
// mbarrier (Thread::vc / seen). An arrive releases the thread's knowledge
// into the current phase (and advances its clock); a wait that returns
// acquires the knowledge of the completed phases; block barriers and
// warpgroup collectives join the knowledge of their participants. Plain
// accesses ordered only through mbarriers are then not races.
//
// Tensor copies read global memory and write shared memory at issue, and
// complete their bytes on the mbarrier at issue; the bytes are marked with
// the mbarrier phase their transaction counted on. Any access to such a byte
// by a thread that has not observed that phase (through mbar_wait or a chain
// of synchronization) is a finding, whatever the timing, as is a second
// tensor copy into them issued before the issuer observed the first one's
// phase. wgmma computes at issue; the shared bytes it reads count as reads
// by the warpgroup at issue and stay "in use" until the wgmma.wait_group that
// retires its group: a write to them meanwhile is a finding.
#include <algorithm>
#include <cstring>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/machine_internal.h"
#include "runtime/cuda_emu/emu_float.h"

namespace tlc::cuda_emu {

namespace {

enum WgKind { kWgMma = 0, kWgFence, kWgCommit, kWgWait, kWgSetmaxnreg, kWgMmaRs };
const char* wgName(int k) {
  static const char* names[] = {"wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
                                "setmaxnreg", "wgmma.mma_async (A from registers)"};
  return names[k];
}

template <class V>
void joinMax(std::vector<V>& a, const std::vector<V>& b, V fill) {
  if (a.size() < b.size()) a.resize(b.size(), fill);
  for (size_t i = 0; i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
}

std::string offsetText(uint32_t off) { return "shared offset " + std::to_string(off); }

}  // namespace

// ---------------------------------------------------------------------------
// State

void Machine::activateHopper() {
  if (hopperActive_) return;
  hopperActive_ = true;
  for (unsigned i = 0; i < threadsPerBlock_; ++i) {
    Thread& t = *threads_[i];
    t.vc.assign(threadsPerBlock_, 0);
    t.vc[i] = 1;
    t.seen.clear();
  }
  asyncShadow_.assign(sharedEnd_ - sharedBegin_, AsyncByte{});
  warpgroups_.assign((threadsPerBlock_ + 127) / 128, Warpgroup{});
}

void Machine::resetHopperForBlock() {
  regsReleased_ = regsTaken_ = 0;
  for (auto& w : warpgroups_) delete w.active;
  warpgroups_.clear();
  hopperActive_ = false;
  mbarriers_.clear();
  mbarIndex_.clear();
  asyncShadow_.clear();
  for (unsigned i = 0; i < threadsPerBlock_ && i < threads_.size(); ++i) {
    threads_[i]->vc.clear();
    threads_[i]->seen.clear();
  }
}

bool Machine::vcOrdered(const Thread* t, uint32_t other, uint32_t clock) const {
  if (!clock) return false;  // recorded before the block used mbarriers
  unsigned otid = (other - 1) % threadsPerBlock_;
  return otid < t->vc.size() && t->vc[otid] >= clock;
}

void Machine::joinKnowledge(const std::vector<Thread*>& ts) {
  if (ts.size() < 2) return;
  std::vector<uint32_t> vc;
  std::vector<int64_t> seen;
  for (Thread* t : ts) {
    joinMax(vc, t->vc, 0u);
    joinMax(seen, t->seen, (int64_t)-1);
  }
  for (Thread* t : ts) {
    uint32_t own = t->vc[t->tid];
    t->vc = vc;
    t->vc[t->tid] = own + 1;  // later accesses are not covered by what the others now know
    t->seen = seen;
  }
}

void Machine::joinBarrierKnowledge(unsigned id) {
  std::vector<Thread*> ts;
  for (unsigned i = 0; i < threadsPerBlock_; ++i) {
    Thread* t = threads_[i].get();
    if (t->wait == Thread::AtBarrier && t->waitBarrier == id) ts.push_back(t);
  }
  joinKnowledge(ts);
}

// A tensor map names the caller's host memory: a pointer argument's buffer
// (then the map is pointed at its emulated copy) or, when no pointer
// argument covers it, a tensor of its own, copied into a read-only emulated
// allocation of the map's extent.
bool Machine::relocateTensorMap(unsigned char* map, const std::vector<KernelArg>& args, size_t argIndex,
                                std::string* error) {
  tlc::cuda::TensorMapSpec spec;
  if (!isa::decodeTensorMap(map, &spec)) return true;  // reported when used
  for (auto& r : regions_) {
    if (r->tensorOnly) continue;
    const KernelArg& a = args[r->argIndex];
    uintptr_t host = (uintptr_t)a.data;
    if (a.data && spec.address >= host && spec.address < host + a.bytes) {
      spec.address = r->base + (spec.address - host);
      encodeTensorMap(spec, map, nullptr);
      return true;
    }
  }
  uint64_t extent = spec.elemBytes;
  for (int i = 0; i < spec.rank; ++i) extent += (spec.dims[i] - 1) * spec.strides[i];
  Region* r = newRegion(args[argIndex].name + " (tensor)", (const void*)spec.address, extent, false, false,
                        argIndex, error);
  if (!r) return false;
  r->tensorOnly = true;
  spec.address = r->base;
  encodeTensorMap(spec, map, nullptr);
  return true;
}

std::string Machine::hopperWaitText(const Thread* t) const {
  if (t->wait == Thread::AtMbarrier && t->waitMbar < mbarriers_.size()) {
    const Mbarrier& mb = mbarriers_[t->waitMbar];
    return "an mbarrier wait (parity " + std::to_string(t->waitParity) + " on the mbarrier at " +
           offsetText(mb.offset) + "; its phase " + std::to_string(mb.st.phase) + " has " +
           std::to_string(mb.st.pending) + " of " + std::to_string(mb.st.count) + " arrivals and " +
           std::to_string(mb.st.tx) + " transaction bytes pending)";
  }
  return std::string(wgName(t->waitColl)) + " (a warpgroup collective)";
}

// ---------------------------------------------------------------------------
// mbarrier

Machine::Mbarrier* Machine::findMbar(Thread* t, const void* bar, uint32_t pc, const char* what) {
  uintptr_t a = (uintptr_t)bar;
  if (a < sharedBegin_ || a + 8 > sharedEnd_) {
    report(FindingKind::MbarrierMisuse, t, pc, 0, std::string(what) + " on an mbarrier that is not in shared memory");
    return nullptr;
  }
  auto it = mbarIndex_.find((uint32_t)(a - sharedBegin_));
  if (it == mbarIndex_.end()) {
    report(FindingKind::MbarrierMisuse, t, pc, 0,
           std::string(what) + " on the mbarrier at " + offsetText((uint32_t)(a - sharedBegin_)) +
               ", which was never initialized (mbarrier.init)");
    return nullptr;
  }
  Mbarrier& mb = mbarriers_[it->second];
  if (!ordered(t, mb.initThread, mb.initEpoch, 0xffff, mb.initClock))
    report(FindingKind::MbarrierMisuse, t, pc, mb.initPc,
           std::string(what) + " on the mbarrier at " + offsetText(mb.offset) + " initialized by " +
               threadName(mb.initThread) +
               " with no barrier in between (fence.mbarrier_init and __syncthreads() after mbarrier.init)");
  return &mb;
}

void Machine::mbarInit(void* bar, unsigned count, const void* pc) {
  Thread* t = current_;
  activateHopper();
  uint32_t p = pcOffset(pc);
  uintptr_t a = (uintptr_t)bar;
  if (a < sharedBegin_ || a + 8 > sharedEnd_) {
    report(FindingKind::MbarrierMisuse, t, p, 0, "mbarrier.init on an address that is not in shared memory");
    return;
  }
  if (a % 8) {
    report(FindingKind::Misaligned, t, p, 0, "mbarrier object not 8-byte aligned");
    return;
  }
  if (count < 1 || count >= (1u << 20)) {
    report(FindingKind::MbarrierMisuse, t, p, 0, "mbarrier.init count must be in [1, 2^20 - 1]");
    return;
  }
  uint32_t off = (uint32_t)(a - sharedBegin_);
  auto it = mbarIndex_.find(off);
  uint32_t idx;
  if (it == mbarIndex_.end()) {
    idx = (uint32_t)mbarriers_.size();
    mbarriers_.emplace_back();
    mbarIndex_[off] = idx;
  } else {
    idx = it->second;
    for (unsigned i = 0; i < threadsPerBlock_; ++i)
      if (threads_[i]->wait == Thread::AtMbarrier && threads_[i]->waitMbar == idx)
        report(FindingKind::MbarrierMisuse, t, p, 0, "mbarrier.init on an mbarrier that threads wait on");
    mbarriers_[idx] = Mbarrier{};
  }
  Mbarrier& mb = mbarriers_[idx];
  mb.offset = off;
  isa::mbarInit(mb.st, count);
  mb.initPc = p;
  mb.initThread = t->gid;
  mb.initEpoch = blockEpoch_;
  mb.initClock = t->vc[t->tid];
  // The object's bytes count as written by the initializing thread.
  checkBytes(t, &sharedShadow_[off], 8, TLC_EMU_WRITE, p, true, a, nullptr, true);
}

void Machine::mbarSettle(uint32_t idx, isa::MbarEvent ev, Thread* t, uint32_t pc) {
  Mbarrier& mb = mbarriers_[idx];
  switch (ev) {
    case isa::MbarEvent::None: return;
    case isa::MbarEvent::TxOverflow:
      if (!mb.overflowReported) {
        mb.overflowReported = true;
        report(FindingKind::MbarrierTxMismatch, t, pc, mb.expectPc,
               "phase " + std::to_string(mb.st.phase) + " of the mbarrier at " + offsetText(mb.offset) + " received " +
                   std::to_string(-mb.st.tx) +
                   " transaction bytes more than its expect_tx announced: the phase cannot complete");
      }
      return;
    case isa::MbarEvent::ArrivalOverflow:
      report(FindingKind::MbarrierMisuse, t, pc, 0,
             "arrival on the mbarrier at " + offsetText(mb.offset) + " whose phase " + std::to_string(mb.st.phase) +
                 " has no pending arrivals left (more arrivals than its count)");
      return;
    case isa::MbarEvent::Completed: break;
  }
  joinMax(mb.doneVc, mb.relVc, 0u);
  joinMax(mb.doneSeen, mb.relSeen, (int64_t)-1);
  if (mb.doneSeen.size() <= idx) mb.doneSeen.resize(idx + 1, -1);
  mb.doneSeen[idx] = (int64_t)mb.st.phase - 1;
  mb.relVc.clear();
  mb.relSeen.clear();
  for (unsigned i = 0; i < threadsPerBlock_; ++i) {
    Thread* w = threads_[i].get();
    if (w->wait != Thread::AtMbarrier || w->waitMbar != idx || !isa::mbarParityDone(mb.st, w->waitParity)) continue;
    joinMax(w->vc, mb.doneVc, 0u);
    joinMax(w->seen, mb.doneSeen, (int64_t)-1);
    w->wait = Thread::None;
    if (w->status == Thread::Blocked) w->status = Thread::Ready;
  }
}

void Machine::mbarArrive(void* bar, unsigned expectTx, const void* pc) {
  Thread* t = current_;
  activateHopper();
  uint32_t p = pcOffset(pc);
  Mbarrier* mb = findMbar(t, bar, p, expectTx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive");
  if (!mb) return;
  uint32_t idx = mbarIndex_[mb->offset];
  joinMax(mb->relVc, t->vc, 0u);
  joinMax(mb->relSeen, t->seen, (int64_t)-1);
  t->vc[t->tid]++;
  if (expectTx) mb->expectPc = p;
  mbarSettle(idx, isa::mbarArrive(mb->st, expectTx), t, p);
}

void Machine::mbarWait(void* bar, unsigned parity, const void* pc) {
  Thread* t = current_;
  activateHopper();
  uint32_t p = pcOffset(pc);
  Mbarrier* mb = findMbar(t, bar, p, "mbarrier.try_wait");
  if (!mb) return;
  uint32_t idx = mbarIndex_[mb->offset];
  if (isa::mbarParityDone(mb->st, parity)) {
    joinMax(t->vc, mb->doneVc, 0u);
    joinMax(t->seen, mb->doneSeen, (int64_t)-1);
    return;
  }
  t->wait = Thread::AtMbarrier;
  t->waitMbar = idx;
  t->waitParity = parity & 1;
  t->waitPc = p;
  block(t);  // made Ready (with the phase's knowledge) by mbarSettle
}

void Machine::fence(int, const void*) {
  // fence.proxy.async / fence.mbarrier_init: ordering the emulator does not
  // need (its proxies are one); the init ordering is checked at first use.
  activateHopper();
}

// ---------------------------------------------------------------------------
// Shared bytes of the asynchronous proxy

void Machine::checkAsyncBytes(Thread* t, uintptr_t a, size_t n, int flags, uint32_t pc) {
  if (a < sharedBegin_ || a + n > sharedBegin_ + asyncShadow_.size()) return;
  const uint32_t off = (uint32_t)(a - sharedBegin_);
  const bool write = flags & TLC_EMU_WRITE;
  bool reportedW = false, reportedT = false;
  for (size_t i = 0; i < n; ++i) {
    AsyncByte& ab = asyncShadow_[off + i];
    if (write && ab.wgmmaPending && !reportedW) {
      reportedW = true;
      report(FindingKind::WgmmaOperandOverwritten, t, pc, ab.wgmmaPc,
             "write to " + offsetText(off + (uint32_t)i) +
                 ", an operand of a wgmma whose group has not been retired by wgmma.wait_group yet");
    }
    if (ab.tmaBar && !reportedT) {
      uint32_t b = ab.tmaBar - 1;
      int64_t seen = b < t->seen.size() ? t->seen[b] : -1;
      if (seen < (int64_t)ab.tmaPhase) {
        reportedT = true;
        const Mbarrier& mb = mbarriers_[b];
        bool done = mb.st.phase > ab.tmaPhase;
        report(FindingKind::AsyncCopyInFlight, t, pc, ab.tmaPc,
               std::string(inTmaWrite_ ? "tensor copy into " : write ? "write to " : "read of ") +
                   offsetText(off + (uint32_t)i) +
                   ", the destination of a tensor copy (TMA) that completes phase " + std::to_string(ab.tmaPhase) +
                   " of the mbarrier at " + offsetText(mb.offset) + ", before this thread waited for that phase" +
                   (done ? "" : " (it has not completed yet)"));
      }
    }
    if (write && (flags & kRecordFlag)) ab.tmaBar = 0;
  }
}

// ---------------------------------------------------------------------------
// Tensor copies

// The checks common to tensor copies in both directions: the map, its rank,
// and the shared tile at `smem` (128-byte aligned, inside the shared memory
// the launch gave). False (reported) where one fails.
bool Machine::tmaSharedTile(int rank, bool im2col, const void* map, const void* smem, const char* op, const void* pc,
                            TmaTile* out) {
  activateHopper();
  Thread* t = out->t = current_;
  const uint32_t p = out->pc = pcOffset(pc);
  tlc::cuda::TensorMapSpec* spec = &out->spec;
  uint32_t* off = &out->off;
  uint64_t* bytes = &out->bytes;
  if (!isa::decodeTensorMap(map, spec)) {
    report(FindingKind::BadTensorMap, t, p, 0,
           "tensor copy with a map that is not a tensor map (not encoded by the emulator's encodeTensorMap, or corrupted)");
    return false;
  }
  const std::string insn = std::string(op) + "_" + std::to_string(rank) + "d";
  if (spec->rank != rank) {
    report(FindingKind::BadTensorMap, t, p, 0, insn + " with a tensor map of rank " + std::to_string(spec->rank));
    return false;
  }
  if (spec->im2col != im2col) {
    report(FindingKind::BadTensorMap, t, p, 0,
           insn + (spec->im2col ? " with an im2col tensor map (only tma_load_im2col_4d copies through one)"
                                : " with a tiled tensor map (an im2col load needs a map encoded in im2col mode)"));
    return false;
  }
  uintptr_t d = (uintptr_t)smem;
  *bytes = isa::tmaBoxBytes(*spec);
  const char* side = std::string(op).rfind("tma_load", 0) == 0 ? "destination" : "source";
  if (d < sharedBegin_ || d >= sharedEnd_) {
    report(FindingKind::WildAccess, t, p, 0, std::string("tensor copy ") + side + " is not in shared memory");
    return false;
  }
  *off = (uint32_t)(d - sharedBegin_);
  if (*off % 128) {
    report(FindingKind::Misaligned, t, p, 0,
           std::string("tensor copy ") + side + " at " + offsetText(*off) + " is not 128-byte aligned");
    return false;
  }
  if (d + *bytes > sharedEnd_ ||
      (d >= dynBegin_ && d < dynCapacityEnd_ && d + *bytes > dynBegin_ + config_.dynamicSharedBytes)) {
    report(FindingKind::OutOfBounds, t, p, 0,
           "tensor copy of " + std::to_string(*bytes) + " bytes at " + offsetText(*off) + " runs past shared memory" +
               " (or the launch's dynamic shared memory)");
    return false;
  }
  return true;
}

void Machine::tmaLoad(int rank, void* smem, const void* map, void* bar, const int* coords, const void* pc) {
  TmaTile tile;
  if (!tmaSharedTile(rank, false, map, smem, "tma_load", pc, &tile)) return;
  std::vector<uint64_t> gaddr;
  std::vector<uint8_t> inb;
  isa::tmaBox(tile.spec, coords, &gaddr, &inb);
  tmaLoadTile(tile, bar, gaddr, inb);
}

void Machine::tmaLoadIm2col(void* smem, const void* map, void* bar, const int* coords, const uint16_t* offsets,
                            const void* pc) {
  TmaTile tile;
  if (!tmaSharedTile(4, true, map, smem, "tma_load_im2col", pc, &tile)) return;
  std::vector<uint64_t> gaddr;
  std::vector<uint8_t> inb;
  isa::tmaIm2colBox(tile.spec, coords, offsets, &gaddr, &inb);
  tmaLoadTile(tile, bar, gaddr, inb);
}

void Machine::tmaLoadTile(TmaTile& tile, void* bar, const std::vector<uint64_t>& gaddr,
                          const std::vector<uint8_t>& inb) {
  auto& [t, p, spec, off, bytes] = tile;
  Mbarrier* mb = findMbar(t, bar, p, "tensor copy");
  if (!mb) return;
  const uint32_t idx = mbarIndex_[mb->offset];
  // Gather the box (zeros out of bounds), checking the global reads.
  std::vector<uint8_t> data(bytes, 0);
  const int eb = spec.elemBytes;
  for (size_t e = 0; e < gaddr.size(); ++e) {
    if (!inb[e]) continue;
    checkedAccess(t, (const void*)gaddr[e], eb, TLC_EMU_READ, p);
    if (inRegion(gaddr[e], eb)) std::memcpy(&data[e * eb], (const void*)gaddr[e], eb);
  }
  // Write it, 16-byte chunk by chunk, through the swizzle.
  const int span = isa::swizzleSpan(spec.swizzle);
  const uint32_t phase = (uint32_t)mb->st.phase;
  for (uint64_t b = 0; b < bytes; b += 16) {
    uint32_t dst = isa::swizzleAddress(off + (uint32_t)b, span);
    if (sharedBegin_ + dst + 16 > sharedEnd_) continue;
    inTmaWrite_ = true;
    checkBytes(t, &sharedShadow_[dst], 16, TLC_EMU_WRITE | kRecordFlag, p, true, sharedBegin_ + dst, nullptr, true);
    inTmaWrite_ = false;
    std::memcpy((void*)(sharedBegin_ + dst), &data[b], 16);
    for (int i = 0; i < 16; ++i) {
      sharedShadow_[dst + i].flags |= kWTma;
      AsyncByte& ab = asyncShadow_[dst + i];
      ab.tmaBar = idx + 1;
      ab.tmaPhase = phase;
      ab.tmaPc = p;
    }
  }
  mbarSettle(idx, isa::mbarCompleteTx(mbarriers_[idx].st, (uint32_t)bytes), t, p);
}

void Machine::tmaStore(int rank, const void* map, const void* smem, const int* coords, const void* pc) {
  TmaTile tile;
  if (!tmaSharedTile(rank, false, map, smem, "tma_store", pc, &tile)) return;
  auto& [t, p, spec, off, bytes] = tile;
  // Read the tile, 16-byte chunk by chunk, through the swizzle (checked as
  // this thread's reads: the other threads' writes must be ordered before
  // it by a barrier).
  const int span = isa::swizzleSpan(spec.swizzle);
  std::vector<uint8_t> data(bytes, 0);
  for (uint64_t b = 0; b < bytes; b += 16) {
    uint32_t src = isa::swizzleAddress(off + (uint32_t)b, span);
    checkedAccess(t, (const void*)(sharedBegin_ + src), 16, TLC_EMU_READ, p);
    std::memcpy(&data[b], (const void*)(sharedBegin_ + src), 16);
  }
  // Write the elements inside the tensor.
  std::vector<uint64_t> gaddr;
  std::vector<uint8_t> inb;
  isa::tmaBox(spec, coords, &gaddr, &inb);
  const int eb = spec.elemBytes;
  for (size_t e = 0; e < gaddr.size(); ++e) {
    if (!inb[e]) continue;
    checkedAccess(t, (void*)gaddr[e], eb, TLC_EMU_WRITE, p);
    if (inRegion(gaddr[e], eb)) std::memcpy((void*)gaddr[e], &data[e * eb], eb);
  }
}

// ---------------------------------------------------------------------------
// Warpgroup collectives

Machine::WgOp* Machine::wgArrive(Thread* t, int kind, int sub, uint32_t pc) {
  const unsigned wg = t->tid / 128;
  if ((wg + 1) * 128 > threadsPerBlock_) {
    report(FindingKind::Deadlock, t, pc, 0,
           std::string(wgName(kind)) + " in warpgroup " + std::to_string(wg) + ", which has only " +
               std::to_string(threadsPerBlock_ - wg * 128) + " threads (a warpgroup is 4 warps)");
    abortLaunch();
  }
  for (unsigned i = wg * 128; i < wg * 128 + 128; ++i)
    if (threads_[i]->status == Thread::Done) {
      report(FindingKind::Deadlock, t, pc, 0,
             std::string(wgName(kind)) + " waits for thread " + std::to_string(i) + " of its warpgroup, which has exited");
      abortLaunch();
    }
  Warpgroup& w = warpgroups_[wg];
  WgOp* op = w.active;
  if (op) {
    if (op->kind != kind || op->sub != sub) {
      report(FindingKind::CollectiveMismatch, t, pc, op->pc,
             std::string("warpgroup collectives do not match: this thread executes ") + wgName(kind) + " (variant " +
                 std::to_string(sub) + ") while " + std::to_string(op->arrived) + " threads of its warpgroup wait in " +
                 wgName(op->kind) + " (variant " + std::to_string(op->sub) + ")");
      abortLaunch();
    }
  } else {
    op = w.active = new WgOp();
    op->kind = kind;
    op->sub = sub;
    op->pc = pc;
  }
  op->members[t->tid % 128] = t;
  op->arrived++;
  return op;
}

void Machine::wgFinish(Thread* t, WgOp* op) {
  if (op->arrived < 128) {
    t->wait = Thread::InWarpgroup;
    t->waitColl = op->kind;
    t->waitPc = op->pc;
    block(t);
    return;
  }
  warpgroups_[t->tid / 128].active = nullptr;
  wgExecute(*op);
  for (Thread* m : op->members) {
    if (m == t) continue;
    m->wait = Thread::None;
    if (m->status == Thread::Blocked) m->status = Thread::Ready;
  }
  delete op;
}

// The bits an accumulator register holds while a wgmma that writes it is in
// flight: a quiet NaN (as float32) whose payload names it.
constexpr uint32_t kAccumulatorInFlight = 0x7fc0dead;

// Retires group `g` (at a wgmma.wait_group of thread `t`, or when the
// warpgroup has exited: `threadsLive` false, then no register is written).
// Its shared chunks are free to be written again, and its results reach the
// accumulator registers unless a later group writes them too.
void Machine::retireWgmmaGroup(Warpgroup& w, WgmmaGroup& g, Thread* t, uint32_t pc, bool threadsLive) {
  for (uint32_t c : g.chunks)
    for (int i = 0; i < 16; ++i)
      if (asyncShadow_[c + i].wgmmaPending) asyncShadow_[c + i].wgmmaPending--;
  g.chunks.clear();
  bool reported = false;
  for (const auto& r : g.results) {
    auto it = w.inFlight.find(r.reg);
    if (it == w.inFlight.end()) continue;
    const bool live = threadsLive && threads_[r.thread]->status != Thread::Done;
    if (live && *r.reg != kAccumulatorInFlight && !reported) {
      reported = true;
      report(FindingKind::WgmmaOperandOverwritten, t, pc, r.pc,
             "an accumulator register of a wgmma was written before the wgmma.wait_group that retires it "
             "(wgmma.fence orders writes before a wgmma, not after it)");
    }
    if (it->second.seq != g.seq) continue;  // a later group's wgmma writes it too
    if (live) *r.reg = it->second.bits;
    w.inFlight.erase(it);
  }
  g.results.clear();
}

// Records the results `values` (registers of each of the 128 threads, in the
// order of op.d) of a wgmma just issued into the uncommitted group; the
// registers hold kAccumulatorInFlight until its group retires.
void Machine::deferAccumulators(Warpgroup& w, int regsPerThread, const WgOp& op, const std::vector<uint32_t>& values) {
  for (int i = 0; i < 128; ++i) {
    uint32_t* regs = reinterpret_cast<uint32_t*>(op.d[i]);
    for (int r = 0; r < regsPerThread; ++r) {
      w.inFlight[&regs[r]] = Warpgroup::InFlight{values[i * regsPerThread + r], w.nextSeq};
      regs[r] = kAccumulatorInFlight;
      w.uncommitted.results.push_back({&regs[r], op.pc, op.members[i]->tid});
    }
  }
}

void Machine::wgExecute(WgOp& op) {
  Thread* t = current_;
  Warpgroup& w = warpgroups_[t->tid / 128];
  joinKnowledge(std::vector<Thread*>(op.members, op.members + 128));
  switch (op.kind) {
    case kWgFence: break;
    case kWgCommit:
      w.uncommitted.seq = w.nextSeq++;
      w.groups.push_back(std::move(w.uncommitted));
      w.uncommitted = WgmmaGroup{};
      break;
    case kWgWait:
      while ((int)w.groups.size() > op.sub) {
        retireWgmmaGroup(w, w.groups.front(), t, op.pc, true);
        w.groups.pop_front();
      }
      break;
    case kWgSetmaxnreg: {
      unsigned regs = (unsigned)(op.sub % 1024);
      const bool inc = op.sub >= 1024;
      if (regs % 8 || regs < 24 || regs > 256) {
        report(FindingKind::Trap, t, op.pc, 0,
               "setmaxnreg register count " + std::to_string(regs) + " is not a multiple of 8 in [24, 256]");
        abortLaunch();
        break;
      }
      if (!entryRegs_) break;  // the launch's count is unknown
      const unsigned now = w.regs ? w.regs : entryRegs_;
      if (inc ? regs < now : regs > now) {
        report(FindingKind::Trap, t, op.pc, 0,
               std::string("setmaxnreg.") + (inc ? "inc" : "dec") + " from " + std::to_string(now) + " to " +
                   std::to_string(regs) + " registers goes the wrong way");
        abortLaunch();
        break;
      }
      (inc ? regsTaken_ : regsReleased_) += 128ull * (inc ? regs - now : now - regs);
      w.regs = regs;
      break;
    }
    case kWgMma:
    case kWgMmaRs: {
      const bool registerA = op.kind == kWgMmaRs;
      const int n = op.sub / 32, kind = (op.sub / 4) % 8, ta = (op.sub / 2) % 2, tb = op.sub % 2;
      isa::SmemDesc da = isa::decodeSmemDesc(op.descA), db = isa::decodeSmemDesc(op.descB);
      if ((!registerA && da.baseOffset && da.swizzle) || (db.baseOffset && db.swizzle)) {
        report(FindingKind::Trap, t, op.pc, 0, "wgmma matrix descriptor with a non-zero base offset (not emulated)");
        abortLaunch();
      }
      const size_t window = sharedEnd_ - sharedBegin_;
      // 16-bit operands: k16; int8 and float8: k32; tf32: k8 (the same 32 bytes of each row).
      const bool s8 = kind == TLC_EMU_WGMMA_S8, f8 = kind == TLC_EMU_WGMMA_E4M3 || kind == TLC_EMU_WGMMA_E5M2;
      const bool tf32 = kind == TLC_EMU_WGMMA_TF32;
      const int eb = s8 || f8 ? 1 : tf32 ? 4 : 2, K = 32 / eb;
      std::vector<uint32_t> chunks;
      std::vector<double> A(64 * K), B(K * n);
      bool bad = false;
      // One operand element from its `eb` bytes (the low ones of `bits`).
      auto element = [&](uint32_t bits) -> double {
        if (s8) return (double)(int8_t)(uint8_t)bits;
        // The tensor cores read a tf32's sign, exponent and top 10 mantissa
        // bits: the rest is dropped, not rounded.
        if (tf32) return tlc_emu_float::tf32Operand(bits);
        if (f8)
          return kind == TLC_EMU_WGMMA_E4M3 ? tlc_emu_float::e4m3ToFloat((uint8_t)bits)
                                            : tlc_emu_float::e5m2ToFloat((uint8_t)bits);
        return kind == TLC_EMU_WGMMA_F16 ? tlc_emu_float::halfToFloat((uint16_t)bits)
                                         : tlc_emu_float::bf16ToFloat((uint16_t)bits);
      };
      auto load = [&](uint32_t addr) -> double {
        if (addr + eb > window || addr % eb) {
          bad = true;
          return 0;
        }
        chunks.push_back(addr & ~15u);
        uint32_t bits = 0;
        std::memcpy(&bits, (const void*)(sharedBegin_ + addr), eb);  // little-endian: the low bytes
        return element(bits);
      };
      if (registerA) {
        // Thread t (warp w, lane 4g + q) holds rows 16w + g (+ 8) of A and,
        // of each, the V = 4 / element-bytes columns from V q (+ K / 2):
        // registers {row, row + 8} x {k, k + K / 2}, each V elements packed
        // from its low bits up.
        const int V = 4 / eb;
        for (int t = 0; t < 128; ++t)
          for (int r = 0; r < 4; ++r) {
            const int row = (t / 32) * 16 + (t % 32) / 4 + (r % 2) * 8, col = (t % 4) * V + (r / 2) * (K / 2);
            for (int e = 0; e < V; ++e) A[row * K + col + e] = element(op.a[t][r] >> (8 * eb * e));
          }
      } else {
        for (int m = 0; m < 64; ++m)
          for (int k = 0; k < K; ++k) A[m * K + k] = load(isa::wgmmaElementAddress(da, ta, m, k, eb));
      }
      for (int k = 0; k < K; ++k)
        for (int c = 0; c < n; ++c) B[k * n + c] = load(isa::wgmmaElementAddress(db, tb, c, k, eb));
      if (bad) {
        report(FindingKind::OutOfBounds, t, op.pc, 0, "a wgmma matrix descriptor addresses bytes outside shared memory");
        abortLaunch();
      }
      std::sort(chunks.begin(), chunks.end());
      chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
      for (uint32_t c : chunks) {
        uintptr_t a = sharedBegin_ + c;
        if (a >= dynBegin_ && a < dynCapacityEnd_ && a + 16 > dynBegin_ + config_.dynamicSharedBytes) {
          report(FindingKind::OutOfBounds, t, op.pc, 0,
                 "wgmma operand at " + offsetText(c) + " past the launch's dynamic shared memory");
          continue;
        }
        checkBytes(t, &sharedShadow_[c], 16, TLC_EMU_READ, op.pc, true, a, nullptr, true);
        for (int i = 0; i < 16; ++i) {
          asyncShadow_[c + i].wgmmaPending++;
          asyncShadow_[c + i].wgmmaPc = op.pc;
        }
      }
      w.uncommitted.chunks.insert(w.uncommitted.chunks.end(), chunks.begin(), chunks.end());
      // The accumulators as the wgmmas issued before this one leave them,
      // this one's results computed on a copy of them.
      const int regs = n / 2;
      std::vector<uint32_t> acc(128 * regs);
      for (int i = 0; i < 128; ++i)
        for (int r = 0; r < regs; ++r) {
          uint32_t* reg = reinterpret_cast<uint32_t*>(op.d[i]) + r;
          auto it = w.inFlight.find(reg);
          acc[i * regs + r] = it != w.inFlight.end() ? it->second.bits : *reg;
        }
      if (s8) {
        int32_t* di[128];
        for (int i = 0; i < 128; ++i) di[i] = reinterpret_cast<int32_t*>(&acc[i * regs]);
        isa::wgmmaS8(n, A.data(), B.data(), di, op.scale);
      } else {
        float* df[128];
        for (int i = 0; i < 128; ++i) df[i] = reinterpret_cast<float*>(&acc[i * regs]);
        isa::wgmma(n, K, A.data(), B.data(), df, op.scale);
      }
      deferAccumulators(w, regs, op, acc);
      break;
    }
  }
}

void Machine::wgmma(int n, int kind, int transA, int transB, float* d, uint64_t descA, uint64_t descB, int scaleD,
                    const void* pc) {
  Thread* t = current_;
  activateHopper();
  uint32_t p = pcOffset(pc);
  // Operands other than 16-bit ones (int8, float8, tf32) have no transposes.
  bool kMajor = kind == TLC_EMU_WGMMA_S8 || kind == TLC_EMU_WGMMA_E4M3 || kind == TLC_EMU_WGMMA_E5M2 ||
                kind == TLC_EMU_WGMMA_TF32;
  if (n < 8 || n > 256 || n % 8 || (kind != TLC_EMU_WGMMA_F16 && kind != TLC_EMU_WGMMA_BF16 && !kMajor) ||
      (transA & ~1) || (transB & ~1) || (kMajor && (transA || transB))) {
    report(FindingKind::Trap, t, p, 0, "unsupported wgmma shape or type");
    abortLaunch();
  }
  WgOp* op = wgArrive(t, kWgMma, n * 32 + kind * 4 + transA * 2 + transB, p);
  if (op->arrived == 1) {
    op->descA = descA;
    op->descB = descB;
  } else if (op->descA != descA || op->descB != descB) {
    report(FindingKind::CollectiveMismatch, t, p, 0, "threads of a warpgroup pass different wgmma matrix descriptors");
    abortLaunch();
  }
  op->d[t->tid % 128] = d;
  op->scale[t->tid % 128] = scaleD != 0;
  wgFinish(t, op);
}

void Machine::wgmmaRs(int n, int kind, int transB, float* d, const uint32_t* a, uint64_t descB, int scaleD,
                      const void* pc) {
  Thread* t = current_;
  activateHopper();
  uint32_t p = pcOffset(pc);
  // A from registers: 16-bit, int8, float8 and tf32 operands; the 8-bit and
  // tf32 ones have no transposes.
  const bool kMajor = kind == TLC_EMU_WGMMA_S8 || kind == TLC_EMU_WGMMA_E4M3 || kind == TLC_EMU_WGMMA_E5M2 ||
                      kind == TLC_EMU_WGMMA_TF32;
  if (n < 8 || n > 256 || n % 8 || (kind != TLC_EMU_WGMMA_F16 && kind != TLC_EMU_WGMMA_BF16 && !kMajor) ||
      (transB & ~1) || (kMajor && transB)) {
    report(FindingKind::Trap, t, p, 0, "unsupported wgmma shape or type");
    abortLaunch();
  }
  WgOp* op = wgArrive(t, kWgMmaRs, n * 32 + kind * 4 + transB, p);
  if (op->arrived == 1) op->descB = descB;
  else if (op->descB != descB) {
    report(FindingKind::CollectiveMismatch, t, p, 0, "threads of a warpgroup pass different wgmma matrix descriptors");
    abortLaunch();
  }
  op->d[t->tid % 128] = d;
  op->scale[t->tid % 128] = scaleD != 0;
  for (int r = 0; r < 4; ++r) op->a[t->tid % 128][r] = a[r];
  wgFinish(t, op);
}

void Machine::wgmmaSync(int opKind, int n, const void* pc) {
  Thread* t = current_;
  activateHopper();
  int kind = opKind == TLC_EMU_WGMMA_FENCE ? kWgFence : opKind == TLC_EMU_WGMMA_COMMIT ? kWgCommit : kWgWait;
  if (kind == kWgWait && (n < 0 || n > 7)) {
    report(FindingKind::Trap, t, pcOffset(pc), 0, "wgmma.wait_group count must be in [0, 7]");
    abortLaunch();
  }
  wgFinish(t, wgArrive(t, kind, kind == kWgWait ? n : 0, pcOffset(pc)));
}

void Machine::setmaxnreg(int inc, unsigned regs, const void* pc) {
  Thread* t = current_;
  activateHopper();
  wgFinish(t, wgArrive(t, kWgSetmaxnreg, (inc ? 1024 : 0) + (int)std::min(regs, 1023u), pcOffset(pc)));
}

// At the end of a block: setmaxnreg.inc takes registers only from those
// the block's setmaxnreg.dec released; a warpgroup asking for more waits
// forever on the GPU.
void Machine::checkRegisterPool() {
  if (regsTaken_ <= regsReleased_) return;
  report(FindingKind::Deadlock, nullptr, 0, 0,
         "setmaxnreg.inc asks for " + std::to_string(regsTaken_) + " more registers than the block's " +
             std::to_string(regsReleased_) + " released by setmaxnreg.dec (each thread starts with " +
             std::to_string(entryRegs_) + " under its __launch_bounds__): on a GPU the block waits forever");
  aborted_ = true;
}

void Machine::hopperThreadExit(Thread* t) {
  if (warpgroups_.empty()) return;
  const unsigned wg = t->tid / 128;
  if (wg >= warpgroups_.size()) return;
  Warpgroup& w = warpgroups_[wg];
  if (w.active && !w.active->members[t->tid % 128]) {
    report(FindingKind::Deadlock, t, w.active->pc, 0,
           std::string("a thread exited while the other threads of its warpgroup wait for it in ") +
               wgName(w.active->kind));
    aborted_ = true;
  }
  // When the whole warpgroup has exited its outstanding wgmmas complete.
  for (unsigned i = wg * 128; i < std::min(threadsPerBlock_, wg * 128 + 128); ++i)
    if (threads_[i]->status != Thread::Done) return;
  for (auto& g : w.groups) retireWgmmaGroup(w, g, t, 0, false);
  w.groups.clear();
  retireWgmmaGroup(w, w.uncommitted, t, 0, false);
  w.inFlight.clear();
}

}  // namespace tlc::cuda_emu
