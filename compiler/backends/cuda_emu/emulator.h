// The CUDA emulator: runs the CUDA C that tlc generates on the host CPU and
// checks it while it runs.
//
// EmulatedModule::compile takes the exact source handed to NVRTC, compiles it
// as host C++ (see host_compile.h: the host C++ compiler, our prelude for the
// CUDA built-ins, host versions of the device helpers, thread-sanitizer
// instrumentation redirected to the emulator) and loads it. launch() runs one
// kernel: blocks one after another, each GPU thread a fiber, with PTX
// semantics (cp.async data lands at its wait_group; warp collectives
// rendezvous all lanes of their mask) and reports findings:
//   races on shared and global memory (no barrier between two threads'
//   conflicting accesses; reads of cp.async data not yet waited for),
//   out-of-bounds / misaligned / wild accesses, writes to read-only buffers,
//   barriers not reached by all threads, deadlocks, mismatched warp
//   collectives, traps and faults, plus shared-memory bank-conflict counts.
// Each finding names the kernel, block, thread and source line (through the
// emitted source's #line directives when present).
//
// Not thread-safe: one launch at a time per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tlc::cuda_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

#define TLC_EMU_FINDING_KINDS(X)                                                               \
  X(SharedRace, "shared-race", true)                                                           \
  X(GlobalRace, "global-race", true)                                                           \
  X(AsyncCopyInFlight, "async-copy-in-flight", true)                                           \
  X(UninitializedSharedRead, "uninitialized-shared-read", false)                               \
  X(OutOfBounds, "out-of-bounds", true)                                                        \
  X(Misaligned, "misaligned", true)                                                            \
  X(WildAccess, "wild-access", true)                                                           \
  X(WriteToReadOnly, "write-to-read-only", true)                                               \
  X(BarrierNotReachedByAll, "barrier-divergence", true)                                        \
  X(Deadlock, "deadlock", true)                                                                \
  X(CollectiveMismatch, "collective-mismatch", true)                                           \
  X(ShuffleFromInactiveLane, "shuffle-inactive-lane", true)                                    \
  X(Trap, "trap", true)                                                                        \
  X(Fault, "fault", true)                                                                      \
  X(Timeout, "timeout", true)                                                                  \
  X(MbarrierTxMismatch, "mbarrier-tx-mismatch", true)                                         \
  X(MbarrierMisuse, "mbarrier-misuse", true)                                                   \
  X(WgmmaOperandOverwritten, "wgmma-operand-overwritten", true)                                \
  X(BadTensorMap, "bad-tensor-map", true)                                                      \
  X(BankConflict, "bank-conflict", false)

enum class FindingKind {
#define X(Name, Printed, IsError) Name,
  TLC_EMU_FINDING_KINDS(X)
#undef X
};
const char* findingKindName(FindingKind k);
bool findingIsError(FindingKind k);

struct CodeLocation {
  uintptr_t pc = 0;        // absolute address in the loaded module (0: none)
  std::string file;        // source file (a .tl file through #line, or the .cu)
  int line = 0;
  std::string function;
  std::string str() const;  // "file:line" or "<kernel>+0x1234"
};

struct Finding {
  FindingKind kind = FindingKind::Trap;
  std::string kernel;
  Dim3 block, thread;
  bool hasThread = true;
  std::string message;
  CodeLocation where;  // the access / instruction
  CodeLocation other;  // the conflicting access, the async copy's issue, ...
  uint64_t count = 1;  // identical findings folded into this one
  bool isError() const { return findingIsError(kind); }
  std::string str() const;
};

// One argument of a kernel, in the kernel's parameter order.
struct KernelArg {
  enum class Kind { Buffer, Scalar } kind = Kind::Scalar;
  std::string name;
  // Buffer: host memory copied into an emulated global allocation before the
  // run and, when writable, copied back after it.
  void* data = nullptr;
  size_t bytes = 0;
  bool writable = true;
  bool poison = false;  // fill with 0xff before the run (write-only outputs)
  // Scalar: the raw bytes (size = bytes, at most 128: a tensor map is a
  // 128-byte by-value argument).
  alignas(64) unsigned char scalar[128] = {};
  // Element type name ("float16", ...), informational: replay bundles use it
  // to compare results with a tolerance.
  std::string dtype;

  static KernelArg buffer(std::string name, void* data, size_t bytes, bool writable,
                          bool poison = false) {
    KernelArg a;
    a.kind = Kind::Buffer;
    a.name = std::move(name);
    a.data = data;
    a.bytes = bytes;
    a.writable = writable;
    a.poison = poison;
    return a;
  }
  template <class T>
  static KernelArg value(std::string name, T v) {
    static_assert(sizeof(T) <= 128, "scalar argument too large");
    KernelArg a;
    a.kind = Kind::Scalar;
    a.name = std::move(name);
    a.bytes = sizeof(T);
    std::memcpy(a.scalar, &v, sizeof(T));
    return a;
  }
};

