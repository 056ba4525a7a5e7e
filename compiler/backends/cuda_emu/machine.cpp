// The emulated GPU (see machine.h).
#include "compiler/backends/cuda_emu/machine.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>

#include "compiler/backends/cuda_emu/isa.h"
#include "compiler/backends/cuda_emu/machine_internal.h"

namespace tlc::cuda_emu {

namespace {

constexpr size_t kRedZone = 1 << 20;
enum CollKind { kShfl = 0, kVote, kWarpSync, kMma, kLdmatrix, kStmatrix };
const char* collName(int k) {
  static const char* names[] = {"shfl.sync", "vote.sync", "__syncwarp", "mma.sync", "ldmatrix",
                                "stmatrix"};
  return names[k];
}

Machine* gMachine = nullptr;

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// C entry points of tlc_emu_api.
void apiAccess(const void* a, size_t n, int f, const void* pc) {
  if (gMachine) gMachine->access(a, n, f, pc);
}
void apiBarSync(unsigned id, unsigned count, const void* pc) { gMachine->barSync(id, count, pc); }
int apiBarRed(int op, int pred, const void* pc) { return gMachine->barRed(op, pred, pc); }
void apiWarpSync(unsigned mask, const void* pc) { gMachine->warpSync(mask, pc); }
uint32_t apiShfl(int mode, unsigned mask, uint32_t v, int arg, int width, int* valid, const void* pc) {
  return gMachine->shfl(mode, mask, v, arg, width, valid, pc);
}
uint32_t apiVote(int mode, unsigned mask, int pred, const void* pc) {
  return gMachine->vote(mode, mask, pred, pc);
}
uint64_t apiAtomic(int op, int type, void* addr, uint64_t v, uint64_t cmp, const void* pc) {
  return gMachine->atomic(op, type, addr, v, cmp, pc);
}
void apiMma(int kind, uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c, const void* pc) {
  gMachine->mma(kind, d, a, b, c, pc);
}
void apiLdmatrix(int num, int trans, uint32_t* dst, const void* row, const void* pc) {
  gMachine->ldmatrix(num, trans, dst, row, pc);
}
void apiStmatrix(int num, int trans, const uint32_t* src, void* row, const void* pc) {
  gMachine->stmatrix(num, trans, src, row, pc);
}
void apiCpAsync(void* dst, const void* src, int cp, int srcSize, const void* pc) {
  gMachine->cpAsync(dst, src, cp, srcSize, pc);
}
void apiCommit(const void* pc) { gMachine->cpAsyncCommit(pc); }
void apiWait(int n, const void* pc) { gMachine->cpAsyncWait(n, pc); }
void apiTrap(const char* msg, const void* pc) { gMachine->trap(msg, pc); }
long long apiClock() { return gMachine->clock(); }
void apiMbarInit(void* bar, unsigned count, const void* pc) { gMachine->mbarInit(bar, count, pc); }
void apiMbarArrive(void* bar, unsigned tx, const void* pc) { gMachine->mbarArrive(bar, tx, pc); }
void apiMbarWait(void* bar, unsigned parity, const void* pc) { gMachine->mbarWait(bar, parity, pc); }
void apiFence(int kind, const void* pc) { gMachine->fence(kind, pc); }
void apiTmaLoad(int rank, void* smem, const void* map, void* bar, const int* coords, const void* pc) {
  gMachine->tmaLoad(rank, smem, map, bar, coords, pc);
}
void apiWgmma(int n, int kind, int ta, int tb, float* d, uint64_t da, uint64_t db, int scale, const void* pc) {
  gMachine->wgmma(n, kind, ta, tb, d, da, db, scale, pc);
}
void apiWgmmaRs(int n, int kind, int tb, float* d, const uint32_t* a, uint64_t db, int scale, const void* pc) {
  gMachine->wgmmaRs(n, kind, tb, d, a, db, scale, pc);
}
void apiWgmmaSync(int op, int n, const void* pc) { gMachine->wgmmaSync(op, n, pc); }
void apiSetmaxnreg(int inc, unsigned regs, const void* pc) { gMachine->setmaxnreg(inc, regs, pc); }
void apiMfma(int kind, float* d, const uint16_t* a, const uint16_t* b, const void* pc) {
  gMachine->mfma(kind, d, a, b, pc);
}

// Fault recovery.
volatile uintptr_t gFaultAddr = 0, gFaultPc = 0;
volatile int gFaultSig = 0;
void faultHandler(int sig, siginfo_t* info, void* ucv) {
  if (gMachine && gMachine->inKernel_) {
    gFaultSig = sig;
    gFaultAddr = (uintptr_t)info->si_addr;
#if defined(__x86_64__)
    gFaultPc = (uintptr_t)static_cast<ucontext_t*>(ucv)->uc_mcontext.gregs[REG_RIP];
#else
    (void)ucv;
    gFaultPc = 0;
#endif
    siglongjmp(gMachine->faultJmp_, 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

struct SegmentCollector {
  uintptr_t base;
  std::vector<std::pair<uintptr_t, uintptr_t>>* out;
};
int collectSegments(struct dl_phdr_info* info, size_t, void* data) {
  auto* c = static_cast<SegmentCollector*>(data);
  if (info->dlpi_addr != c->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t b = info->dlpi_addr + ph.p_vaddr;
    c->out->push_back({b, b + ph.p_memsz});
  }
  return 1;
}

}  // namespace

// ---------------------------------------------------------------------------
// Setup

Machine::Machine(EmulatedModule* module, void* handle) : module_(module), handle_(handle) {
  api_.abi_version = TLC_EMU_ABI_VERSION;
  api_.access = apiAccess;
  api_.bar_sync = apiBarSync;
  api_.warp_sync = apiWarpSync;
  api_.shfl = apiShfl;
  api_.vote = apiVote;
  api_.atomic = apiAtomic;
  api_.mma = apiMma;
  api_.ldmatrix = apiLdmatrix;
  api_.stmatrix = apiStmatrix;
  api_.cp_async = apiCpAsync;
  api_.cp_async_commit = apiCommit;
  api_.cp_async_wait = apiWait;
  api_.trap = apiTrap;
  api_.clock = apiClock;
  api_.bar_red = apiBarRed;
  api_.mbar_init = apiMbarInit;
  api_.mbar_arrive = apiMbarArrive;
  api_.mbar_wait = apiMbarWait;
  api_.fence = apiFence;
  api_.tma_load = apiTmaLoad;
  api_.wgmma = apiWgmma;
  api_.wgmma_rs = apiWgmmaRs;
  api_.wgmma_sync = apiWgmmaSync;
  api_.setmaxnreg = apiSetmaxnreg;
  api_.mfma = apiMfma;
  hostVar_ = static_cast<tlc_emu_api**>(dlsym(handle, "tlc_emu_host"));
  selfVar_ = static_cast<tlc_emu_thread_state**>(dlsym(handle, "tlc_emu_self"));
  if (hostVar_) *hostVar_ = &api_;
  auto beginFn = reinterpret_cast<unsigned char* (*)()>(dlsym(handle, "tlc_emu_shared_begin"));
  auto endFn = reinterpret_cast<unsigned char* (*)()>(dlsym(handle, "tlc_emu_shared_end"));
  if (beginFn && endFn) {
    sharedBegin_ = (uintptr_t)beginFn();
    sharedEnd_ = (uintptr_t)endFn();
  }
  dynBegin_ = (uintptr_t)dlsym(handle, "tlc_emu_dyn_smem_storage");
  dynCapacityEnd_ = dynBegin_ + 232448;
  Dl_info info{};
  if (hostVar_ && dladdr(reinterpret_cast<void*>(hostVar_), &info)) {
    moduleBase_ = (uintptr_t)info.dli_fbase;
    SegmentCollector c{moduleBase_, &ignored_};
    dl_iterate_phdr(collectSegments, &c);
  }
}

Machine::~Machine() {
  for (WaveOp* w : waveOps_) delete w;
  if (stacks_) munmap(stacks_, stacksBytes_);
  for (auto& r : regions_)
    if (r->map) munmap(r->map, r->mapBytes);
}

uint32_t Machine::pcOffset(const void* pc) const {
  uintptr_t p = (uintptr_t)pc;
  if (p < moduleBase_ || p - moduleBase_ > 0xffffffffu) return 0;
  return (uint32_t)(p - moduleBase_);
}

Machine::Region* Machine::newRegion(const std::string& name, const void* data, size_t bytes, bool writable,
                                   bool poison, size_t argIndex, std::string* error) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  auto r = std::make_unique<Region>();
  size_t body = (bytes + page - 1) / page * page;
  if (body == 0) body = page;
  r->mapBytes = body + 2 * kRedZone;
  void* m = mmap(nullptr, r->mapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    *error = "cannot allocate emulated global memory for `" + name + "`";
    return nullptr;
  }
  r->map = static_cast<uint8_t*>(m);
  r->base = (uintptr_t)(r->map + kRedZone);
  r->bytes = bytes;
  r->argIndex = argIndex;
  r->name = name;
  r->writable = writable;
  std::memset(r->map, 0xfe, kRedZone);
  std::memset(r->map + kRedZone + bytes, 0xfe, r->mapBytes - kRedZone - bytes);
  if (poison)
    std::memset((void*)r->base, 0xff, bytes);
  else if (bytes)
    std::memcpy((void*)r->base, data, bytes);
  r->shadow.assign(bytes, ByteShadow{});
  regions_.push_back(std::move(r));
  return regions_.back().get();
}

bool Machine::prepareArgs(std::vector<KernelArg>& args, std::vector<void*>* argv, std::string* error) {
  for (auto& r : regions_)
    if (r->map) munmap(r->map, r->mapBytes);
  regions_.clear();
  // By-value arguments up to 128 bytes (a tensor map), 64-byte aligned.
  struct alignas(64) Slot {
    unsigned char b[128];
  };
  static thread_local std::vector<Slot> slots;
  slots.assign(args.size(), Slot{});
  argv->assign(args.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    KernelArg& a = args[i];
    if (a.kind == KernelArg::Kind::Buffer) {
      Region* r = newRegion(a.name, a.data, a.bytes, a.writable, a.poison, i, error);
      if (!r) return false;
      uint64_t base = (uint64_t)r->base;
      std::memcpy(slots[i].b, &base, sizeof base);
    } else {
      std::memcpy(slots[i].b, a.scalar, std::min<size_t>(a.bytes, sizeof slots[i].b));
    }
    (*argv)[i] = slots[i].b;
  }
  // Tensor maps name the caller's host buffers: point them at the emulated copies.
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == KernelArg::Kind::Scalar && args[i].bytes == 128 &&
        !relocateTensorMap(slots[i].b, args, i, error))
      return false;
  std::sort(regions_.begin(), regions_.end(), [](auto& x, auto& y) { return x->map < y->map; });
  ignored_.push_back({(uintptr_t)slots.data(), (uintptr_t)(slots.data() + slots.size())});
  ignored_.push_back({(uintptr_t)argv->data(), (uintptr_t)(argv->data() + argv->size())});
  return true;
}

LaunchResult Machine::launch(const std::string& kernel, const LaunchConfig& config,
                             std::vector<KernelArg>& args, const LaunchOptions& options) {
  LaunchResult result;
  result_ = &result;
  kernel_ = kernel;
  config_ = config;
  options_ = options;
  findingIndex_.clear();
  bankSites_.clear();
  aborted_ = false;
  accessCount_ = 0;
  auto fn = reinterpret_cast<void (*)(void**)>(dlsym(handle_, ("tlc_emu_launch_" + kernel).c_str()));
  auto arity = reinterpret_cast<int (*)(int*)>(dlsym(handle_, ("tlc_emu_arity_" + kernel).c_str()));
  if (!fn || !arity) {
    result.error = "no kernel named `" + kernel + "` in the emulated module";
    return result;
  }
  int sizes[256];
  int n = arity(nullptr);
  if (n > 256 || n != (int)args.size()) {
    result.error = "kernel `" + kernel + "` takes " + std::to_string(n) + " arguments, " +
                   std::to_string(args.size()) + " given";
    return result;
  }
  arity(sizes);
  for (int i = 0; i < n; ++i) {
    size_t want = args[i].kind == KernelArg::Kind::Buffer ? sizeof(void*) : args[i].bytes;
    if ((size_t)sizes[i] != want) {
      result.error = "argument " + std::to_string(i) + " (`" + args[i].name + "`) of kernel `" + kernel +
                     "` has " + std::to_string(sizes[i]) + " bytes, " + std::to_string(want) + " given";
      return result;
    }
  }
  unsigned T = config.block.x * config.block.y * config.block.z;
  entryRegs_ = 0;
  if (auto bounds = reinterpret_cast<void (*)(int*)>(dlsym(handle_, ("tlc_emu_bounds_" + kernel).c_str()))) {
    int b[2];
    bounds(b);
    // Known only when the bounds bind (below the 255 registers a thread
    // may have; above, ptxas picks the count).
    unsigned share = b[0] > 0 && b[1] > 0 ? 65536u / ((unsigned)b[0] * (unsigned)b[1]) : 256;
    if (share < 256) entryRegs_ = share / 8 * 8;
  }
  if (T == 0 || T > 1024 || config.grid.x * config.grid.y * config.grid.z == 0) {
    result.error = "invalid launch shape";
    return result;
  }
  if (config.dynamicSharedBytes > dynCapacityEnd_ - dynBegin_) {
    result.error = "dynamic shared memory of " + std::to_string(config.dynamicSharedBytes) +
                   " bytes exceeds the emulated capacity";
    return result;
  }
  size_t moduleSegments = 0;
  {
    std::vector<std::pair<uintptr_t, uintptr_t>> segs;
    SegmentCollector c{moduleBase_, &segs};
    dl_iterate_phdr(collectSegments, &c);
    ignored_ = segs;
    moduleSegments = segs.size();
  }
  (void)moduleSegments;
  std::vector<void*> argv;
  if (!prepareArgs(args, &argv, &result.error)) return result;

  // Threads, fibers and their stacks (one mapping, a guard page below each).
  threadsPerBlock_ = T;
  warpsPerBlock_ = (T + 31) / 32;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t stack = (options.fiberStackBytes + page - 1) / page * page;
  if (threads_.size() < T || stackStride_ != stack + page) {
    threads_.clear();
    if (stacks_) munmap(stacks_, stacksBytes_);
    stackStride_ = stack + page;
    stacksBytes_ = stackStride_ * T;
    void* m = mmap(nullptr, stacksBytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      stacks_ = nullptr;
      result.error = "cannot allocate fiber stacks";
      return result;
    }
    stacks_ = static_cast<uint8_t*>(m);
    for (unsigned i = 0; i < T; ++i) {
      mprotect(stacks_ + i * stackStride_, page, PROT_NONE);
      auto t = std::make_unique<Thread>();
      t->fiber.useStack(stacks_ + i * stackStride_ + page, stack);
      threads_.push_back(std::move(t));
    }
  }
  states_.assign(T, tlc_emu_thread_state{});
  ignored_.push_back({(uintptr_t)states_.data(), (uintptr_t)(states_.data() + states_.size())});
  ignored_.push_back({(uintptr_t)stacks_, (uintptr_t)stacks_ + stacksBytes_});
  std::sort(ignored_.begin(), ignored_.end());
  for (unsigned i = 0; i < T; ++i) {
    Thread& t = *threads_[i];
    t.m = this;
    t.tid = i;
    t.lane = i % 32;
    t.warp = i / 32;
    t.state = &states_[i];
    t.launchFn = fn;
    t.argv = argv.data();
    states_[i].thread_idx = {i % config.block.x, (i / config.block.x) % config.block.y,
                             i / (config.block.x * config.block.y)};
    states_[i].block_dim = {config.block.x, config.block.y, config.block.z};
    states_[i].grid_dim = {config.grid.x, config.grid.y, config.grid.z};
    states_[i].lane = i % 32;
    states_[i].warp = i / 32;
  }
  activeCollectives_.assign(warpsPerBlock_, {});
  bankPending_.assign(warpsPerBlock_, {});
  warpEpoch_.assign(warpsPerBlock_, 1);

  // Fault handlers on an alternate stack.
  static thread_local std::vector<uint8_t> altStack(1 << 16);
  stack_t ss{}, oldSs{};
  ss.ss_sp = altStack.data();
  ss.ss_size = altStack.size();
  sigaltstack(&ss, &oldSs);
  struct sigaction sa{}, old[4];
  sa.sa_sigaction = faultHandler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  const int sigs[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (int i = 0; i < 4; ++i) sigaction(sigs[i], &sa, &old[i]);

  Machine* prev = gMachine;
  gMachine = this;
  deadline_ = nowSeconds() + options.timeoutSeconds;
  for (unsigned bz = 0; bz < config.grid.z && !aborted_; ++bz)
    for (unsigned by = 0; by < config.grid.y && !aborted_; ++by)
      for (unsigned bx = 0; bx < config.grid.x && !aborted_; ++bx) {
        runBlock(bx, by, bz);
        result.blocksRun++;
        if (!aborted_ && nowSeconds() > deadline_) {
          report(FindingKind::Timeout, nullptr, 0, 0,
                 "the launch ran longer than the emulator's time limit (" + std::to_string(options.timeoutSeconds) +
                     " s) and was stopped after " + std::to_string(result.blocksRun) + " blocks");
          aborted_ = true;
        }
      }
  gMachine = prev;
  for (int i = 0; i < 4; ++i) sigaction(sigs[i], &old[i], nullptr);
  sigaltstack(&oldSs, nullptr);

  result.completed = !aborted_;
  result.accessesChecked = accessCount_;
  // Copy results back and collect written masks.
  result.written.assign(args.size(), {});
  for (auto& r : regions_) {
    if (r->tensorOnly) continue;  // the tensor of a map: not an argument, not copied back
    KernelArg& a = args[r->argIndex];
    if (a.writable && a.bytes) std::memcpy(a.data, (void*)r->base, a.bytes);
    auto& w = result.written[r->argIndex];
    w.resize(r->bytes);
    for (size_t i = 0; i < r->bytes; ++i) w[i] = r->shadow[i].wThread != 0;
  }
  for (auto& [pc, site] : bankSites_) result.bankConflicts.push_back(site);
  symbolize(result);
  // Sites on the same source line (unrolled copies of one access) are one site.
  {
    std::vector<BankConflictSite> merged;
    for (auto& s : result.bankConflicts) {
      auto same = std::find_if(merged.begin(), merged.end(), [&](const BankConflictSite& m) {
        return s.where.line > 0 && m.where.line == s.where.line && m.where.file == s.where.file;
      });
      if (same == merged.end()) {
        merged.push_back(s);
      } else {
        same->instructions += s.instructions;
        same->extraWavefronts += s.extraWavefronts;
      }
    }
    result.bankConflicts = std::move(merged);
  }
  std::sort(result.bankConflicts.begin(), result.bankConflicts.end(),
            [](auto& x, auto& y) { return x.extraWavefronts > y.extraWavefronts; });
  for (auto& s : result.bankConflicts)
    if (s.extraWavefronts > 0) {
      Finding f;
      f.kind = FindingKind::BankConflict;
      f.kernel = kernel_;
      f.hasThread = false;
      f.where = s.where;
      f.count = s.instructions;
      char buf[160];
      snprintf(buf, sizeof buf, "shared-memory bank conflicts: %llu extra wavefronts over %llu warp-wide accesses",
               (unsigned long long)s.extraWavefronts, (unsigned long long)s.instructions);
      f.message = buf;
      result.findings.push_back(f);
    }
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& x, const Finding& y) { return x.isError() > y.isError(); });
  for (auto& r : regions_)
    if (r->map) munmap(r->map, r->mapBytes);
  regions_.clear();
  result_ = nullptr;
  return result;
}

void Machine::fiberEntry(void* p) {
  Thread* t = static_cast<Thread*>(p);
  t->launchFn(t->argv);
  t->m->threadExit(t);
}

void Machine::runBlock(unsigned bx, unsigned by, unsigned bz) {
  blockLinear_ = bx + config_.grid.x * (by + config_.grid.y * bz);
  blockEpoch_ = 1;
  std::fill(warpEpoch_.begin(), warpEpoch_.end(), 1);
  barriers_.clear();
  for (auto& v : activeCollectives_) v.clear();
  resetHopperForBlock();
  resetWavefronts();
  // Shared memory is undefined at block start: poison it, forget its history.
  std::memset((void*)sharedBegin_, 0xcd, sharedEnd_ - sharedBegin_);
  sharedShadow_.assign(sharedEnd_ - sharedBegin_, ByteShadow{});
  for (unsigned i = 0; i < threadsPerBlock_; ++i) {
    Thread& t = *threads_[i];
    t.gid = blockLinear_ * threadsPerBlock_ + i + 1;
    t.status = Thread::Ready;
    t.wait = Thread::None;
    t.uncommitted.clear();
    t.groups.clear();
    t.occurrence.clear();
    states_[i].block_idx = {bx, by, bz};
    t.fiber.start(&Machine::fiberEntry, &t);
  }
  inKernel_ = true;
  if (sigsetjmp(faultJmp_, 1) != 0) {
    inKernel_ = false;
    char buf[200];
    const char* name = gFaultSig == SIGSEGV ? "SIGSEGV" : gFaultSig == SIGBUS ? "SIGBUS"
                       : gFaultSig == SIGFPE ? "SIGFPE (integer division by zero?)" : "SIGILL";
    snprintf(buf, sizeof buf, "the kernel faulted: %s at address 0x%llx", name, (unsigned long long)gFaultAddr);
    report(FindingKind::Fault, current_, pcOffset((const void*)gFaultPc), 0, buf);
    current_ = nullptr;
    aborted_ = true;
    return;
  }
  schedule();
  inKernel_ = false;
  if (!aborted_) checkRegisterPool();
  if (!aborted_) flushBankConflicts();
  current_ = nullptr;
}

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
// Findings

Dim3 Machine::blockOf(uint32_t g) const {
  uint32_t b = (g - 1) / threadsPerBlock_;
  return {b % config_.grid.x, (b / config_.grid.x) % config_.grid.y, b / (config_.grid.x * config_.grid.y)};
}
Dim3 Machine::threadOf(uint32_t g) const {
  uint32_t i = (g - 1) % threadsPerBlock_;
  return {i % config_.block.x, (i / config_.block.x) % config_.block.y, i / (config_.block.x * config_.block.y)};
}
std::string Machine::threadName(uint32_t g) const {
  Dim3 b = blockOf(g), t = threadOf(g);
  char buf[120];
  snprintf(buf, sizeof buf, "thread (%u,%u,%u) of block (%u,%u,%u)", t.x, t.y, t.z, b.x, b.y, b.z);
  return buf;
}

void Machine::report(FindingKind kind, const Thread* t, uint32_t pc, uint32_t otherPc, std::string message) {
  auto key = std::make_tuple((int)kind, pc, otherPc);
  auto it = findingIndex_.find(key);
  if (it != findingIndex_.end()) {
    result_->findings[it->second].count++;
    return;
  }
  if (result_->findings.size() >= options_.maxFindings) {
    result_->droppedFindings++;
    return;
  }
  Finding f;
  f.kind = kind;
  f.kernel = kernel_;
  if (t) {
    f.block = blockOf(t->gid);
    f.thread = threadOf(t->gid);
  } else {
    f.hasThread = false;
  }
  f.message = std::move(message);
  f.where.pc = pc ? moduleBase_ + pc : 0;
  f.other.pc = otherPc ? moduleBase_ + otherPc : 0;
  findingIndex_[key] = result_->findings.size();
  result_->findings.push_back(std::move(f));
}

[[noreturn]] void Machine::trap(const char* message, const void* pc) {
  report(FindingKind::Trap, current_, pcOffset(pc), 0, message ? message : "trap");
  abortLaunch();
  std::abort();
}

long long Machine::clock() { return current_ ? (long long)(++current_->clock * 4) : 0; }

// ---------------------------------------------------------------------------
// Memory checks

bool Machine::inIgnoredMemory(uintptr_t a) const {
  for (auto& [b, e] : ignored_)
    if (a >= b && a < e) return true;
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
      result_->sharedInstructions++;
      result_->sharedWavefronts += wf.actual;
      result_->idealSharedWavefronts += wf.ideal;
      BankConflictSite& site = bankSites_[key.first];
      site.where.pc = moduleBase_ + key.first;
      site.instructions++;
      site.extraWavefronts += wf.actual - wf.ideal;
    }
    bankPending_[w].clear();
  }
  for (unsigned i = 0; i < threadsPerBlock_; ++i) threads_[i]->occurrence.clear();
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
          // One 8x8 matrix is one 128-byte phase.
          isa::Wavefronts wf = isa::sharedWavefronts(bankAddr, bankMask, 4);
          // sharedWavefronts treats the 8 lanes as 4-byte accesses; redo for 16 bytes.
          std::set<uint64_t> words[32];
          for (int r = 0; r < 8; ++r)
            if (bankMask >> r & 1u)
              for (int w = 0; w < 4; ++w) words[(bankAddr[r] / 4 + w) % 32].insert(bankAddr[r] / 4 + w);
          size_t worst = 1;
          for (auto& s : words) worst = std::max(worst, s.size());
          wf.actual = (int)worst;
          wf.ideal = 1;
          result_->sharedInstructions++;
          result_->sharedWavefronts += wf.actual;
          result_->idealSharedWavefronts += wf.ideal;
          BankConflictSite& site = bankSites_[c.pc];
          site.where.pc = moduleBase_ + c.pc;
          site.instructions++;
          site.extraWavefronts += wf.actual - wf.ideal;
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
  bool accessible = (a >= sharedBegin_ && a + bytes <= sharedEnd_) || inIgnoredMemory(a);
  for (auto& r : regions_)
    if (a >= r->base && a + bytes <= r->base + r->bytes) accessible = true;
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

