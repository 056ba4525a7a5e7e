// Kernels with layout annotations (tests/cuda_emu_examples/annotated_layouts/)
// run through the CUDA emulator at sizes their tiles do not divide: the
// annotated layouts are the ones emitted, no finding from the emulator, and
// results equal to the interpreter's (layouts change no value).
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

const std::string kDir = "tests/cuda_emu_examples/annotated_layouts/";

int runKernel(const std::string& file, const std::string& func, const std::map<std::string, int64_t>& dims,
              std::string* log) {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile(kDir + file, sm, diags);
  return test::runEmulatedCheck(module, diags, dims, 5, log, func);
}

// The CUDA C of a file for sm_80 (its placement comments name each fragment's layout).
std::string cudaSource(const std::string& file) {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile(kDir + file, sm, diags);
  cuda::CudaOptions options;
  options.arch = "sm_80";
  options.lineDirectives = false;
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE_MESSAGE(cu, diags.renderAll());
  return cu->source;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("annotated row-group layouts are emitted as annotated and compute what the interpreter computes") {
  std::string src = cudaSource("row_groups.tl");
  CHECK(contains(src, "`X_f`: registers, tile of a row-group layout (16 threads per row, runs of 4)"));
  CHECK(contains(src, "`X_f`: registers, tile of a row-group layout (4 threads per row, runs of 16)"));
  CHECK(contains(src, "`mx`: registers, row vector of a row-group layout (64 threads per row, runs of 2)"));
  for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 77}, {"N", 300}}, {{"M", 64}, {"N", 128}}}) {
    std::string log;
    CAPTURE(dims.at("M"));
    int rc = runKernel("row_groups.tl", "row_groups", dims, &log);
    INFO(log);
    CHECK(rc == 0);
  }
  for (std::string func : {"long_runs", "wide_rows"})
    for (int64_t m : {77, 32, 3}) {
      std::string log;
      CAPTURE(func);
      CAPTURE(m);
      int rc = runKernel("row_groups.tl", func, {{"M", m}}, &log);
      INFO(log);
      CHECK(rc == 0);
    }
}

TEST_CASE("gemms with row-major and swizzled annotated operands and a shared accumulator stay correct") {
  std::string src = cudaSource("gemm_operands.tl");
  CHECK(contains(src, "`C_f`: registers, mma accumulator layout"));
  CHECK(contains(src, "`C_f`: shared memory (annotated shared_fallback)"));
  for (std::string func : {"gemm_operands", "gemm_shared_accumulator"})
    for (auto dims : std::vector<std::map<std::string, int64_t>>{{{"M", 100}, {"N", 70}, {"K", 96}},
                                                                 {{"M", 64}, {"N", 64}, {"K", 64}}}) {
      std::string log;
      CAPTURE(func);
      CAPTURE(dims.at("M"));
      int rc = runKernel("gemm_operands.tl", func, dims, &log);
      INFO(log);
      CHECK(rc == 0);
    }
}

TEST_CASE("a fragment group annotated into shared memory stays correct") {
  std::string src = cudaSource("shared_fallback.tl");
  CHECK(contains(src, "`r`: shared memory (annotated shared_fallback)"));
  CHECK(contains(src, "`X_f`: shared memory (shares a loop nest with `r`"));
  for (int64_t m : {77, 32, 5}) {
    std::string log;
    int rc = runKernel("shared_fallback.tl", "shared_fallback", {{"M", m}}, &log);
    INFO(log);
    CHECK(rc == 0);
  }
}
