// The CPU lowering pipeline on the gemm example: what each pass leaves behind.
#include <doctest/doctest.h>

#include "compiler/ir/functor.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

struct Census : ir::IRVisitor {
  int tileOps = 0, parallelLoops = 0, vectorizedLoops = 0, nonLocalAllocs = 0;
  std::vector<const ir::Call*> gemmCalls, prefetchStreams;
  void visit(const ir::Stmt& s) override {
    if (s && (s->kind == ir::StmtKind::Copy || s->kind == ir::StmtKind::Gemm || s->kind == ir::StmtKind::Fill ||
              s->kind == ir::StmtKind::Reduce || s->kind == ir::StmtKind::Atomic))
      ++tileOps;
    if (auto* f = ir::as<ir::ForStmt>(s)) {
      if (f->forKind == ir::ForKind::Parallel || f->forKind == ir::ForKind::Pipelined) ++parallelLoops;
      if (f->forKind == ir::ForKind::Vectorized) ++vectorizedLoops;
    }
    if (auto* a = ir::as<ir::AllocStmt>(s); a && a->buffer->scope != ir::MemScope::Local) ++nonLocalAllocs;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::Expr& e) override {
    if (auto* c = ir::as<ir::Call>(e); c && c->callee == cpu_intrinsics::kGemm) gemmCalls.push_back(c);
    if (auto* c = ir::as<ir::Call>(e); c && c->callee == cpu_intrinsics::kPrefetchStream) prefetchStreams.push_back(c);
    ir::IRVisitor::visit(e);
  }
};

}  // namespace

TEST_CASE("lowerForCpu leaves loops, block-local buffers and one gemm call covering 256 k steps") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl",
                                {{"M", "512"}, {"N", "512"}, {"K", "1024"}, {"dtype", "float32"}});
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(lowered);
  Census census;
  census.visit(lowered->funcs[0]->body);
  CHECK(census.tileOps == 0);
  CHECK(census.parallelLoops == 0);
  CHECK(census.vectorizedLoops > 0);
  CHECK(census.nonLocalAllocs == 0);
  REQUIRE(census.gemmCalls.size() == 1);
  // block_K = 32 steps coarsened 8 at a time: K = 256 per micro-kernel call.
  int64_t k = 0;
  REQUIRE(ir::constInt(census.gemmCalls[0]->args[5], &k));
  CHECK(k == 256);
}

TEST_CASE("the next step's tiles of A and B are prefetched during the gemm, one stream each") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl",
                                {{"M", "512"}, {"N", "512"}, {"K", "1000"}, {"dtype", "float32"}});
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(lowered);
  Census census;
  census.visit(lowered->funcs[0]->body);
  // The whole-tile copy and the per-step copies of the last group merge into
  // one stream per operand: A 128 rows x 256 columns, B 256 rows x 128.
  REQUIRE(census.prefetchStreams.size() == 2);
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (const ir::Call* p : census.prefetchStreams) {
    int64_t rows = 0, cols = 0;
    REQUIRE(ir::constInt(p->args[2], &rows));
    REQUIRE(ir::constInt(p->args[4], &cols));
    shapes.push_back({rows, cols});
  }
  CHECK(shapes[0] == std::pair<int64_t, int64_t>{128, 256});
  CHECK(shapes[1] == std::pair<int64_t, int64_t>{256, 128});
}

TEST_CASE("a gemm without a reduction loop gets no prefetch streams") {
  const char* src = R"(
def one_step[M, N, K](A: Tensor[(M, K), float32], B: Tensor[(K, N), float32], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
        A_s = T.alloc_shared((32, K), float32)
        B_s = T.alloc_shared((K, 32), float32)
        C_f = T.alloc_fragment((32, 32), float32)
        T.copy(A[by * 32, 0], A_s)
        T.copy(B[0, bx * 32], B_s)
        T.gemm(A_s, B_s, C_f, clear_accum=True)
        T.copy(C_f, C[by * 32, bx * 32])
)";
  CpuCompiled c = compileTl(src, {{"M", "64"}, {"N", "64"}, {"K", "48"}});
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(lowered);
  Census census;
  census.visit(lowered->funcs[0]->body);
  CHECK(census.gemmCalls.size() == 1);
  CHECK(census.prefetchStreams.empty());
}
