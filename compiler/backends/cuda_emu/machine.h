// The emulated GPU: runs one kernel launch of a loaded module block by
// block, each GPU thread a fiber, and implements tlc_emu_api (the memory
// checks, barriers, warp collectives, async copies, atomics) on top of the
// pure instruction semantics in isa.h.
//
// Memory model checked (per byte, see checkBytes in memory.cpp):
//  - two accesses by different threads to the same byte, at least one a
//    plain (non-atomic) write, race unless a barrier separates them
//    (__syncthreads orders the block; __syncwarp orders a warp); accesses
//    from different blocks are never ordered;
//  - cp.async destination bytes are "in flight" from issue until the
//    issuing thread's cp.async.wait_group covers them; any access to them
//    meanwhile is a finding; the data lands (as a write by the issuing
//    thread) at that wait;
//  - global accesses must fall inside a kernel argument's allocation
//    (allocations are separated by red zones), shared accesses inside the
//    static shared variables or the launch's dynamic shared size.
#pragma once

#include <csetjmp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/cuda_emu/fiber.h"
#include "compiler/backends/cuda_emu/isa.h"
#include "runtime/cuda_emu/emu_abi.h"

namespace tlc::cuda_emu {

struct ByteShadow {
  uint32_t wThread = 0;  // writer's global thread id + 1 (0: never written)
  uint32_t wEpoch = 0;
  uint32_t wPc = 0;      // pc offsets into the module (+1; 0: none)
  uint32_t rThread = 0;  // last reader's global thread id + 1
  uint32_t rEpoch = 0;
  uint32_t rPc = 0;
  uint32_t wClock = 0, rClock = 0;  // the accessing thread's mbarrier clock (Thread::vc)
  uint32_t pendThread = 0;  // thread + 1 whose cp.async to this byte is in flight
  uint32_t pendPc = 0;
  uint16_t wWarpEpoch = 0, rWarpEpoch = 0;
  uint8_t flags = 0;  // kWAtomic | kRMulti | kRMultiWarp | kWTma
};

class Machine {
 public:
  Machine(EmulatedModule* module, void* handle);
  ~Machine();
  LaunchResult launch(const std::string& kernel, const LaunchConfig& config,
                      std::vector<KernelArg>& args, const LaunchOptions& options);

  // tlc_emu_api entry points (called through static trampolines).
  void access(const void* addr, size_t size, int flags, const void* pc);
  void barSync(unsigned id, unsigned count, const void* pc);
  int barRed(int op, int pred, const void* pc);
  void warpSync(unsigned mask, const void* pc);
  uint32_t shfl(int mode, unsigned mask, uint32_t value, int arg, int width, int* valid,
                const void* pc);
  uint32_t vote(int mode, unsigned mask, int pred, const void* pc);
  uint64_t atomic(int op, int type, void* addr, uint64_t value, uint64_t compare, const void* pc);
  void mma(int kind, uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c,
           const void* pc);
  void ldmatrix(int num, int trans, uint32_t* dst, const void* rowAddr, const void* pc);
  void stmatrix(int num, int trans, const uint32_t* src, void* rowAddr, const void* pc);
  void cpAsync(void* dst, const void* src, int cpSize, int srcSize, const void* pc);
  void cpAsyncCommit(const void* pc);
  void cpAsyncWait(int n, const void* pc);
  [[noreturn]] void trap(const char* message, const void* pc);
  long long clock();
  // Hopper (hopper.cpp).
  void mbarInit(void* bar, unsigned count, const void* pc);
  void mbarArrive(void* bar, unsigned expectTx, const void* pc);
  void mbarWait(void* bar, unsigned parity, const void* pc);
  void fence(int kind, const void* pc);
  void tmaLoad(int rank, void* smem, const void* map, void* bar, const int* coords, const void* pc);
  void tmaLoadIm2col(void* smem, const void* map, void* bar, const int* coords, const uint16_t* offsets,
                     const void* pc);
  void tmaStore(int rank, const void* map, const void* smem, const int* coords, const void* pc);
  void wgmma(int n, int kind, int transA, int transB, float* d, uint64_t descA, uint64_t descB,
             int scaleD, const void* pc);
  void wgmmaRs(int n, int kind, int transB, float* d, const uint32_t* a, uint64_t descB, int scaleD, const void* pc);
  void wgmmaSync(int op, int n, const void* pc);
  void setmaxnreg(int inc, unsigned regs, const void* pc);
  // CDNA (wavefront.cpp).
  void mfma(int kind, float* d, const uint16_t* a, const uint16_t* b, const void* pc);

