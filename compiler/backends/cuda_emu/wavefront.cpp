// The 64-lane wavefront collectives of the emulated machine, for HIP C: the
// CDNA matrix instructions (MFMA) and the shuffles of width 64.
//
// The machine schedules 32-lane warps, and a shuffle of width 32 or less
// stays a collective of one of them (its segments lie within one half of a
// wavefront). An MFMA, and a shuffle of width 64 (HIP's `__shfl_xor(v, 32)`,
// whose distance 32 crosses the halves), are instructions of the whole
// 64-lane wavefront, so its lanes rendezvous: threads 64w .. 64w + 63 of the
// block each arrive with their operands, and the last to arrive executes
// the instruction for all (isa_mfma.h, isa::waveShfl), then resumes the
// others. Lanes meeting in different instructions are a
// `collective-mismatch`; a lane of the wavefront that exited, or that waits
// elsewhere (a barrier, a warp collective), is a `deadlock`. An MFMA needs
// all 64 lanes; a shuffle in a wavefront with fewer threads (a block that is
// not whole wavefronts) has the lanes that exist, and one reading a lane
// that does not exist is a `shuffle-inactive-lane` (its value is undefined
// on the GPU). Registers are not instrumented (as for mma.sync): these
// touch no memory, and they do not order memory between the two halves: on
// the GPU a wavefront runs in lockstep, but the emulator keeps ordering
// 32-lane warps only, which is stricter (HIP C must not rely on it).
#include <cstring>

#include "compiler/backends/cuda_emu/isa_mfma.h"
#include "compiler/backends/cuda_emu/machine.h"
#include "compiler/backends/cuda_emu/machine_internal.h"

