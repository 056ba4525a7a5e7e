// The emulated GPU's threads (see machine.h): the scheduler of a block's
// fibers, thread exit and deadlocks, block and named barriers, and the warp
// collectives (shuffles, votes, __syncwarp, mma.sync, ldmatrix, stmatrix).
#include "compiler/backends/cuda_emu/machine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "compiler/backends/cuda_emu/isa.h"
#include "compiler/backends/cuda_emu/machine_internal.h"

namespace tlc::cuda_emu {

namespace {


enum CollKind { kShfl = 0, kVote, kWarpSync, kMma, kLdmatrix, kStmatrix };
const char* collName(int k) {
  static const char* names[] = {"shfl.sync", "vote.sync", "__syncwarp", "mma.sync", "ldmatrix",
                                "stmatrix"};
  return names[k];
}

}  // namespace

// ---------------------------------------------------------------------------
// Scheduling

void Machine::schedule() {
  while (!aborted_) {
    bool ran = false, allDone = true;
    for (unsigned i = 0; i < threadsPerBlock_ && !aborted_; ++i) {
      Thread* t = threads_[i].get();
      if (t->status == Thread::Done) continue;
      allDone = false;
      if (t->status != Thread::Ready) continue;
      current_ = t;
      *selfVar_ = t->state;
      result_->threadSwitches++;
      t->fiber.resume();
      current_ = nullptr;
      ran = true;
    }
    if (aborted_ || allDone) return;
    if (!ran) {
      // Nobody can run: a deadlock. Describe what everyone waits for.
      std::map<std::pair<std::string, uint32_t>, int> waits;
      Thread* first = nullptr;
      int exited = 0;
      for (unsigned i = 0; i < threadsPerBlock_; ++i) {
        Thread* t = threads_[i].get();
        if (t->status == Thread::Done) {
          exited++;
          continue;
        }
        if (!first) first = t;
        waits[{describeWait(t), t->waitPc}]++;
      }
      std::string msg = "deadlock: no thread of the block can make progress;";
      bool firstWait = true;
      for (auto& [k, cnt] : waits) {
        msg += (firstWait ? " " : ", ") + std::to_string(cnt) + " wait in " + k.first;
        firstWait = false;
      }
      if (exited) msg += "; " + std::to_string(exited) + " have exited";
      report(FindingKind::Deadlock, first, first ? first->waitPc : 0, 0, msg);
      aborted_ = true;
      return;
    }
  }
}

std::string Machine::describeWait(const Thread* t) const {
  switch (t->wait) {
    case Thread::AtBarrier:
      return t->waitBarrier ? "named barrier " + std::to_string(t->waitBarrier) : std::string("a barrier");
    case Thread::InCollective: return collName(t->waitColl);
    case Thread::AtMbarrier:
    case Thread::InWarpgroup: return hopperWaitText(t);
    case Thread::InWavefront: return wavefrontWaitText(t);
    default: return "nothing";
  }
}

void Machine::block(Thread* t) {
  t->status = Thread::Blocked;
  t->fiber.suspend();
}

void Machine::abortLaunch() {
  aborted_ = true;
  Thread* t = current_;
  if (t) {
    t->status = Thread::Blocked;
    t->fiber.suspend();
  }
  std::abort();  // never resumed
}

void Machine::threadExit(Thread* t) {
  // Outstanding async copies still land (the hardware completes them).
  while (!t->groups.empty()) {
    landGroup(t, t->groups.front());
    t->groups.pop_front();
  }
  landGroup(t, t->uncommitted);
  t->uncommitted.clear();
  t->status = Thread::Done;
  if (hopperActive_) hopperThreadExit(t);
  wavefrontThreadExit(t);
  // Warp collectives that wait for this lane can never complete.
  for (Collective* c : activeCollectives_[t->warp])
    if ((c->mask >> t->lane & 1u) && !(c->arrived >> t->lane & 1u)) {
      report(FindingKind::Deadlock, t, c->pc, 0,
             std::string("a lane exited while the other lanes of its warp wait for it in ") +
                 collName(c->kind) + " (member mask includes the exited lane)");
      aborted_ = true;
    }
  for (auto& [id, b] : barriers_)
    if (b.arrived) releaseBarrierIfDone(id);
  t->fiber.suspend();
  std::abort();
}

// ---------------------------------------------------------------------------
// Barriers and warp collectives

int Machine::barRed(int op, int pred, const void* pc) {
  Thread* t = current_;
  if (!t) return 0;
  Barrier& b = barriers_[0];
  if (b.arrived == 0) {
    b.count = 0;
    b.all = 1;
    b.any = 0;
  }
  b.count += pred != 0;
  b.all &= pred != 0;
  b.any |= pred != 0;
  barSync(0, 0, pc);
  switch (op) {
    case TLC_EMU_BAR_RED_POPC: return t->barCount;
    case TLC_EMU_BAR_RED_AND: return t->barAll;
    default: return t->barAny;
  }
}

void Machine::barSync(unsigned id, unsigned count, const void* pc) {
  Thread* t = current_;
  if (!t) return;
  Barrier& b = barriers_[id];
  if (b.arrived == 0) {
    b.pc = pcOffset(pc);
    b.expected = count >= threadsPerBlock_ ? 0 : count;
    if (id != 0 || count != 0) {
      b.count = 0;
      b.all = 1;
      b.any = 0;
    }
  }
  b.arrived++;
  t->wait = Thread::AtBarrier;
  t->waitBarrier = id;
  t->waitPc = pcOffset(pc);
  releaseBarrierIfDone(id);
  if (t->wait == Thread::AtBarrier) block(t);
}

void Machine::releaseBarrierIfDone(unsigned id) {
  Barrier& b = barriers_[id];
  if (b.arrived == 0) return;
  unsigned live = 0, exited = 0;
  const Thread* firstExited = nullptr;
  for (unsigned i = 0; i < threadsPerBlock_; ++i) {
    if (threads_[i]->status == Thread::Done) {
      exited++;
      if (!firstExited) firstExited = threads_[i].get();
    } else {
      live++;
    }
  }
  if (b.expected == 0) {
    if (b.arrived < live) return;
    if (exited > 0) {
      report(FindingKind::BarrierNotReachedByAll, firstExited, b.pc, 0,
             "barrier reached by " + std::to_string(b.arrived) + " of " + std::to_string(threadsPerBlock_) +
                 " threads of the block; " + std::to_string(exited) +
                 " had already exited (e.g. this one), which is undefined behavior for __syncthreads()");
    }
  } else if (b.arrived < b.expected) {
    return;
  }
  if (hopperActive_) joinBarrierKnowledge(id);
  for (unsigned i = 0; i < threadsPerBlock_; ++i) {
    Thread* t = threads_[i].get();
    if (t->wait == Thread::AtBarrier && t->waitBarrier == id) {
      t->wait = Thread::None;
      t->barCount = b.count;
      t->barAll = b.all;
      t->barAny = b.any;
      if (t->status == Thread::Blocked) t->status = Thread::Ready;
    }
  }
  b.arrived = 0;
  b.count = 0;
  b.all = 1;
  b.any = 0;
  blockEpoch_++;
  if (options_.countBankConflicts) flushBankConflicts();
}

Machine::Collective* Machine::arrive(Thread* t, int kind, int sub, unsigned mask, uint32_t pc) {
  const uint32_t bit = 1u << t->lane;
  if (!(mask & bit)) {
    report(FindingKind::CollectiveMismatch, t, pc, 0,
           std::string(collName(kind)) + " executed by a lane that is not in its member mask");
    abortLaunch();
  }
  for (unsigned l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u)) continue;
    unsigned tid = t->warp * 32 + l;
    if (tid >= threadsPerBlock_ || threads_[tid]->status == Thread::Done) {
      report(FindingKind::Deadlock, t, pc, 0,
             std::string(collName(kind)) + "'s member mask names lane " + std::to_string(l) +
                 (tid >= threadsPerBlock_ ? ", which does not exist in this block" : ", which has exited"));
      abortLaunch();
    }
  }
  for (Collective* c : activeCollectives_[t->warp]) {
    if (!(c->mask & bit) || (c->arrived & bit)) continue;
    if (c->kind != kind || c->sub != sub || c->mask != mask) {
      char buf[240];
      snprintf(buf, sizeof buf,
               "warp collectives do not match: this lane executes %s (mask 0x%08x) while lanes 0x%08x of its warp wait in %s (mask 0x%08x)",
               collName(kind), mask, c->arrived, collName(c->kind), c->mask);
      report(FindingKind::CollectiveMismatch, t, pc, c->pc, buf);
      abortLaunch();
    }
    c->arrived |= bit;
    c->lanes[t->lane].t = t;
    return c;
  }
  auto* c = new Collective();
  c->kind = kind;
  c->sub = sub;
  c->mask = mask;
  c->pc = pc;
  c->arrived = bit;
  c->lanes[t->lane].t = t;
  activeCollectives_[t->warp].push_back(c);
  return c;
}

