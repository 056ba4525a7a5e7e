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
  std::vector<const ir::Call*> gemmCalls;
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
    ir::IRVisitor::visit(e);
  }
};

}  // namespace

TEST_CASE("lowerForCpu leaves loops, block-local buffers and gemm calls reading A in place") {
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
  // One call per block of a group (cpu-group-blocks: 1, 2, 4 or 8 blocks,
  // depending on this machine's threads and L2), each reading A in place:
  // 1024 is 4 whole groups of 8 block_K = 32 steps (cpu-coarsen-k), so no
  // step needs the zero-padded tile.
  size_t calls = census.gemmCalls.size();
  CHECK((calls == 1 || calls == 2 || calls == 4 || calls == 8));
  for (const ir::Call* call : census.gemmCalls) {
    auto* address = ir::as<ir::Call>(call->args[0]);
    REQUIRE(address);
    auto* a = ir::as<ir::Load>(address->args[0]);
    REQUIRE(a);
    CHECK(a->buffer->scope == ir::MemScope::Global);
  }
}
