// The emulated GPU's memory side (see machine.h): every access checked
// against shared memory and the arguments' allocations (bounds, alignment,
// races through the per-byte shadow), bank-conflict counting, atomics, and
// the cp.async groups.
#include "compiler/backends/cuda_emu/machine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "compiler/backends/cuda_emu/isa.h"
#include "compiler/backends/cuda_emu/machine_internal.h"

namespace tlc::cuda_emu {


// ---------------------------------------------------------------------------
// Memory checks

bool Machine::inIgnoredMemory(uintptr_t a) const {
  for (auto& [b, e] : ignored_)
    if (a >= b && a < e) return true;
  return false;
}

bool Machine::inRegion(uintptr_t a, size_t n) const {
  for (auto& r : regions_)
    if (a >= r->base && a + n <= r->base + r->bytes) return true;
  return false;
}

bool Machine::ordered(const Thread* t, uint32_t other, uint32_t otherEpoch, uint16_t otherWarpEpoch,
                      uint32_t otherClock) const {
  if (other == t->gid) return true;
  uint32_t ob = (other - 1) / threadsPerBlock_;
  if (ob != blockLinear_) return false;
  if (otherEpoch < blockEpoch_) return true;
  unsigned otid = (other - 1) % threadsPerBlock_;
  if (otid / 32 == t->warp && otherWarpEpoch < warpEpoch_[t->warp]) return true;
  return hopperActive_ && vcOrdered(t, other, otherClock);
}

void Machine::access(const void* addr, size_t size, int flags, const void* pc) {
  Thread* t = current_;
  if (!t || aborted_) return;
  uintptr_t a = (uintptr_t)addr;
  if (a >= (uintptr_t)stacks_ && a < (uintptr_t)stacks_ + stacksBytes_) return;  // locals
  if ((++accessCount_ & 0xfffff) == 0 && nowSeconds() > deadline_) {
    report(FindingKind::Timeout, t, pcOffset(pc), 0,
           "the launch ran longer than the emulator's time limit (an endless loop?)");
    abortLaunch();
  }
  checkedAccess(t, addr, size, flags, pcOffset(pc));
}

void Machine::checkedAccess(Thread* t, const void* addr, size_t n, int flags, uint32_t pc) {
  uintptr_t a = (uintptr_t)addr;
  if (a >= sharedBegin_ && a < sharedEnd_) {
    checkShared(t, a, n, flags, pc, true);
    return;
  }
  // Global allocations (with their red zones).
  auto it = std::upper_bound(regions_.begin(), regions_.end(), a,
                             [](uintptr_t x, const std::unique_ptr<Region>& r) { return x < (uintptr_t)r->map; });
  if (it != regions_.begin()) {
    Region& r = **(it - 1);
    if (a < (uintptr_t)r.map + r.mapBytes) {
      checkGlobal(t, r, a, n, flags, pc, true);
      return;
    }
  }
  if (inIgnoredMemory(a)) return;
  char buf[200];
  snprintf(buf, sizeof buf, "%s of %zu bytes at 0x%llx, which is neither shared memory nor inside any kernel argument's allocation",
           (flags & TLC_EMU_WRITE) ? "write" : "read", n, (unsigned long long)a);
  report(FindingKind::WildAccess, t, pc, 0, buf);
}

static size_t requiredAlignment(size_t n) {
  size_t al = 1;
  while (al < 16 && n % (al * 2) == 0) al *= 2;
  return al;
}

void Machine::checkShared(Thread* t, uintptr_t a, size_t n, int flags, uint32_t pc, bool record) {
  const bool write = flags & TLC_EMU_WRITE;
  if (a + n > sharedEnd_) {
    report(FindingKind::OutOfBounds, t, pc, 0, "shared-memory access past the end of shared memory");
    n = sharedEnd_ - a;
  }
  if (a >= dynBegin_ && a < dynCapacityEnd_ && a + n > dynBegin_ + config_.dynamicSharedBytes) {
    char buf[220];
    snprintf(buf, sizeof buf, "%s of %zu bytes at dynamic shared offset %llu, past the launch's %zu bytes of dynamic shared memory",
             write ? "write" : "read", n, (unsigned long long)(a - dynBegin_), config_.dynamicSharedBytes);
    report(FindingKind::OutOfBounds, t, pc, 0, buf);
    if (a >= dynBegin_ + config_.dynamicSharedBytes) return;
    n = dynBegin_ + config_.dynamicSharedBytes - a;
  }
  if (a % requiredAlignment(n) != 0) {
    char buf[160];
    snprintf(buf, sizeof buf, "misaligned %zu-byte shared-memory access at shared offset %llu", n,
             (unsigned long long)(a - sharedBegin_));
    report(FindingKind::Misaligned, t, pc, 0, buf);
  }
  if (options_.countBankConflicts && record && !(flags & TLC_EMU_ATOMIC)) recordBankAccess(t, a, n, pc);
  checkBytes(t, &sharedShadow_[a - sharedBegin_], n, flags, pc, true, a, nullptr, record);
}

void Machine::checkGlobal(Thread* t, Region& r, uintptr_t a, size_t n, int flags, uint32_t pc, bool record) {
  const bool write = flags & TLC_EMU_WRITE;
  if (a < r.base || a + n > r.base + r.bytes) {
    char buf[260];
    long long off = (long long)(a - r.base);
    snprintf(buf, sizeof buf, "%s of %zu bytes at byte offset %lld of `%s`, which has %zu bytes",
             write ? "write" : "read", n, off, r.name.c_str(), r.bytes);
    report(FindingKind::OutOfBounds, t, pc, 0, buf);
    // Check the part inside, if any.
    uintptr_t lo = std::max(a, r.base), hi = std::min(a + n, r.base + r.bytes);
    if (lo >= hi) return;
    a = lo;
    n = hi - lo;
  }
  if (a % requiredAlignment(n) != 0) {
    char buf[200];
    snprintf(buf, sizeof buf, "misaligned %zu-byte access at byte offset %llu of `%s`", n,
             (unsigned long long)(a - r.base), r.name.c_str());
    report(FindingKind::Misaligned, t, pc, 0, buf);
  }
  if (write && !r.writable) {
    report(FindingKind::WriteToReadOnly, t, pc, 0, "write to `" + r.name + "`, which is an input of the kernel");
  }
  checkBytes(t, &r.shadow[a - r.base], n, flags, pc, false, a, &r, record);
}

void Machine::checkBytes(Thread* t, ByteShadow* sh, size_t n, int flags, uint32_t pc, bool shared,
                         uintptr_t addr, const Region* region, bool record) {
  const bool read = flags & TLC_EMU_READ, write = flags & TLC_EMU_WRITE, atomic = flags & TLC_EMU_ATOMIC;
  bool reportedPending = false, reportedRace = false, reportedUninit = false;
  auto where = [&]() {
    char buf[120];
    if (shared)
      snprintf(buf, sizeof buf, "shared offset %llu", (unsigned long long)(addr - sharedBegin_));
    else
      snprintf(buf, sizeof buf, "byte offset %llu of `%s`", (unsigned long long)(addr - region->base),
               region->name.c_str());
    return std::string(buf);
  };
  const FindingKind raceKind = shared ? FindingKind::SharedRace : FindingKind::GlobalRace;
  if (shared && hopperActive_) checkAsyncBytes(t, addr, n, flags | (record ? kRecordFlag : 0), pc);
  for (size_t i = 0; i < n; ++i) {
    ByteShadow& s = sh[i];
    if (s.pendThread && !reportedPending) {
      reportedPending = true;
      std::string msg = std::string(write ? "write to " : "read of ") + where() + ", the destination of a cp.async by " +
                        threadName(s.pendThread) + " that has not been waited for (cp.async.wait_group) yet";
      report(FindingKind::AsyncCopyInFlight, t, pc, s.pendPc, msg);
    }
    if (!options_.checkRaces) {
      if (record && write) s.wThread = t->gid;
      continue;
    }
    if (read && !atomic) {
      if (s.wThread == 0) {
        if (shared && options_.checkUninitializedShared && !reportedUninit && !s.pendThread) {
          reportedUninit = true;
          report(FindingKind::UninitializedSharedRead, t, pc, 0,
                 "read of " + where() + ", which no thread of this block has written");
        }
      } else if (!(s.flags & (kWAtomic | kWTma)) && !ordered(t, s.wThread, s.wEpoch, s.wWarpEpoch, s.wClock) && !reportedRace) {
        reportedRace = true;
        report(raceKind, t, pc, s.wPc,
               "read of " + where() + " written by " + threadName(s.wThread) +
                   " with no barrier in between (read-after-write race)");
      }
      if (record) {
        const uint16_t we = warpEpoch_[t->warp];
        bool single = s.rThread == 0 || (s.rThread == t->gid && !(s.flags & kRMulti));
        if (!single && !(s.flags & kRMulti) && ordered(t, s.rThread, s.rEpoch, s.rWarpEpoch, s.rClock)) single = true;
        if (!single && (s.flags & kRMulti) && (s.rThread - 1) / threadsPerBlock_ == blockLinear_ &&
            s.rEpoch < blockEpoch_)
          single = true;
        if (single) {
          s.flags &= ~(kRMulti | kRMultiWarp);
          s.rWarpEpoch = we;
        } else {
          bool sameWarp = (s.rThread - 1) / threadsPerBlock_ == blockLinear_ &&
                          ((s.rThread - 1) % threadsPerBlock_) / 32 == t->warp;
          if (!sameWarp) s.flags |= kRMultiWarp;
          s.flags |= kRMulti;
          s.rWarpEpoch = std::max(s.rWarpEpoch, we);
        }
        s.rThread = t->gid;
        s.rEpoch = blockEpoch_;
        s.rPc = pc;
        s.rClock = t->vc.empty() ? 0 : t->vc[t->tid];
      }
    }
    if (write) {
      // A tensor copy's bytes: ordered through its mbarrier phase (checkAsyncBytes).
      if (!reportedRace && s.wThread && s.wThread != t->gid && !(atomic && (s.flags & kWAtomic)) &&
          !(s.flags & kWTma) && !ordered(t, s.wThread, s.wEpoch, s.wWarpEpoch, s.wClock)) {
        reportedRace = true;
        report(raceKind, t, pc, s.wPc,
               "write to " + where() + " also written by " + threadName(s.wThread) +
                   " with no barrier in between (write-after-write race)");
      }
      if (!reportedRace && !atomic && s.rThread && !(s.rThread == t->gid && !(s.flags & kRMulti))) {
        bool unordered;
        bool sameBlock = (s.rThread - 1) / threadsPerBlock_ == blockLinear_;
        if (s.flags & kRMulti) {
          unordered = !(sameBlock && s.rEpoch < blockEpoch_) &&
                      !(sameBlock && !(s.flags & kRMultiWarp) &&
                        ((s.rThread - 1) % threadsPerBlock_) / 32 == t->warp && s.rWarpEpoch < warpEpoch_[t->warp]);
        } else {
          unordered = !ordered(t, s.rThread, s.rEpoch, s.rWarpEpoch, s.rClock);
        }
        // Several readers: the last one's mbarrier clock stands for all (lenient).
        if (unordered && (s.flags & kRMulti) && hopperActive_ && sameBlock && vcOrdered(t, s.rThread, s.rClock))
          unordered = false;
        if (unordered) {
          reportedRace = true;
          report(raceKind, t, pc, s.rPc,
                 "write to " + where() + " read by " + threadName(s.rThread) +
                     " with no barrier in between (write-after-read race)");
        }
      }
      if (record) {
        s.wThread = t->gid;
        s.wEpoch = blockEpoch_;
        s.wWarpEpoch = warpEpoch_[t->warp];
        s.wPc = pc;
        s.wClock = t->vc.empty() ? 0 : t->vc[t->tid];
        s.flags = atomic ? kWAtomic : 0;
        s.rThread = 0;
      }
    }
  }
}

void Machine::recordBankAccess(Thread* t, uintptr_t a, size_t n, uint32_t pc) {
  uint32_t occ = t->occurrence[pc]++;
  BankEntry& e = bankPending_[t->warp][{pc, occ}];
  e.addr[t->lane] = a - sharedBegin_;
  e.mask |= 1u << t->lane;
  e.bytes = std::max<int>(e.bytes, (int)n);
}

void Machine::flushBankConflicts() {
  for (unsigned w = 0; w < warpsPerBlock_; ++w) {
    for (auto& [key, e] : bankPending_[w]) {
      isa::Wavefronts wf = isa::sharedWavefronts(e.addr, e.mask, e.bytes);
      countSharedWavefronts(*this, key.first, wf);
    }
    bankPending_[w].clear();
  }
  for (unsigned i = 0; i < threadsPerBlock_; ++i) threads_[i]->occurrence.clear();
}

// ---------------------------------------------------------------------------
// Atomics and asynchronous copies

uint64_t Machine::atomic(int op, int type, void* addr, uint64_t value, uint64_t compare, const void* pc) {
  Thread* t = current_;
  int bytes = isa::atomicTypeBytes(type);
  uintptr_t a = (uintptr_t)addr;
  uint32_t p = pcOffset(pc);
  if (bytes == 0) {
    report(FindingKind::Trap, t, p, 0, "atomic on an unsupported type");
    abortLaunch();
  }
  checkedAccess(t, addr, bytes, TLC_EMU_READ | TLC_EMU_WRITE | TLC_EMU_ATOMIC, p);
  bool accessible = (a >= sharedBegin_ && a + bytes <= sharedEnd_) || inIgnoredMemory(a) || inRegion(a, bytes);
  if (!accessible || a % bytes) return 0;
  uint64_t old = 0, next = 0;
  std::memcpy(&old, addr, bytes);
  if (!isa::atomicApply(op, type, old, value, compare, &next)) {
    report(FindingKind::Trap, t, p, 0, "atomic operation not defined for this type");
    abortLaunch();
  }
  std::memcpy(addr, &next, bytes);
  return old;
}

void Machine::cpAsync(void* dst, const void* src, int cpSize, int srcSize, const void* pc) {
  Thread* t = current_;
  uint32_t p = pcOffset(pc);
  if ((cpSize != 4 && cpSize != 8 && cpSize != 16) || srcSize < 0 || srcSize > cpSize) {
    report(FindingKind::Trap, t, p, 0, "cp.async with an invalid size");
    abortLaunch();
  }
  uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
  if (d < sharedBegin_ || d + cpSize > sharedEnd_) {
    report(FindingKind::WildAccess, t, p, 0, "cp.async destination is not in shared memory");
    return;
  }
  if (d % cpSize || s % cpSize) {
    report(FindingKind::Misaligned, t, p, 0,
           "cp.async of " + std::to_string(cpSize) + " bytes needs " + std::to_string(cpSize) +
               "-byte aligned source and destination");
    return;
  }
  PendingCopy c{};
  c.dst = d;
  c.size = cpSize;
  c.pc = p;
  if (srcSize > 0) {
    checkedAccess(t, src, srcSize, TLC_EMU_READ, p);
    bool readable = false;
    for (auto& r : regions_)
      if (s >= (uintptr_t)r->map && s + srcSize <= (uintptr_t)r->map + r->mapBytes) readable = true;
    if (readable) std::memcpy(c.data, src, srcSize);
  }
  // The destination is written at some point before the wait: check it now
  // against earlier accesses (without recording), then mark it in flight.
  if (d >= dynBegin_ && d + cpSize > dynBegin_ + config_.dynamicSharedBytes && d < dynCapacityEnd_) {
    report(FindingKind::OutOfBounds, t, p, 0, "cp.async destination past the launch's dynamic shared memory");
    return;
  }
  checkBytes(t, &sharedShadow_[d - sharedBegin_], cpSize, TLC_EMU_WRITE, p, true, d, nullptr, false);
  for (int i = 0; i < cpSize; ++i) {
    ByteShadow& sh = sharedShadow_[d - sharedBegin_ + i];
    sh.pendThread = t->gid;
    sh.pendPc = p;
  }
  if (options_.countBankConflicts) recordBankAccess(t, d, cpSize, p);
  t->uncommitted.push_back(c);
}

void Machine::cpAsyncCommit(const void*) {
  Thread* t = current_;
  t->groups.push_back(std::move(t->uncommitted));
  t->uncommitted.clear();
}

void Machine::cpAsyncWait(int n, const void* pc) {
  Thread* t = current_;
  if (n < 0) {
    cpAsyncCommit(pc);
    n = 0;
  }
  while ((int)t->groups.size() > n) {
    landGroup(t, t->groups.front());
    t->groups.pop_front();
  }
}

void Machine::landGroup(Thread* t, std::vector<PendingCopy>& group) {
  for (PendingCopy& c : group) {
    for (int i = 0; i < c.size; ++i) {
      ByteShadow& sh = sharedShadow_[c.dst - sharedBegin_ + i];
      if (sh.pendThread == t->gid) sh.pendThread = 0;
    }
    checkBytes(t, &sharedShadow_[c.dst - sharedBegin_], c.size, TLC_EMU_WRITE, c.pc, true, c.dst, nullptr, true);
    std::memcpy((void*)c.dst, c.data, c.size);
  }
  group.clear();
}

}  // namespace tlc::cuda_emu
