// ptxas's notes on a kernel's speed, read from the NVRTC log: serialized
// wgmmas (C7514) and register spills, reported at the kernel's line. And the
// block-scaled float8 gemm at sizes bound at compile time, whose deferred
// scaled add once made ptxas serialize its wgmmas.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/backends/cuda/ptxas_advice.h"
#include "tests/cuda/emit_util.h"

using namespace tlc;

TEST_CASE("ptxas's serialization and spill notes are read from the NVRTC log") {
  const std::string log =
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non "
      "wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage "
      "in the function 'gemm_kernel0'\n"
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non "
      "wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage "
      "in the function 'gemm_kernel0'\n"
      "ptxas warning : Registers are spilled to local memory in function 'gemm_kernel1', 400 bytes spill stores, "
      "396 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 2 barriers\n";
  auto advice = cuda::parsePtxasAdvice(log);
  REQUIRE(advice.size() == 2);
  CHECK(advice[0].kind == cuda::PtxasAdvice::Kind::WgmmaSerialized);
  CHECK(advice[0].function == "gemm_kernel0");
  CHECK(advice[1].kind == cuda::PtxasAdvice::Kind::Spills);
  CHECK(advice[1].function == "gemm_kernel1");
  CHECK(advice[1].spillStores == 400);
  CHECK(advice[1].spillLoads == 396);
  CHECK(cuda::parsePtxasAdvice("ptxas info    : Used 40 registers\n").empty());
}

TEST_CASE("the advice is reported at the kernel's T.Kernel line") {
  const std::string source =
      "def two[N](A: Tensor[(N,), float32]):\n"
      "    with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:\n"
      "        for i in T.Parallel(128):\n"
      "            A[bx * 128 + i] = 1.0\n";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module = test::compileTlSource(source, sources, diags);
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  auto cu = cuda::generateCuda(module, options, diags);
  REQUIRE(cu);
  REQUIRE(cu->funcs.size() == 1);
  const std::string name = cu->funcs[0].kernels[0].name;
  // expected-warning: cuda-register-spills
  // expected-warning: cuda-wgmma-serialized
  cuda::reportPtxasAdvice(*cu,
                          "ptxas warning : Registers are spilled to local memory in function '" + name +
                              "', 8 bytes spill stores, 8 bytes spill loads\n"
                              "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are "
                              "serialized due to non wgmma instructions reading accumulator registers of  a wgmma "
                              "between start and end of the pipeline stage in the function '" + name + "'\n",
                          /*spills=*/true, diags);
  std::string text = diags.renderAll();
  CHECK(text.find("test.tl:2:5: warning:") != std::string::npos);
  CHECK(text.find("[cuda-register-spills]") != std::string::npos);
  CHECK(text.find("8 bytes stored") != std::string::npos);
  CHECK(text.find("[cuda-wgmma-serialized]") != std::string::npos);
  CHECK(diags.diagnostics().size() == 2);
  // Spills only when asked (--warn-spills).
  DiagnosticEngine quiet(sources);
  cuda::reportPtxasAdvice(*cu,
                          "ptxas warning : Registers are spilled to local memory in function '" + name +
                              "', 8 bytes spill stores, 8 bytes spill loads\n",
                          /*spills=*/false, quiet);
  CHECK(quiet.diagnostics().empty());
}

TEST_CASE("the block-scaled float8 gemm at sizes bound at compile time keeps its wgmmas asynchronous") {
  // With a trip count NVVM knows, the deferred scaled add's loop kept only
  // the tail that runs, and ptxas serialized every wgmma (C7514).
  std::string why;
  if (!cuda::nvrtcAvailable(&why)) {
    MESSAGE("not checked: " << why);
    return;
  }
  std::string text = test::exampleSource("examples/gemm_fp8/gemm_fp8_blockscale.tl");
  const std::string head = "def gemm_fp8_blockscale[M, N, K, ";
  REQUIRE(text.find(head) != std::string::npos);
  for (const char* stages : {"3", "4"}) {
    for (const char* k : {"4096", "640"}) {
      CAPTURE(stages);
      CAPTURE(k);
      std::string bound = text;
      bound.replace(bound.find(head), head.size(),
                    std::string("def gemm_fp8_blockscale[M=2048, N=2048, K=") + k + ", ");
      const std::string defaultStages = "stages=4 if T.target(\"sm_90a\") else 2";
      REQUIRE(bound.find(defaultStages) != std::string::npos);
      bound.replace(bound.find(defaultStages), defaultStages.size(), std::string("stages=") + stages);
      cuda::CudaOptions options;
      options.arch = "sm_90a";
      auto cu = test::generateCudaFor(bound, options);
      REQUIRE(cu->primarySource.find("tlc::wgmma_wait<1>()") != std::string::npos);
      auto built = cuda::compileWithNvrtc(cu->primarySource, "sm_90a", false, cuda::ptxasAdviceOptions());
      INFO(built.error);
      REQUIRE(built.ok);
      INFO(built.log);
      CHECK(cuda::parsePtxasAdvice(built.log).empty());
    }
  }
}
