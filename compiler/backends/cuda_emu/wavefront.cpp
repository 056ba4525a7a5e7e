// The 64-lane wavefront collectives of the emulated machine: the CDNA matrix
// instructions (MFMA) of HIP C.
//
// The machine schedules 32-lane warps (the emitter's warp-level code stays
// within a 32-lane half of a wavefront); an MFMA is an instruction of the
// whole 64-lane wavefront, so its two halves rendezvous: threads 64w ..
// 64w + 63 of the block each arrive with their A and B elements and their
// accumulator, and the last to arrive computes D = A * B + C for all 64
// lanes with the instruction's semantics (isa_mfma.h), then resumes the
// others. Lanes meeting in different MFMA instructions are a
// `collective-mismatch`; an MFMA in a wavefront with fewer than 64 threads,
// or whose lanes exited or wait elsewhere (a barrier), is a `deadlock`.
// Registers are not instrumented (as for mma.sync): an MFMA touches no
// memory, so the memory checks see the operand loads before it. It does not
// order memory between the two halves: on the GPU a wavefront runs in
// lockstep, but the emulator keeps ordering 32-lane warps only, which is
// stricter (HIP C must not rely on it).
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
  return mfmaName(t->waitColl) + " (a 64-lane wavefront collective)";
}

void Machine::mfma(int kind, float* d, const uint16_t* a, const uint16_t* b, const void* pc) {
  Thread* t = current_;
  const uint32_t p = pcOffset(pc);
  if (kind < 0 || kind >= TLC_EMU_MFMA_KIND_COUNT) {
    report(FindingKind::Trap, t, p, 0, "unknown MFMA instruction kind " + std::to_string(kind));
    abortLaunch();
  }
  const std::string name = mfmaName(kind);
  const unsigned w = t->tid / 64;
  if ((w + 1) * 64 > threadsPerBlock_) {
    report(FindingKind::Deadlock, t, p, 0,
           name + " in wavefront " + std::to_string(w) + ", which has only " + std::to_string(threadsPerBlock_ - w * 64) +
               " threads (an MFMA needs all 64 lanes of its wavefront; launch a multiple of 64 threads)");
    abortLaunch();
  }
  for (unsigned i = w * 64; i < w * 64 + 64; ++i)
    if (threads_[i]->status == Thread::Done) {
      report(FindingKind::Deadlock, t, p, 0,
             name + " waits for thread " + std::to_string(i) + " of its wavefront, which has exited");
      abortLaunch();
    }
  WaveOp*& slot = waveOps_[w];
  if (slot && slot->kind != kind) {
    report(FindingKind::CollectiveMismatch, t, p, slot->pc,
           "wavefront collectives do not match: this lane executes " + name + " while " +
               std::to_string(slot->arrived) + " lanes of its wavefront wait in " + mfmaName(slot->kind));
    abortLaunch();
  }
  if (!slot) {
    slot = new WaveOp();
    slot->kind = kind;
    slot->pc = p;
  }
  WaveOp* op = slot;
  const unsigned lane = t->tid % 64;
  op->members[lane] = t;
  op->d[lane] = d;
  std::memcpy(op->a[lane], a, sizeof op->a[lane]);
  std::memcpy(op->b[lane], b, sizeof op->b[lane]);
  if (++op->arrived < 64) {
    t->wait = Thread::InWavefront;
    t->waitColl = kind;
    t->waitPc = op->pc;
    block(t);
    return;
  }
  slot = nullptr;
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
  for (Thread* m : op->members) {
    if (m == t) continue;
    m->wait = Thread::None;
    if (m->status == Thread::Blocked) m->status = Thread::Ready;
  }
  delete op;
}

void Machine::wavefrontThreadExit(Thread* t) {
  const unsigned w = t->tid / 64;
  if (w >= waveOps_.size() || !waveOps_[w] || waveOps_[w]->members[t->tid % 64]) return;
  report(FindingKind::Deadlock, t, waveOps_[w]->pc, 0,
         "a lane exited while the other lanes of its wavefront wait for it in " + mfmaName(waveOps_[w]->kind));
  aborted_ = true;
}

}  // namespace tlc::cuda_emu