// Waits until every lane of c arrived; the last one to arrive runs it.
#define TLC_EMU_FINISH_ARRIVAL(t, c)                                     \
  do {                                                                   \
    if ((c)->arrived == (c)->mask) {                                     \
      complete(*(c));                                                    \
    } else {                                                             \
      (t)->wait = Thread::InCollective;                                  \
      (t)->waitColl = (c)->kind;                                         \
      (t)->waitPc = (c)->pc;                                             \
      block(t);                                                          \
    }                                                                    \
  } while (0)

void Machine::complete(Collective& c) {
  unsigned warp = c.lanes[__builtin_ctz(c.mask)].t->warp;
  auto& act = activeCollectives_[warp];
  act.erase(std::remove(act.begin(), act.end(), &c), act.end());
  switch (c.kind) {
    case kShfl: {
      uint32_t value[32] = {}, out[32] = {};
      int arg[32] = {}, src[32] = {};
      bool valid[32] = {};
      for (int l = 0; l < 32; ++l) {
        value[l] = c.lanes[l].value;
        arg[l] = c.lanes[l].arg;
      }
      isa::shfl(c.sub / 64, c.mask, value, arg, c.sub % 64, out, valid, src);
      for (int l = 0; l < 32; ++l) {
        if (!(c.mask >> l & 1u)) continue;
        c.lanes[l].t->collResult = out[l];
        c.lanes[l].t->collValid = valid[l];
        if (!(c.mask >> src[l] & 1u))
          report(FindingKind::ShuffleFromInactiveLane, c.lanes[l].t, c.pc, 0,
                 "shuffle reads lane " + std::to_string(src[l]) +
                     ", which is not in the member mask (the result is undefined)");
      }
      break;
    }
    case kVote: {
      bool pred[32] = {};
      for (int l = 0; l < 32; ++l) pred[l] = c.lanes[l].pred;
      uint32_t r = isa::vote(c.sub, c.mask, pred);
      for (int l = 0; l < 32; ++l)
        if (c.mask >> l & 1u) c.lanes[l].t->collResult = r;
      break;
    }
    case kWarpSync: {
      warpEpoch_[warp]++;
      // With mbarriers in use, __syncwarp joins the lanes' knowledge: a
      // lane's later arrive releases what the others did before it.
      if (hopperActive_) {
        std::vector<Thread*> lanes;
        for (int l = 0; l < 32; ++l)
          if (c.mask >> l & 1u) lanes.push_back(c.lanes[l].t);
        joinKnowledge(lanes);
      }
      break;
    }
    case kMma: {
      const uint32_t *a[32], *b[32], *cc[32];
      uint32_t* d[32];
      for (int l = 0; l < 32; ++l) {
        a[l] = c.lanes[l].a;
        b[l] = c.lanes[l].b;
        cc[l] = c.lanes[l].c;
        d[l] = c.lanes[l].out;
      }
      isa::mma(c.sub, a, b, cc, d);
      break;
    }
    case kLdmatrix:
    case kStmatrix: {
      const int num = c.sub / 2;
      const bool trans = c.sub % 2;
      const bool load = c.kind == kLdmatrix;
      uint16_t rows[4][8][8] = {};
      uint32_t regs[32][4] = {};
      if (!load)
        for (int l = 0; l < 32; ++l)
          for (int m = 0; m < num; ++m) regs[l][m] = c.lanes[l].a[m];
      if (!load) isa::stmatrix(num, trans, regs, rows);
      for (int m = 0; m < num; ++m) {
        uint64_t bankAddr[32] = {};
        uint32_t bankMask = 0;
        for (int r = 0; r < 8; ++r) {
          int l = 8 * m + r;
          Thread* lt = c.lanes[l].t;
          uintptr_t a = (uintptr_t)c.lanes[l].addr;
          if (a < sharedBegin_ || a + 16 > sharedEnd_) {
            report(FindingKind::WildAccess, lt, c.pc, 0,
                   std::string(load ? "ldmatrix" : "stmatrix") + " row address of lane " + std::to_string(l) +
                       " is not in shared memory");
            continue;
          }
          if (a % 16) {
            report(FindingKind::Misaligned, lt, c.pc, 0,
                   std::string(load ? "ldmatrix" : "stmatrix") + " row address of lane " + std::to_string(l) +
                       " is not 16-byte aligned");
            continue;
          }
          checkShared(lt, a, 16, load ? TLC_EMU_READ : TLC_EMU_WRITE, c.pc, true);
          if (load)
            std::memcpy(rows[m][r], (const void*)a, 16);
          else
            std::memcpy((void*)a, rows[m][r], 16);
          bankAddr[r] = a - sharedBegin_;
          bankMask |= 1u << r;
        }
        if (options_.countBankConflicts && bankMask) {
          // One 8x8 matrix is one 128-byte phase: 8 rows of 16 bytes.
          isa::Wavefronts wf = backend::bankWavefronts(
              8, 16, [&](int r) { return bankAddr[r]; }, [&](int r) { return (bankMask >> r & 1u) != 0; });
          countSharedWavefronts(*this, c.pc, wf);
        }
      }
      if (load) {
        isa::ldmatrix(num, trans, rows, regs);
        for (int l = 0; l < 32; ++l) std::memcpy(c.lanes[l].out, regs[l], sizeof(uint32_t) * num);
      }
      break;
    }
  }
  for (int l = 0; l < 32; ++l) {
    if (!(c.mask >> l & 1u)) continue;
    Thread* lt = c.lanes[l].t;
    lt->wait = Thread::None;
    if (lt->status == Thread::Blocked) lt->status = Thread::Ready;
  }
  delete &c;
}