  struct Thread;
  struct Collective;
  struct Region;
  struct Mbarrier;
  struct AsyncByte;
  struct WgOp;
  struct WgmmaGroup;
  struct Warpgroup;
  struct WaveOp;

 private:
  // --- setup
  Region* newRegion(const std::string& name, const void* data, size_t bytes, bool writable, bool poison,
                    size_t argIndex, std::string* error);
  bool prepareArgs(std::vector<KernelArg>& args, std::vector<void*>* argv, std::string* error);
  void runBlock(unsigned bx, unsigned by, unsigned bz);
  static void fiberEntry(void* thread);
  void threadExit(Thread* t);
  void schedule();
  void block(Thread* t);  // suspends the current thread until it is made Ready

  // --- memory checks
  void checkShared(Thread* t, uintptr_t a, size_t n, int flags, uint32_t pc, bool record);
  void checkGlobal(Thread* t, Region& r, uintptr_t a, size_t n, int flags, uint32_t pc,
                   bool record);
  void checkBytes(Thread* t, ByteShadow* sh, size_t n, int flags, uint32_t pc, bool shared,
                  uintptr_t addr, const Region* region, bool record);
  bool ordered(const Thread* t, uint32_t otherThread, uint32_t otherEpoch, uint16_t otherWarpEpoch,
               uint32_t otherClock) const;
  void checkedAccess(Thread* t, const void* addr, size_t size, int flags, uint32_t pc);
  bool inIgnoredMemory(uintptr_t a) const;
  bool inRegion(uintptr_t a, size_t n) const;  // [a, a + n) inside one global region
  void recordBankAccess(Thread* t, uintptr_t a, size_t n, uint32_t pc);
  void flushBankConflicts();

  // --- collectives
  Collective* arrive(Thread* t, int kind, int sub, unsigned mask, uint32_t pc);
  void complete(Collective& c);
  void releaseBarrierIfDone(unsigned id);
  void landGroup(Thread* t, std::vector<struct PendingCopy>& group);

  // --- Hopper (hopper.cpp)
  void activateHopper();
  void resetHopperForBlock();
  void checkRegisterPool();
  bool relocateTensorMap(unsigned char* map, const std::vector<KernelArg>& args, size_t argIndex,
                         std::string* error);
  Mbarrier* findMbar(Thread* t, const void* bar, uint32_t pc, const char* what);
  // A tensor copy's thread, pc offset, map and shared tile (offset, bytes).
  struct TmaTile {
    Thread* t = nullptr;
    uint32_t pc = 0;
    tlc::cuda::TensorMapSpec spec;
    uint32_t off = 0;
    uint64_t bytes = 0;
  };
  // `im2col`: the copy is an im2col load (its map must be an im2col map;
  // any other copy's must not be).
  bool tmaSharedTile(int rank, bool im2col, const void* map, const void* smem, const char* op, const void* pc,
                     TmaTile* out);
  // The rest of a tensor load: box element i (at gaddr[i] when inBounds[i],
  // else zero) to byte i * elemBytes of the tile, through the swizzle,
  // completing the tile's bytes on `bar`.
  void tmaLoadTile(TmaTile& tile, void* bar, const std::vector<uint64_t>& gaddr, const std::vector<uint8_t>& inBounds);
  void mbarSettle(uint32_t index, isa::MbarEvent ev, Thread* t, uint32_t pc);
  void checkAsyncBytes(Thread* t, uintptr_t a, size_t n, int flags, uint32_t pc);
  bool vcOrdered(const Thread* t, uint32_t otherThread, uint32_t otherClock) const;
  void joinKnowledge(const std::vector<Thread*>& ts);
  void joinBarrierKnowledge(unsigned id);
  std::string describeWait(const Thread* t) const;
  std::string hopperWaitText(const Thread* t) const;
  void hopperThreadExit(Thread* t);
  WgOp* wgArrive(Thread* t, int kind, int sub, uint32_t pc);
  void wgFinish(Thread* t, WgOp* op);
  void wgExecute(WgOp& op);
  void retireWgmmaGroup(Warpgroup& w, WgmmaGroup& g, Thread* t, uint32_t pc, bool threadsLive);
  void deferAccumulators(Warpgroup& w, int regsPerThread, const WgOp& op, const std::vector<uint32_t>& values);