// ---------------------------------------------------------------------------
// Source locations

void Machine::symbolize(LaunchResult& result) {
  std::vector<CodeLocation*> locs;
  for (auto& f : result.findings) {
    if (f.where.pc) locs.push_back(&f.where);
    if (f.other.pc) locs.push_back(&f.other);
  }
  for (auto& s : result.bankConflicts)
    if (s.where.pc) locs.push_back(&s.where);
  if (locs.empty()) return;
  std::map<uintptr_t, CodeLocation> table;
  for (auto* l : locs) table[l->pc] = *l;
  std::string cmd = "addr2line -C -f -i -a -e '" + module_->sharedObjectPath() + "'";
  for (auto& [pc, l] : table) {
    char buf[32];
    snprintf(buf, sizeof buf, " 0x%llx", (unsigned long long)(pc - moduleBase_ - 1));
    cmd += buf;
  }
  cmd += " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p) {
    std::vector<std::string> lines;
    char buf[4096];
    while (fgets(buf, sizeof buf, p)) {
      std::string s(buf);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      lines.push_back(s);
    }
    pclose(p);
    // Groups: "0x<addr>", then (function, file:line) pairs, innermost first.
    auto it = table.begin();
    size_t i = 0;
    while (i < lines.size() && it != table.end()) {
      if (lines[i].rfind("0x", 0) != 0) {
        ++i;
        continue;
      }
      ++i;
      std::vector<std::pair<std::string, std::string>> frames;
      while (i + 1 < lines.size() && lines[i].rfind("0x", 0) != 0) {
        frames.push_back({lines[i], lines[i + 1]});
        i += 2;
      }
      // Prefer the innermost frame outside the emulator's own headers.
      const std::pair<std::string, std::string>* pick = nullptr;
      for (auto& fr : frames) {
        const std::string& file = fr.second;
        bool internal = file.find("emu_prelude.h") != std::string::npos ||
                        file.find("emu_float.h") != std::string::npos ||
                        file.find("tlc_cuda.h") != std::string::npos ||
                        file.find("/usr/") == 0 || file.find("??") == 0;
        if (!internal) {
          pick = &fr;
          break;
        }
      }
      if (!pick && !frames.empty()) pick = &frames.back();
      if (pick) {
        CodeLocation& l = it->second;
        l.function = pick->first;
        size_t colon = pick->second.rfind(':');
        if (colon != std::string::npos) {
          l.file = pick->second.substr(0, colon);
          l.line = atoi(pick->second.c_str() + colon + 1);
          // Relative #line names come back joined to the build directory;
          // show them as the source named them.
          std::string buildDir = module_->sharedObjectPath();
          buildDir = buildDir.substr(0, buildDir.rfind('/') + 1);
          if (l.file.rfind(buildDir, 0) == 0) l.file = l.file.substr(buildDir.size());
          // The generated CUDA source lives in the emulator's cache: name it only.
          size_t slash = l.file.rfind('/');
          if (slash != std::string::npos && l.file.find(".tl") == std::string::npos)
            l.file = l.file.substr(slash + 1);
        }
      }
      ++it;
    }
  }
  for (auto* l : locs) {
    auto f = table.find(l->pc);
    if (f != table.end()) *l = f->second;
  }
}

}  // namespace tlc::cuda_emu