void Machine::warpSync(unsigned mask, const void* pc) {
  Thread* t = current_;
  Collective* c = arrive(t, kWarpSync, 0, mask, pcOffset(pc));
  TLC_EMU_FINISH_ARRIVAL(t, c);
}

uint32_t Machine::shfl(int mode, unsigned mask, uint32_t value, int arg, int width, int* valid, const void* pc) {
  Thread* t = current_;
  // HIP C: a shuffle of width 64 is one of the whole wavefront (wavefront.cpp);
  // HIP's shuffles have no member mask.
  if (width == isa::kWavefrontSize && wavefrontShuffles_) return waveShfl(t, mode, value, arg, valid, pcOffset(pc));
  if (width <= 0 || width > 32 || (width & (width - 1))) {
    report(FindingKind::Trap, t, pcOffset(pc), 0, "shuffle width must be a power of two in [1, 32]");
    abortLaunch();
  }
  Collective* c = arrive(t, kShfl, mode * 64 + width, mask, pcOffset(pc));
  c->lanes[t->lane].value = value;
  c->lanes[t->lane].arg = arg;
  TLC_EMU_FINISH_ARRIVAL(t, c);
  if (valid) *valid = t->collValid;
  return t->collResult;
}

uint32_t Machine::vote(int mode, unsigned mask, int pred, const void* pc) {
  Thread* t = current_;
  Collective* c = arrive(t, kVote, mode, mask, pcOffset(pc));
  c->lanes[t->lane].pred = pred != 0;
  TLC_EMU_FINISH_ARRIVAL(t, c);
  return t->collResult;
}

