// Kernel metadata for device builds: describes the launches the CUDA backend
// generated (device kernels, their argument order, host-side lets, grid
// formulas, block sizes, dynamic shared memory) in the format of
// compiler/backends/metadata.h, and writes it beside the binary as
// `<binary>.json`, where the runtime (tlcLoadModule) and `tlc build --embed`
// find it.
#pragma once

#include <string>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/ir/ir.h"
#include "compiler/support/source.h"

namespace tlc::driver {

// The metadata JSON of a module built for `target` ("cuda:sm_90").
// `binary`: the kind of code object ("cubin", or "hsaco" for hip:gfxNNN);
// `fallbackImage`: the code object of the kernels' versions without TMA when
// they were compiled apart (compileForCuda), carried in the metadata.
std::string cudaModuleMetadata(const ir::Module& module, const cuda::CudaModule& generated, const std::string& target,
                               const SourceManager* sources, const std::string& binary = "cubin",
                               const std::string& fallbackImage = "");

// Writes `json` to `<binaryPath>.json`; false and *error on failure.
bool writeMetadataBeside(const std::string& binaryPath, const std::string& json, std::string* error);

}  // namespace tlc::driver
