// `tlc run FILE --target=cuda:sm_XX --emulate [--check]`: the CUDA backend's
// output run on the host CPU by the CUDA emulator (compiler/backends/cuda_emu).
//
// Generates CUDA C exactly as for NVRTC, compiles it for the host, makes
// seeded arguments (run_common.h), launches every kernel of the function in
// order (grid sizes and host-side lets evaluated from the arguments) and
// prints every finding of the emulator's checks (races, out-of-bounds and
// misaligned accesses, barrier divergence, deadlocks, cp.async reads in
// flight, outputs the reference writes but the kernel leaves unwritten, bank
// conflicts) with kernel, block, thread and source line. With --check the
// results are compared with the reference interpreter as for every target.
// Exit code: 0, or 1 when the emulator reported an error or the check failed.
#pragma once

#include <string>

#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/driver/run_common.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

struct EmulateOptions {
  bool checkRaces = true;
  bool reportBankConflicts = true;  // as warnings in the report
  double timeoutSeconds = 600;
  // Replay bundles for running the same launches on a GPU (see
  // cuda_emu::LaunchOptions::replayDir); empty: $TLC_EMU_REPLAY_DIR if set.
  std::string replayDir;
  bool warpSpecialize = true;  // sm_90a: the TMA + wgmma mainloop (cuda::CudaOptions::warpSpecialize)
  bool persistent = true;      // sm_90a: persistent gemm kernels (cuda::CudaOptions::persistent)
  bool stageTma = true;        // sm_90a: staged TMA operands (cuda::CudaOptions::stageTma)
};

int runCudaEmulated(const ir::Module& module, const RunSettings& settings, const std::string& arch,
                    DiagnosticEngine& diags, const EmulateOptions& options = {});
// The same for the emitter's output with `options` (a CUDA arch, or the HIP
// dialect for an AMD arch: hip::hipOptions).
int runEmulated(const ir::Module& module, const RunSettings& settings, const cuda::CudaOptions& options,
                DiagnosticEngine& diags, const EmulateOptions& emulate = {});

}  // namespace tlc::driver
