// Bounds checks in the CPU backend (CpuOptions::checkBounds): the first
// access outside its buffer stops the kernel and is reported at its line
// with the index, the shape and the block; masked edge tiles are not
// reported; without the option the generated code has no checks.
#include <doctest/doctest.h>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

struct Checked {
  bool ranClean = false;
  std::string log;
  std::vector<Diagnostic> diags;
};

// Runs the first kernel of `text` on the CPU with bounds checks.
Checked runChecked(const std::string& text, const std::map<std::string, int64_t>& dims = {}) {
  CpuCompiled c = compileTl(text);
  Checked r;
  INFO(c.rendered());
  REQUIRE(c.module);
  driver::CpuOptions options;
  options.checkBounds = true;
  auto jit = driver::compileForCpu(*c.module, options, *c.diags);
  REQUIRE(jit);
  const ir::PrimFunc& func = *c.module->funcs[0];
  auto args = driver::makeArguments(func, dims, 1, *c.diags);
  REQUIRE(args);
  driver::callCpuKernel(jit->kernel(func.name), func, *args);
  r.ranClean = !driver::reportCpuFailure(*jit, func, *c.diags);
  r.log = c.rendered();
  r.diags = c.diags->diagnostics();
  return r;
}

}  // namespace

// expected-error: out-of-bounds-access
TEST_CASE("an out-of-bounds store is reported at its line with the index, the shape and the block") {
  Checked r = runChecked(
      "def k[N=64](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):\n"
      "    with T.Kernel(4, threads=64) as bx:\n"
      "        for i in T.Parallel(N):\n"
      "            B[i * 1000] = A[i]\n");
  INFO(r.log);
  CHECK_FALSE(r.ranClean);
  REQUIRE(r.diags.size() == 1);
  CHECK(r.diags[0].kind == DiagKind::InterpOutOfBounds);
  CHECK(r.diags[0].loc.line == 4);
  CHECK(r.diags[0].loc.col == 13);
  CHECK(r.diags[0].message == "index 1000 is out of bounds for dimension 0 of `B` (size 64)");
  CHECK(r.diags[0].loc.len == std::string("B[i * 1000] = A[i]").size());
  REQUIRE(r.diags[0].notes.size() == 2);
  CHECK(r.diags[0].notes[0].message == "`B` is declared here");
  CHECK(r.diags[0].notes[0].loc.line == 1);
  const std::string& note = r.diags[0].notes[1].message;
  CHECK(note.find("the store's index is (1000) and `B` has shape (64); in block (bx=") == 0);
  CHECK(note.find("of the grid of `k`") != std::string::npos);
  CHECK(r.log.find("test.tl:4:13: error: index 1000 is out of bounds") != std::string::npos);
}

TEST_CASE("a negative index, a 2-D load and an atomic are checked too") {
  Checked neg = runChecked(
      "def k(A: Tensor[(8,), float32], B: Tensor[(8,), float32], s: int32):\n"
      "    with T.Kernel(1) as bx:\n"
      "        for i in T.Parallel(8):\n"
      "            B[i] = A[i - s]\n");
  INFO(neg.log);
  REQUIRE(neg.diags.size() == 1);
  CHECK(neg.diags[0].message.find("index -") == 0);
  CHECK(neg.diags[0].message.find("is out of bounds for dimension 0 of `A` (size 8)") != std::string::npos);
  CHECK(neg.diags[0].notes.back().message.find("the load's index is (-") == 0);

  Checked twoD = runChecked(
      "def k(A: Tensor[(4, 16), float32], B: Tensor[(4, 16), float32]):\n"
      "    with T.Kernel(2, 3) as (bx, by):\n"
      "        for i in T.Parallel(16):\n"
      "            B[by, i] = A[by * 2, i]\n");
  INFO(twoD.log);
  REQUIRE(twoD.diags.size() == 1);
  CHECK(twoD.diags[0].message == "index 4 is out of bounds for dimension 0 of `A` (size 4)");
  CHECK(twoD.diags[0].loc.line == 4);
  CHECK(twoD.diags[0].notes.back().message.find("the load's index is (4, ") == 0);
  CHECK(twoD.diags[0].notes.back().message.find("`A` has shape (4, 16); in block (bx=") != std::string::npos);
  CHECK(twoD.diags[0].notes.back().message.find("by=2)") != std::string::npos);

  Checked atomic = runChecked(
      "def k(A: Tensor[(8,), float32], S: Tensor[(2,), float32]):\n"
      "    with T.Kernel(1) as bx:\n"
      "        for i in T.Parallel(8):\n"
      "            T.atomic_add(S[i * 3], A[i])\n");
  INFO(atomic.log);
  REQUIRE(atomic.diags.size() == 1);
  CHECK(atomic.diags[0].message == "index 3 is out of bounds for dimension 0 of `S` (size 2)");
  CHECK(atomic.diags[0].notes.back().message.find("the atomic's index is (3)") == 0);
}

TEST_CASE("a fragment indexed past its end is reported, not written past") {
  Checked r = runChecked(
      "def k(A: Tensor[(64,), float32], B: Tensor[(64,), float32]):\n"
      "    with T.Kernel(1) as bx:\n"
      "        F = T.alloc_fragment((64,), float32)\n"
      "        for i in T.Parallel(64):\n"
      "            F[i * 3] = A[i]\n"
      "        T.copy(F, B)\n");
  INFO(r.log);
  REQUIRE(r.diags.size() == 1);
  CHECK(r.diags[0].message == "index 66 is out of bounds for dimension 0 of `F` (size 64)");
  CHECK(r.diags[0].loc.line == 5);
  CHECK(r.diags[0].notes.size() == 1);  // a tile, not a parameter: no declaration note
}

TEST_CASE("masked edge tiles are not reported: ragged gemm, add and row sums pass the oracle with checks on") {
  driver::CpuOptions options;
  options.checkBounds = true;
  {
    CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl",
                                  {{"M", "100"}, {"N", "72"}, {"K", "40"}, {"dtype", "float32"}});
    OracleComparison r = runAgainstOracle(c, {}, 3, options);
    INFO(r.log);
    CHECK(r.pass);
  }
  {
    CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl");
    OracleComparison r = runAgainstOracle(c, {{"M", 77}, {"N", 131}}, 3, options);
    INFO(r.log);
    CHECK(r.pass);
  }
  {
    CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/row_reduce/row_sum.tl");
    OracleComparison r = runAgainstOracle(c, {{"M", 70}, {"N", 300}}, 3, options);
    INFO(r.log);
    CHECK(r.pass);
  }
}

TEST_CASE("without checks the module has no checks and no failure accessor") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl");
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  REQUIRE(lowered);
  std::string plain = cpu::emitLLVMText(*lowered, {}, /*optimized=*/false);
  CHECK(plain.find("tlc_cpu_fail_bounds") == std::string::npos);
  CHECK(plain.find(cpu::kCpuFailureSymbol) == std::string::npos);
  driver::CpuOptions checking;
  checking.checkBounds = true;
  std::string checked = cpu::emitLLVMText(*lowered, checking, /*optimized=*/false);
  CHECK(checked.find("tlc_cpu_fail_bounds") != std::string::npos);
  CHECK(checked.find(cpu::kCpuFailureSymbol) != std::string::npos);
  CHECK(checked.find("!nontemporal") == std::string::npos);

  auto jit = driver::compileForCpu(*c.module, {}, *c.diags);
  REQUIRE(jit);
  bool hasAccessor = jit->failureAccessor() != nullptr;
  CHECK_FALSE(hasAccessor);
}
