// Internal data structures of the emulated GPU shared by the files that
// implement Machine (threads, collectives, allocations, Hopper state).
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/backends/cuda_emu/isa.h"
#include "compiler/backends/cuda_emu/machine.h"

namespace tlc::cuda_emu {

// ByteShadow::flags
constexpr uint8_t kWAtomic = 1, kRMulti = 2, kRMultiWarp = 4, kWTma = 8;
// Access flag (beside TLC_EMU_*) passed to checkAsyncBytes: the access is recorded.
constexpr int kRecordFlag = 0x100;

// Seconds on a monotonic clock: the launch's time limit.
inline double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One warp-wide shared-memory instruction at pc that took wf's wavefronts:
// added to the launch's totals and to pc's bank-conflict site.
inline void countSharedWavefronts(Machine& m, uint32_t pc, const isa::Wavefronts& wf) {
  m.result_->sharedInstructions++;
  m.result_->sharedWavefronts += wf.actual;
  m.result_->idealSharedWavefronts += wf.ideal;
  BankConflictSite& site = m.bankSites_[pc];
  site.where.pc = m.moduleBase_ + pc;
  site.instructions++;
  site.extraWavefronts += wf.actual - wf.ideal;
}

struct PendingCopy {
  uintptr_t dst;
  uint8_t data[16];
  int size;
  uint32_t pc;
};

struct Machine::Thread {
  Fiber fiber;
  Machine* m = nullptr;
  unsigned tid = 0, lane = 0, warp = 0;
  uint32_t gid = 0;  // global thread id + 1
  enum Status { Ready, Blocked, Done } status = Ready;
  enum Wait { None, AtBarrier, InCollective, AtMbarrier, InWarpgroup, InWavefront } wait = None;
  uint32_t waitPc = 0;
  unsigned waitBarrier = 0;
  int waitColl = 0;
  std::vector<PendingCopy> uncommitted;
  std::deque<std::vector<PendingCopy>> groups;
  uint64_t clock = 0;
  std::unordered_map<uint32_t, uint32_t> occurrence;
  uint32_t collResult = 0;
  int collValid = 1;
  int barCount = 0, barAll = 1, barAny = 0;  // bar.red results of the last barrier
  tlc_emu_thread_state* state = nullptr;
  void (*launchFn)(void**) = nullptr;
  void** argv = nullptr;
  // Hopper: what this thread knows through mbarrier synchronization (only
  // kept while the block uses mbarriers): vc[u] is the latest clock of
  // thread u (block-local id) ordered before this thread (vc[tid] is its
  // own clock, advanced at each mbarrier arrive); seen[b] the latest
  // completed phase of mbarrier b it has observed (-1: none).
  std::vector<uint32_t> vc;
  std::vector<int64_t> seen;
  uint32_t waitMbar = 0;
  unsigned waitParity = 0;
};

struct Machine::Collective {
  int kind, sub;
  unsigned mask;
  uint32_t arrived = 0;
  uint32_t pc;
  struct Lane {
    Thread* t = nullptr;
    uint32_t value = 0;
    int arg = 0;
    const void* addr = nullptr;
    uint32_t* out = nullptr;
    const uint32_t *a = nullptr, *b = nullptr, *c = nullptr;
    bool pred = false;
  } lanes[32];
};

struct Machine::Region {
  uint8_t* map = nullptr;
  size_t mapBytes = 0;
  uintptr_t base = 0;
  size_t bytes = 0;
  size_t argIndex = 0;
  std::string name;
  bool writable = true;
  bool tensorOnly = false;  // the tensor of a tensor-map argument that no pointer argument covers
  std::vector<ByteShadow> shadow;
};


// An mbarrier: emulator state keyed by the object's shared address (the 8
// bytes in shared memory are not used).
struct Machine::Mbarrier {
  uint32_t offset = 0;  // shared address
  isa::MbarState st;
  uint32_t initPc = 0, initThread = 0, initEpoch = 0, initClock = 0;
  uint32_t expectPc = 0;  // the last arrive.expect_tx
  bool overflowReported = false;
  // Knowledge released into the current phase, and through the last completed one.
  std::vector<uint32_t> relVc, doneVc;
  std::vector<int64_t> relSeen, doneSeen;
};

// Per shared byte, the asynchronous proxy's state.
struct Machine::AsyncByte {
  uint32_t tmaBar = 0;    // mbarrier index + 1 of the tensor copy that wrote it (0: none)
  uint32_t tmaPhase = 0;  // the phase its complete_tx counted on
  uint32_t tmaPc = 0;
  uint32_t wgmmaPc = 0;
  uint16_t wgmmaPending = 0;  // uncompleted wgmma operations reading it
};

// A warpgroup-wide collective (wgmma.*, setmaxnreg): every thread of the
// warpgroup arrives; the last one executes it.
struct Machine::WgOp {
  int kind = 0, sub = 0;
  uint32_t pc = 0;
  unsigned arrived = 0;
  Thread* members[128] = {};
  float* d[128] = {};
  int scale[128] = {};
  uint64_t descA = 0, descB = 0;
  uint32_t a[128][4] = {};  // wgmma with A from registers: each thread's A fragment
};

// A wgmma group: what its wgmmas read and the accumulator registers they
// write. A wgmma computes at issue, but its results reach the registers only
// when a wgmma.wait_group retires its group; until then the registers hold
// kAccumulatorInFlight (a NaN), so that a read before the wait shows in the
// results and a write before it is found at the wait.
struct Machine::WgmmaGroup {
  struct Result {
    uint32_t* reg;
    uint32_t pc;
    unsigned thread;  // the block's thread whose register it is
  };
  uint64_t seq = 0;
  std::vector<uint32_t> chunks;  // 16-byte shared chunks its wgmmas read
  std::vector<Result> results;   // accumulator registers its wgmmas write
};

struct Machine::Warpgroup {
  WgOp* active = nullptr;
  unsigned regs = 0;  // the register count setmaxnreg set (0: the launch's)
  WgmmaGroup uncommitted;  // issued, uncommitted wgmmas
  std::deque<WgmmaGroup> groups;
  uint64_t nextSeq = 1;
  // Accumulator registers written by issued wgmmas not yet retired: their
  // value once those complete, and the group of the last wgmma to write it.
  struct InFlight {
    uint32_t bits;
    uint64_t seq;
  };
  std::unordered_map<uint32_t*, InFlight> inFlight;
};

// A 64-lane wavefront collective (wavefront.cpp): an MFMA or a width-64
// shuffle. Every lane of the wavefront arrives with its operands; the last
// one executes it.
struct Machine::WaveOp {
  enum Kind { Mfma, Shfl } kind = Mfma;
  int sub = 0;  // Mfma: TLC_EMU_MFMA_*; Shfl: the mode (TLC_EMU_SHFL_*)
  uint32_t pc = 0;
  unsigned arrived = 0, expected = 64;
  Thread* members[64] = {};
  // Mfma: each lane's accumulator and operands.
  float* d[64] = {};
  uint16_t a[64][4] = {}, b[64][4] = {};
  // Shfl: each lane's value and lane or delta.
  uint32_t value[64] = {};
  int arg[64] = {};
};

}  // namespace tlc::cuda_emu
