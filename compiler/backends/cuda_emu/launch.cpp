// The emulated GPU's launches (see machine.h): the tlc_emu_api table, the
// kernel arguments' emulated allocations, the launch and its blocks, fault
// recovery, and the findings with their source locations.
#include "compiler/backends/cuda_emu/machine.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "compiler/backends/cuda_emu/isa.h"
#include "compiler/backends/cuda_emu/machine_internal.h"

namespace tlc::cuda_emu {

namespace {

constexpr size_t kRedZone = 1 << 20;

Machine* gMachine = nullptr;

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
void apiTmaLoadIm2col(void* smem, const void* map, void* bar, const int* coords, const uint16_t* offsets,
                      const void* pc) {
  gMachine->tmaLoadIm2col(smem, map, bar, coords, offsets, pc);
}
void apiTmaStore(int rank, const void* map, const void* smem, const int* coords, const void* pc) {
  gMachine->tmaStore(rank, map, smem, coords, pc);
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
  api_.tma_load_im2col = apiTmaLoadIm2col;
  api_.tma_store = apiTmaStore;
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
  auto* wavefront = static_cast<const unsigned*>(dlsym(handle, "tlc_emu_wavefront_lanes"));
  wavefrontShuffles_ = wavefront && *wavefront == isa::kWavefrontSize;
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