  // --- 64-lane wavefronts (wavefront.cpp)
  void resetWavefronts();
  void wavefrontThreadExit(Thread* t);
  std::string wavefrontWaitText(const Thread* t) const;
  // The lane joins its wavefront's collective of that kind (a new one when
  // none is gathering); findings for those that cannot complete.
  WaveOp* waveArrive(Thread* t, int kind, int sub, uint32_t pc);
  // Blocks the lane until the last lane arrives; true for that last lane,
  // which executes the collective and then calls waveRelease.
  bool waveWait(Thread* t, WaveOp* op);
  void waveRelease(Thread* t, WaveOp* op);
  uint32_t waveShfl(Thread* t, int mode, uint32_t value, int arg, int* valid, uint32_t pc);

  // --- findings
  void report(FindingKind kind, const Thread* t, uint32_t pc, uint32_t otherPc, std::string message);
  void abortLaunch();
  uint32_t pcOffset(const void* pc) const;
  std::string threadName(uint32_t globalThread) const;
  Dim3 blockOf(uint32_t globalThread) const;
  Dim3 threadOf(uint32_t globalThread) const;
  void symbolize(LaunchResult& result);

 public:
  EmulatedModule* module_;
  void* handle_;
  tlc_emu_api api_{};
  tlc_emu_api** hostVar_ = nullptr;
  tlc_emu_thread_state** selfVar_ = nullptr;
  uintptr_t moduleBase_ = 0;
  uintptr_t sharedBegin_ = 0, sharedEnd_ = 0;  // the shared section
  uintptr_t dynBegin_ = 0, dynCapacityEnd_ = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> ignored_;  // module segments, internal data

  // --- per launch
  std::string kernel_;
  LaunchConfig config_;
  LaunchOptions options_;
  LaunchResult* result_ = nullptr;
  std::vector<std::unique_ptr<Region>> regions_;  // global allocations, by address
  std::vector<ByteShadow> sharedShadow_;
  unsigned threadsPerBlock_ = 0, warpsPerBlock_ = 0;
  uint32_t blockLinear_ = 0;
  uint32_t blockEpoch_ = 1;
  std::vector<uint16_t> warpEpoch_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<tlc_emu_thread_state> states_;
  uint8_t* stacks_ = nullptr;
  size_t stacksBytes_ = 0, stackStride_ = 0;
  Thread* current_ = nullptr;
  bool aborted_ = false;
  std::vector<std::vector<Collective*>> activeCollectives_;  // per warp
  struct Barrier {
    unsigned arrived = 0;
    unsigned expected = 0;  // 0: every live thread
    uint32_t pc = 0;
    int count = 0, all = 1, any = 0;  // bar.red accumulators
  };
  std::map<unsigned, Barrier> barriers_;
  std::map<std::tuple<int, uint32_t, uint32_t>, size_t> findingIndex_;
  uint64_t accessCount_ = 0;
  double deadline_ = 0;
  // bank conflicts: per warp, (pc, occurrence) -> lanes' addresses
  struct BankEntry {
    uint64_t addr[32];
    uint32_t mask = 0;
    int bytes = 0;
  };
  std::vector<std::map<std::pair<uint32_t, uint32_t>, BankEntry>> bankPending_;
  std::map<uint32_t, BankConflictSite> bankSites_;
  // Hopper state of the running block (activated by the first Hopper instruction)
  bool hopperActive_ = false;
  // setmaxnreg: each thread's register count at launch (from the kernel's
  // __launch_bounds__; 0 when unknown), and the block's registers released
  // by setmaxnreg.dec and taken by setmaxnreg.inc so far.
  unsigned entryRegs_ = 0;
  uint64_t regsReleased_ = 0, regsTaken_ = 0;
  bool inTmaWrite_ = false;  // checkAsyncBytes runs for a tensor copy's write
  std::vector<Mbarrier> mbarriers_;
  std::unordered_map<uint32_t, uint32_t> mbarIndex_;  // shared address -> index
  std::vector<AsyncByte> asyncShadow_;
  std::vector<Warpgroup> warpgroups_;
  // The wavefront collective each 64-lane wavefront is gathering (null: none).
  std::vector<WaveOp*> waveOps_;
  // Whether the module's shuffles of width 64 are wavefront collectives (it
  // is HIP C, whose host tlc_hip.h declares tlc_emu_wavefront_lanes = 64).
  bool wavefrontShuffles_ = false;
  // fault recovery
  sigjmp_buf faultJmp_;
  bool inKernel_ = false;
};

}  // namespace tlc::cuda_emu