namespace tlc::cuda_emu {

namespace {

std::string mfmaName(int kind) {
  if (kind < 0 || kind >= TLC_EMU_MFMA_KIND_COUNT) return "an MFMA";
  return isa::mfmaInfo((isa::MfmaKind)kind).instruction;
}

std::string waveOpName(int kind, int sub) {
  if (kind == Machine::WaveOp::Mfma) return mfmaName(sub);
  static const char* const names[] = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"};
  return std::string(sub >= 0 && sub < 4 ? names[sub] : "a shuffle") + " of width 64";
}

// An MFMA whose lanes' 8 operand bytes are 8 elements of type In, with
// accumulators of type Acc: the operands and accumulators copied out of the
// wavefront's slots, `compute(a, b, c, d)`, and D copied back.
template <class In, class Acc, class Compute>
void runOnBytes(Machine::WaveOp* op, int regs, Compute compute) {
  static thread_local In a[isa::kWavefrontSize][8], b[isa::kWavefrontSize][8];
  static thread_local Acc c[isa::kWavefrontSize][16], out[isa::kWavefrontSize][16];
  for (int l = 0; l < 64; ++l) {
    std::memcpy(a[l], op->a[l], sizeof a[l]);
    std::memcpy(b[l], op->b[l], sizeof b[l]);
    std::memcpy(c[l], op->d[l], regs * sizeof(Acc));
  }
  compute(a, b, c, out);
  for (int l = 0; l < 64; ++l) std::memcpy(op->d[l], out[l], regs * sizeof(Acc));
}

}  // namespace

void Machine::resetWavefronts() {
  for (WaveOp*& w : waveOps_) delete w;
  waveOps_.assign((threadsPerBlock_ + 63) / 64, nullptr);
}

std::string Machine::wavefrontWaitText(const Thread* t) const {
  const WaveOp* op = waveOps_[t->tid / 64];
  return (op ? waveOpName(op->kind, op->sub) : std::string("a wavefront instruction")) +
         " (a 64-lane wavefront collective)";
}

Machine::WaveOp* Machine::waveArrive(Thread* t, int kind, int sub, uint32_t p) {
  const std::string name = waveOpName(kind, sub);
  const unsigned w = t->tid / 64, first = w * 64;
  const unsigned lanes = std::min(64u, threadsPerBlock_ - first);
  if (kind == WaveOp::Mfma && lanes < 64) {
    report(FindingKind::Deadlock, t, p, 0,
           name + " in wavefront " + std::to_string(w) + ", which has only " + std::to_string(lanes) +
               " threads (an MFMA needs all 64 lanes of its wavefront; launch a multiple of 64 threads)");
    abortLaunch();
  }
  for (unsigned i = first; i < first + lanes; ++i)
    if (threads_[i]->status == Thread::Done) {
      report(FindingKind::Deadlock, t, p, 0,
             name + " waits for thread " + std::to_string(i) + " of its wavefront, which has exited");
      abortLaunch();
    }
  WaveOp*& slot = waveOps_[w];
  if (slot && (slot->kind != kind || slot->sub != sub)) {
    report(FindingKind::CollectiveMismatch, t, p, slot->pc,
           "wavefront collectives do not match: this lane executes " + name + " while " +
               std::to_string(slot->arrived) + " lanes of its wavefront wait in " + waveOpName(slot->kind, slot->sub));
    abortLaunch();
  }
  if (!slot) {
    slot = new WaveOp();
    slot->kind = (WaveOp::Kind)kind;
    slot->sub = sub;
    slot->pc = p;
    slot->expected = lanes;
  }
  slot->members[t->tid % 64] = t;
  return slot;
}

bool Machine::waveWait(Thread* t, WaveOp* op) {
  if (++op->arrived < op->expected) {
    t->wait = Thread::InWavefront;
    t->waitPc = op->pc;
    block(t);
    return false;
  }
  waveOps_[t->tid / 64] = nullptr;
  return true;
}

void Machine::waveRelease(Thread* t, WaveOp* op) {
  for (Thread* m : op->members) {
    if (!m || m == t) continue;
    m->wait = Thread::None;
    if (m->status == Thread::Blocked) m->status = Thread::Ready;
  }
  delete op;
}

void Machine::mfma(int kind, float* d, const uint16_t* a, const uint16_t* b, const void* pc) {
  Thread* t = current_;
  const uint32_t p = pcOffset(pc);
  if (kind < 0 || kind >= TLC_EMU_MFMA_KIND_COUNT) {
    report(FindingKind::Trap, t, p, 0, "unknown MFMA instruction kind " + std::to_string(kind));
    abortLaunch();
  }
  WaveOp* op = waveArrive(t, WaveOp::Mfma, kind, p);
  const unsigned lane = t->tid % 64;
  op->d[lane] = d;
  std::memcpy(op->a[lane], a, sizeof op->a[lane]);
  std::memcpy(op->b[lane], b, sizeof op->b[lane]);
  if (!waveWait(t, op)) return;
  const isa::MfmaInfo& info = isa::mfmaInfo((isa::MfmaKind)kind);
  const int regs = info.accRegs;
  if (info.int8) {
    // The lanes' 8 operand bytes are their int8 elements; the accumulators int32.
    runOnBytes<int8_t, int32_t>(op, regs, [&](auto a, auto b, auto c, auto d) { isa::mfmaInt8((isa::MfmaKind)kind, a, b, c, d); });
  } else if (info.fp8Exp) {
    // The lanes' 8 operand bytes are their FNUZ float8 elements.
    runOnBytes<uint8_t, float>(op, regs, [&](auto a, auto b, auto c, auto d) { isa::mfmaFp8((isa::MfmaKind)kind, a, b, c, d); });
  } else {
    static thread_local float c[isa::kWavefrontSize][16], out[isa::kWavefrontSize][16];
    for (int l = 0; l < 64; ++l) std::memcpy(c[l], op->d[l], regs * sizeof(float));
    isa::mfma((isa::MfmaKind)kind, op->a, op->b, c, out);
    for (int l = 0; l < 64; ++l) std::memcpy(op->d[l], out[l], regs * sizeof(float));
  }
  waveRelease(t, op);
}

uint32_t Machine::waveShfl(Thread* t, int mode, uint32_t value, int arg, int* valid, uint32_t p) {
  WaveOp* op = waveArrive(t, WaveOp::Shfl, mode, p);
  const unsigned lane = t->tid % 64;
  op->value[lane] = value;
  op->arg[lane] = arg;
  if (waveWait(t, op)) {
    uint32_t out[64] = {};
    bool ok[64] = {};
    int src[64] = {};
    const unsigned n = op->expected;
    isa::waveShfl(mode, n == 64 ? ~0ull : (1ull << n) - 1, op->value, op->arg, 64, out, ok, src);
    for (unsigned l = 0; l < n; ++l) {
      op->members[l]->collResult = out[l];
      op->members[l]->collValid = ok[l];
      if (src[l] >= (int)n)
        report(FindingKind::ShuffleFromInactiveLane, op->members[l], op->pc, 0,
               "shuffle reads lane " + std::to_string(src[l]) + " of its wavefront, which has only " +
                   std::to_string(n) + " threads in this block (the result is undefined)");
    }
    waveRelease(t, op);
  }
  if (valid) *valid = t->collValid;
  return t->collResult;
}

void Machine::wavefrontThreadExit(Thread* t) {
  const unsigned w = t->tid / 64;
  if (w >= waveOps_.size() || !waveOps_[w] || waveOps_[w]->members[t->tid % 64]) return;
  report(FindingKind::Deadlock, t, waveOps_[w]->pc, 0,
         "a lane exited while the other lanes of its wavefront wait for it in " +
             waveOpName(waveOps_[w]->kind, waveOps_[w]->sub));
  aborted_ = true;
}

}  // namespace tlc::cuda_emu
