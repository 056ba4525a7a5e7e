// Statements every block runs alike run once per chunk of blocks
// (compiler/backends/cpu/block_invariant.h): the copies of per-column
// parameters in a layernorm, but not a copy that depends on the block, nor
// one into a tile that another statement writes too.
#include <doctest/doctest.h>

#include "compiler/backends/cpu/block_invariant.h"
#include "compiler/backends/cpu/cpu_backend.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

const char* kRowScale = R"(
def row_scale[M, N=96](X: Tensor[(M, N), float16], gamma: Tensor[(N,), float16], beta: Tensor[(N,), float16],
                       Y: Tensor[(M, N), float16]):
    with T.Kernel(M, threads=32) as bx:
        x = T.alloc_fragment((N,), float32)
        g = T.alloc_fragment((N,), float32)
        b = T.alloc_fragment((N,), float32)
        T.copy(X[bx, 0], x)
        T.copy(gamma, g)
        T.copy(beta, b)
        for j in T.Parallel(N):
            g[j] = T.exp(g[j])
        for j in T.Parallel(N):
            b[j] = b[j] + 1.0
        for j in T.Parallel(N):
            x[j] = x[j] * g[j] + b[j] * g[j]
        T.copy(x, Y[bx, 0])
)";

const ir::KernelStmt* firstKernel(const ir::Stmt& s) {
  if (auto* k = ir::as<ir::KernelStmt>(s)) return k;
  for (const ir::Stmt& c : ir::seqStmts(s))
    if (c != s)
      if (auto* k = firstKernel(c)) return k;
  return nullptr;
}

}  // namespace

TEST_CASE("a copy of a parameter every block reads alike runs once per chunk of blocks") {
  CpuCompiled c = compileTl(kRowScale);
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(lowered);
  const ir::KernelStmt* k = firstKernel(lowered->funcs[0]->body);
  REQUIRE(k);
  // Gamma's tile only (its copy and exp, one loop after cpu-inline-producers,
  // read twice per element): X's depends on the block, and beta's tile
  // folds into the loop that reads it.
  CHECK(cpu::blockInvariantStatements(*k).size() == 1);
  std::string ir = cpu::emitLLVMText(*lowered, {}, false);
  CHECK(ir.find("chunk.invariant") != std::string::npos);
  for (int64_t m : {1, 7, 300}) {
    OracleComparison r = runAgainstOracle(c, {{"M", m}});
    INFO(r.log);
    CHECK(r.pass);
  }
}
