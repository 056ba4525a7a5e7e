// The CUDA backend runs Pipelined loops from the plan pipeline-planning
// writes on them: the default plan, user plans of the supported shape (with
// their own prefetch depth), and a warning for plans it cannot run.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace {

struct Generated {
  std::optional<cuda::CudaModule> module;
  std::string diagnostics;
  bool warned = false;
};

// A tiled C += A @ B whose Pipelined loop takes `attrs` (", order=[...], stage=[...]").
Generated generate(const std::string& attrs) {
  std::string text =
      "def k[M, N, K](A: Tensor[(M, K), float16], B: Tensor[(K, N), float16], C: Tensor[(M, N), float32]):\n"
      "    with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):\n"
      "        A_s = T.alloc_shared((64, 32), float16)\n"
      "        B_s = T.alloc_shared((32, 64), float16)\n"
      "        C_f = T.alloc_fragment((64, 64), float32)\n"
      "        T.clear(C_f)\n"
      "        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=4" + attrs + "):\n"
      "            T.copy(A[by * 64, k * 32], A_s)\n"
      "            T.copy(B[k * 32, bx * 64], B_s)\n"
      "            T.gemm(A_s, B_s, C_f)\n"
      "        T.copy(C_f, C[by * 64, bx * 64])\n";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("k.tl", text);
  auto module = compileSource(sources, diags, file, {});
  Generated g;
  cuda::CudaOptions options;
  options.lineDirectives = false;  // the checks below read the code's own lines
  if (module) g.module = cuda::generateCuda(*module, options, diags);
  g.diagnostics = diags.renderAll();
  g.warned = diags.hasKind(DiagKind::CudaPipelineUnsupported);
  return g;
}

}  // namespace

TEST_CASE("the default plan runs the copies num_stages - 1 iterations ahead") {
  Generated g = generate("");
  REQUIRE_MESSAGE(g.module, g.diagnostics);
  CHECK_FALSE(g.warned);
  CHECK(g.module->source.find("cp_async_wait<2>") != std::string::npos);
  // Four stages; the copies write 3 iterations ahead, into the stage before the iteration's.
  CHECK(g.module->source.find("for (int k_pre = 0; k_pre < 3; ++k_pre)") != std::string::npos);
  CHECK(g.module->source.find("stage_of_iter = stage_of_iter == 3 ? 0 : stage_of_iter + 1;") != std::string::npos);
  CHECK(g.module->source.find("if (((k_2 + 3) < ((K + 31) >> 5)))") != std::string::npos);
  CHECK(g.module->source.find("(stage_of_iter >= 1 ? stage_of_iter - 1 : stage_of_iter + 3)") != std::string::npos);
}

TEST_CASE("a user plan with the consumers in stage 1 prefetches one iteration ahead") {
  Generated g = generate(", order=[0, 1, 2], stage=[0, 0, 1]");
  REQUIRE_MESSAGE(g.module, g.diagnostics);
  CHECK_FALSE(g.warned);
  CHECK(g.module->source.find("cp_async_wait<0>();\n    __syncthreads();") != std::string::npos);
  // Two stages, the copies one iteration ahead.
  CHECK(g.module->source.find("for (int k_pre = 0; k_pre < 1; ++k_pre)") != std::string::npos);
  CHECK(g.module->source.find("stage_of_iter = stage_of_iter == 1 ? 0 : stage_of_iter + 1;") != std::string::npos);
  CHECK(g.module->source.find("stage_of_iter == 3") == std::string::npos);
}

TEST_CASE("a plan the backend cannot run is a warning and runs unpipelined") {
  // expected-warning: cuda-pipeline-unsupported
  Generated g = generate(", stage=[0, 1, 2]");
  REQUIRE_MESSAGE(g.module, g.diagnostics);
  CHECK(g.warned);
  CHECK(g.diagnostics.find("this pipeline plan runs unpipelined on cuda: its statements after the stage-0 copies "
                           "must all share one stage") != std::string::npos);
  CHECK(g.diagnostics.find("k.tl:7:") != std::string::npos);
  CHECK(g.module->source.find("cp_async_wait") == std::string::npos);
}

TEST_CASE("the GPU emitter rejects expanded pipelines with a located error") {
  std::string text =
      "func @f(A: float32[64, 8], out: float32[64]) {\n"
      "  kernel grid(1) threads(64) as (b) {\n"
      "    alloc S: shared float32[64]\n"
      "    copy_async(A[0 : +64, 0 : +1], S)\n"
      "    commit_group\n"
      "    wait_group(0)\n"
      "    copy(S, out)\n"
      "  }\n"
      "}\n";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("async.tir", text);
  auto module = ir::parseIRModule(sources, diags, file);
  REQUIRE(module.has_value());
  CHECK(!cuda::generateCuda(*module, cuda::CudaOptions{}, diags).has_value());
  CHECK(diags.renderAll().find("async.tir:4:5: error: `copy_async` in `@f`: the CUDA target compiles Pipelined loops") !=
        std::string::npos);
}
