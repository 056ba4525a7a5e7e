// A gemm that tensor cores would take but for the size of its accumulator
// (more than kMaxAccumulatorRegisters registers per thread) runs as scalar
// multiply-adds with the warning cuda-gemm-scalar at the gemm, which says
// why and what to change; one that fits has no warning.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace {

struct Generated {
  bool ok = false;
  std::string diagnostics, source;
  bool warned = false;
};

Generated generate(int threads, const std::string& arch) {
  std::string text =
      "def k[M, N, K](A: Tensor[(M, K), float16], B: Tensor[(K, N), float16], C: Tensor[(M, N), float32]):\n"
      "    with T.Kernel(T.ceildiv(N, 256), T.ceildiv(M, 128), threads=" + std::to_string(threads) + ") as (bx, by):\n"
      "        A_s = T.alloc_shared((128, 32), float16)\n"
      "        B_s = T.alloc_shared((32, 256), float16)\n"
      "        C_f = T.alloc_fragment((128, 256), float32)\n"
      "        T.clear(C_f)\n"
      "        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):\n"
      "            T.copy(A[by * 128, k * 32], A_s)\n"
      "            T.copy(B[k * 32, bx * 256], B_s)\n"
      "            T.gemm(A_s, B_s, C_f)\n"
      "        T.copy(C_f, C[by * 128, bx * 256])\n";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("k.tl", text);
  auto module = compileSource(sources, diags, file, {});
  Generated g;
  cuda::CudaOptions options;
  options.arch = arch;
  if (module)
    if (auto cu = cuda::generateCuda(*module, options, diags)) {
      g.ok = true;
      g.source = cu->source;
    }
  g.diagnostics = diags.renderAll();
  g.warned = diags.hasKind(DiagKind::CudaGemmScalar);
  return g;
}

}  // namespace

TEST_CASE("a gemm whose accumulator does not fit the registers warns that it runs without tensor cores") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    // expected-warning: cuda-gemm-scalar
    Generated g = generate(128, arch);
    REQUIRE_MESSAGE(g.ok, g.diagnostics);
    CHECK(g.warned);
    CHECK(g.diagnostics.find("k.tl:10:13: warning: this gemm runs without tensor cores, as scalar multiply-adds: its "
                             "128 x 256 accumulator needs 256 registers per thread on 128 threads (at most 192); use "
                             "more threads or a smaller tile") != std::string::npos);
    CHECK(g.diagnostics.find("`C_f` declared here") != std::string::npos);
    CHECK(g.source.find("mma_m16n8k16") == std::string::npos);
    Generated wide = generate(256, arch);
    REQUIRE_MESSAGE(wide.ok, wide.diagnostics);
    CHECK_FALSE(wide.warned);
  }
}
