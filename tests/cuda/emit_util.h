// Test helper: the CUDA C that the backend emits for a .tl source (sm_90a).
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/sema/frontend.h"

namespace tlc::test {

inline std::string emitCudaFor(const std::string& source) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("test.tl", source);
  auto module = compileSource(sources, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(module);
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  auto cu = cuda::generateCuda(*module, options, diags);
  INFO(diags.renderAll());
  REQUIRE(cu);
  return cu->source;
}

}  // namespace tlc::test