// A by-value argument of `bytes` raw bytes (at most 128), e.g. a tensor map
// from encodeTensorMap.
inline KernelArg byValue(std::string name, const void* data, size_t bytes) {
  KernelArg a;
  a.kind = KernelArg::Kind::Scalar;
  a.name = std::move(name);
  a.bytes = bytes > sizeof a.scalar ? sizeof a.scalar : bytes;
  std::memcpy(a.scalar, data, a.bytes);
  return a;
}

struct LaunchConfig {
  Dim3 grid, block;
  size_t dynamicSharedBytes = 0;
};

struct LaunchOptions {
  bool checkRaces = true;
  bool checkUninitializedShared = true;
  bool countBankConflicts = true;
  // A launch that runs longer than this is stopped with a Timeout finding.
  double timeoutSeconds = 600;
  // At most this many distinct findings are kept (the rest are counted).
  size_t maxFindings = 64;
  size_t fiberStackBytes = 256 * 1024;
  // When set, each launch writes a replay bundle under this directory
  // (<dir>/<kernel>_<n>/: kernel.cu, launch.txt, argI.in.bin, argI.emu.bin)
  // so the same launch can be repeated on a GPU and compared
  // (tests/cuda_emu/gpu/replay_launcher.cu).
  std::string replayDir;
};

struct BankConflictSite {
  CodeLocation where;
  uint64_t instructions = 0;     // warp-wide shared accesses at this site
  uint64_t extraWavefronts = 0;  // wavefronts beyond the conflict-free minimum
};

struct LaunchResult {
  bool completed = false;  // every block ran to the end (no trap/fault/deadlock)
  std::string error;       // set when the launch could not start (bad arguments)
  std::vector<Finding> findings;
  uint64_t droppedFindings = 0;
  // Per Buffer argument (in argument order; empty for scalars): one byte per
  // buffer byte, 1 if the kernel wrote it.
  std::vector<std::vector<uint8_t>> written;
  uint64_t sharedInstructions = 0, sharedWavefronts = 0, idealSharedWavefronts = 0;
  std::vector<BankConflictSite> bankConflicts;  // worst first
  uint64_t blocksRun = 0, threadSwitches = 0, accessesChecked = 0;

  size_t errorCount() const;
  bool clean() const { return completed && error.empty() && errorCount() == 0; }
  // Human-readable report of every finding and the bank-conflict summary.
  std::string render() const;
  bool has(FindingKind k) const;
};

struct CompileOptions {
  std::string compiler;       // default: $TLC_EMU_CXX, else "c++"
  std::string cacheDir;       // default: $TLC_EMU_CACHE, else $TMPDIR/tlc-cuda-emu-<uid>
  std::string sourceName = "kernel.cu";  // how the source appears in findings without #line
  bool keepFiles = true;      // keep the compiled module in the cache
};

class Machine;

}  // namespace tlc::cuda_emu

namespace tlc::cuda {
struct TensorMapSpec;
}

namespace tlc::cuda_emu {

// Writes `spec` into the 128 bytes of a tlc::TensorMap kernel argument in the
// emulator's own format (a magic number, a version, then the fields; see
// isa_hopper.cpp), which the emulated tensor copies decode. spec.address is
// the host address of the emulated global tensor (the emulated kernel's
// global pointers are host pointers). False with *why for a spec TMA cannot
// describe; a spec of rank 0 (a store map the launch could not describe) is
// written as 128 zero bytes, as the driver's launchers pass it.
bool encodeTensorMap(const tlc::cuda::TensorMapSpec& spec, void* out128, std::string* why);

class EmulatedModule {
 public:
  // Compiles and loads `cudaSource`; nullptr with *error set on failure
  // (the host compiler's diagnostics are included).
  static std::unique_ptr<EmulatedModule> compile(const std::string& cudaSource, std::string* error,
                                                 const CompileOptions& options = {});
  ~EmulatedModule();

  const std::vector<std::string>& kernels() const { return kernels_; }
  bool hasKernel(const std::string& name) const;
  // Runs one kernel to completion (or until a fatal finding).
  LaunchResult launch(const std::string& kernel, const LaunchConfig& config,
                      std::vector<KernelArg>& args, const LaunchOptions& options = {});

  // The files the module was built from (for debugging).
  const std::string& hostSourcePath() const { return hostSource_; }
  const std::string& sharedObjectPath() const { return soPath_; }

 private:
  EmulatedModule() = default;
  void* handle_ = nullptr;
  std::string hostSource_, soPath_, cudaSource_;
  int replayCount_ = 0;
  std::vector<std::string> kernels_;
  std::unique_ptr<Machine> machine_;
  friend class Machine;
};

}  // namespace tlc::cuda_emu
