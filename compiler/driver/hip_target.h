// `tlc run|build|emit` for `--target=hip:gfxNNN` (hip_archs.h): the GPU
// emitter's HIP dialect (compiler/backends/cuda/gpu_dialect.h), compiled by
// hiprtc or clang (compiler/backends/hip/hip_compile.h).
//
// build: writes the code object (.hsaco) and its kernel metadata beside it
// (`<out>.json`, the format of device builds, binary "hsaco").
// emit: `--stage=hip` prints the HIP C; `--stage=amdgcn` the disassembly of
// the code object.
// run: launches the code object on an AMD GPU through the HIP runtime
// (libamdhip64.so, loaded at run time: compiler/backends/gpu_driver.h),
// exactly as `--target=cuda:sm_XX` runs a cubin (runOnGpu, cuda_target.h);
// without the library or a GPU it stops before compiling, saying which
// library was looked for and what to install. With --emulate the CUDA
// emulator runs the HIP C on the host (emulate_target.h). Nothing here has
// run on AMD hardware.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/driver/run_common.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

// Exit codes: 0, 1 after errors, 2 for an unknown arch.
int emitHip(const ir::Module& module, const std::string& stage, const cuda::CudaOptions& options, std::ostream& os,
            DiagnosticEngine& diags);
int buildForHip(const ir::Module& module, const std::string& outPath, const cuda::CudaOptions& options,
                DiagnosticEngine& diags);

// Exit codes: 0, or 1 after errors / a failed check.
int runOnHip(const ir::Module& module, const RunSettings& settings, const cuda::CudaOptions& options,
             DiagnosticEngine& diags);

// Generates HIP C and compiles it to a code object; reports hip-build-failed.
std::optional<std::string> compileForHip(const ir::Module& module, const cuda::CudaOptions& options,
                                         DiagnosticEngine& diags, cuda::CudaModule* generated = nullptr);

}  // namespace tlc::driver