void Machine::mma(int kind, uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* cc, const void* pc) {
  Thread* t = current_;
  if (!isa::mmaInfo(kind)) {
    report(FindingKind::Trap, t, pcOffset(pc), 0, "unknown mma.sync kind " + std::to_string(kind));
    abortLaunch();
  }
  Collective* c = arrive(t, kMma, kind, 0xffffffffu, pcOffset(pc));
  auto& l = c->lanes[t->lane];
  l.a = a;
  l.b = b;
  l.c = cc;
  l.out = d;
  TLC_EMU_FINISH_ARRIVAL(t, c);
}

void Machine::ldmatrix(int num, int trans, uint32_t* dst, const void* row, const void* pc) {
  Thread* t = current_;
  if (num != 1 && num != 2 && num != 4) {
    report(FindingKind::Trap, t, pcOffset(pc), 0, "ldmatrix count must be 1, 2 or 4");
    abortLaunch();
  }
  Collective* c = arrive(t, kLdmatrix, num * 2 + (trans ? 1 : 0), 0xffffffffu, pcOffset(pc));
  c->lanes[t->lane].addr = row;
  c->lanes[t->lane].out = dst;
  TLC_EMU_FINISH_ARRIVAL(t, c);
}

void Machine::stmatrix(int num, int trans, const uint32_t* src, void* row, const void* pc) {
  Thread* t = current_;
  if (num != 1 && num != 2 && num != 4) {
    report(FindingKind::Trap, t, pcOffset(pc), 0, "stmatrix count must be 1, 2 or 4");
    abortLaunch();
  }
  Collective* c = arrive(t, kStmatrix, num * 2 + (trans ? 1 : 0), 0xffffffffu, pcOffset(pc));
  c->lanes[t->lane].addr = row;
  c->lanes[t->lane].a = src;
  TLC_EMU_FINISH_ARRIVAL(t, c);
}

}  // namespace tlc::cuda_emu
