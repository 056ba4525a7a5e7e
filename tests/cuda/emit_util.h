// Test helpers: a .tl source compiled by the front end, and the CUDA C that
// the backend emits for it (sm_90a).
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/sema/frontend.h"

namespace tlc::test {

// The module of `source` (named test.tl); REQUIREs that it compiles.
inline ir::Module compileTlSource(const std::string& source, SourceManager& sources, DiagnosticEngine& diags) {
  uint32_t file = sources.addBuffer("test.tl", source);
  auto module = compileSource(sources, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(module);
  return *module;
}

inline std::optional<cuda::CudaModule> generateCudaFor(const std::string& source, const cuda::CudaOptions& options) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module = compileTlSource(source, sources, diags);
  auto cu = cuda::generateCuda(module, options, diags);
  INFO(diags.renderAll());
  REQUIRE(cu);
  return cu;
}

// The text of a file of the source tree (an example).
inline std::string exampleSource(const std::string& path) {
  std::ifstream in(std::string(TLC_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string emitCudaFor(const std::string& source, const std::string& arch = "sm_90a") {
  cuda::CudaOptions options;
  options.arch = arch;
  return generateCudaFor(source, options)->source;
}

}  // namespace tlc::test
