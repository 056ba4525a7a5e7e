// Test helpers: compile a .tl file of the source tree and run it through the
// CUDA emulator against the interpreter.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/hip/hip_archs.h"
#include "compiler/driver/emulate_target.h"
#include "compiler/sema/frontend.h"

namespace tlc::test {

// The module of `relativePath` (from the source root) with `defines` bound; REQUIREs success.
inline ir::Module compileTreeFile(const std::string& relativePath, SourceManager& sm, DiagnosticEngine& diags,
                                  const std::vector<Define>& defines = {}, const std::string& target = "") {
  std::string error;
  uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/" + relativePath, error);
  REQUIRE_MESSAGE(file != 0, error);
  auto module = compileSource(sm, diags, file, defines, nullptr, "", target);
  REQUIRE_MESSAGE(module, diags.renderAll());
  return *module;
}

// The C the GPU emitter generates for `relativePath` with `options`; REQUIREs success.
inline std::string emittedSource(const std::string& relativePath, const cuda::CudaOptions& options,
                                 const std::vector<Define>& defines = {}) {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = compileTreeFile(relativePath, sm, diags, defines);
  auto out = cuda::generateCuda(module, options, diags);
  REQUIRE_MESSAGE(out, diags.renderAll());
  return out->source;
}

// How many times `what` occurs in `text`.
inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Runs every kernel of `module`'s function `func` (empty: the first) in the
// emulator for `arch` (sm_XX, or gfxNNN for HIP; CUDA archs with `options`) with --check; the exit code,
// and the run's output and diagnostics in `log`.
inline int runEmulatedCheck(const ir::Module& module, DiagnosticEngine& diags, const std::map<std::string, int64_t>& dims,
                            uint64_t seed, std::string* log, const std::string& func = "",
                            const std::string& arch = "sm_80", const driver::EmulateOptions& options = {}) {
  std::ostringstream out;
  driver::RunSettings settings;
  settings.kernel = func;
  settings.dims = dims;
  settings.seed = seed;
  settings.check = true;
  settings.out = &out;
  int rc = arch.rfind("gfx", 0) == 0 ? driver::runEmulated(module, settings, hip::hipOptions(arch), diags)
                                      : driver::runCudaEmulated(module, settings, arch, diags, options);
  *log = out.str() + diags.renderAll();
  return rc;
}

// What the emulator writes to stderr (its warnings and the shared-memory
// totals) running `func` of `file` at 128^3 with --check for `arch` (sm_XX
// or gfxNNN), with `defines`; the run must pass.
inline std::string emulatedAt128(const std::string& file, const std::string& func, const std::string& arch,
                                 const std::vector<Define>& defines = {}) {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = compileTreeFile(file, sm, diags, defines);
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  std::string report;
  int rc = runEmulatedCheck(module, diags, {{"M", 128}, {"N", 128}, {"K", 128}}, 3, &report, func, arch);
  std::cerr.rdbuf(old);
  const std::string log = err.str() + diags.renderAll(), all = report + log;
  INFO(all);
  REQUIRE(rc == 0);
  return log;
}

// The shared-memory totals of an emulator log: warp-wide accesses, wavefronts, and wavefronts without conflicts.
struct SharedTraffic {
  unsigned long long accesses = 0, wavefronts = 0, ideal = 0;
};
inline SharedTraffic sharedTraffic(const std::string& log) {
  SharedTraffic t;
  size_t at = log.find("shared memory: ");
  REQUIRE(at != std::string::npos);
  REQUIRE(sscanf(log.c_str() + at, "shared memory: %llu warp-wide accesses, %llu wavefronts (%llu without", &t.accesses,
                 &t.wavefronts, &t.ideal) == 3);
  return t;
}

// The CUDA C of `module` for `arch`, with no pipelined loop left unpipelined.
inline std::string pipelinedModuleSource(const ir::Module& module, const std::string& arch, DiagnosticEngine& diags) {
  cuda::CudaOptions options;
  options.arch = arch;
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE(cu);
  CHECK_FALSE(diags.hasKind(DiagKind::CudaPipelineUnsupported));
  return cu->source;
}

}  // namespace tlc::test
