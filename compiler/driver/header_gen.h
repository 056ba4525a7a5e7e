// Host-side files for `tlc build`: a C header with one typed launch function
// per kernel, and (with --embed) a C source that embeds the built binary so a
// program needs no files at run time.
//
// The header compiles as C99 and as C++ (11 and later) and includes
// <tlc/runtime.h>. For a kernel
//   def gemm[M, N, K=64, dtype=float32](A: Tensor[(M, K), dtype], ...)
// it declares
//   TLC_LAUNCH_LINKAGE_ tlc_status gemm_launch(tlc_module* module, const float* A,
//       const float* B, float* C, int64_t M, int64_t N, void* stream);
// Tensor parameters become pointers to their element type (const when the
// kernel never writes them); every dynamic shape symbol is an int64_t after
// them; scalar parameters keep their position among the tensors. Every name
// is spelled through backend::cName (compiler/backends/c_names.h): `int`
// becomes `tlc_int`, and the comment above the function shows both. The
// function builds the dense row-major tensor descriptions from the symbols
// and calls tlcLaunch, which checks them (null, alignment) and launches.
// The launch functions are static inline unless the including file defines
// TLC_LAUNCH_EXPORT (they are then defined there as exported functions, the
// symbols a shared library or an FFI calls) or TLC_LAUNCH_EXTERN (declared
// only). The header also defines tlc_float_to_float16, tlc_float16_to_float,
// tlc_float_to_bfloat16 and tlc_bfloat16_to_float (round to nearest even).
// With an embedded module the header also declares
//   tlc_module* <module_name>_module(void);   // NULL on failure, see tlcGetLastError
// defined by the embed source; it loads the module once per process.
#pragma once

#include <string>

#include "compiler/ir/ir.h"

namespace tlc::driver {

struct HeaderOptions {
  // Names the module: `<moduleName>_module()` and the include guard, spelled
  // by backend::cIdentifierFromFileName (`my-kernels` -> `my_kernels`).
  std::string moduleName = "kernels";
  // Declare `<moduleName>_module()` (defined by generateEmbedSource).
  bool embedded = false;
  // Prefix of every launch function (`<prefix>_<kernel>_launch`), spelled
  // like moduleName.
  std::string functionPrefix;
  // A comment line naming what the header was generated from.
  std::string sourceName;
  // The target the module was built for ("cpu", "cuda:sm_90", "hip:gfx942"):
  // the header says what `stream` is there. Empty: not said.
  std::string target;
};

std::string generateHeader(const ir::Module& module, const HeaderOptions& options);

struct EmbedOptions {
  std::string moduleName = "kernels";  // as in HeaderOptions
  std::string headerName;                  // #included when set ("gemm.h")
};

// A C99 source defining `tlc_module* <moduleName>_module(void)` over the
// bytes of `binary` (a .so, .cubin or .hsaco image). `metadataJson` may be
// empty for a CPU shared object, which carries its own metadata.
std::string generateEmbedSource(const std::string& binary, const std::string& metadataJson,
                                const EmbedOptions& options);

// What `tlc build` calls after writing the binary at `binaryPath`: writes the
// header (when `headerPath` is not empty) and the embed source (when
// `embedPath` is not empty). The device metadata is read from
// `<binaryPath>.json` when that file exists (the header names its target;
// without it the module is a CPU one). Returns false and sets *error
// when a file cannot be read or written.
bool writeHostFiles(const ir::Module& module, const std::string& binaryPath, const std::string& headerPath,
                    const std::string& embedPath, std::string* error);

}  // namespace tlc::driver
