// Block-local buffers on the CPU: small tiles stay in the block function's
// frame; large ones (past 512 KiB in all) go to one heap allocation per call
// of the block function, so tiles of many MiB run; more than 1 GiB per block
// is a located cpu-block-local-too-large error; an allocation that fails at
// run time is a cpu-out-of-memory report.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

const char* kBigFragment =
    "def k[N=64, R=2048](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):\n"
    "    with T.Kernel(4, threads=64) as bx:\n"
    "        F = T.alloc_fragment((R, 2048), float32)\n"
    "        T.clear(F)\n"
    "        for i in T.Parallel(N):\n"
    "            F[R - 1, i] = A[i] * 2.0\n"
    "        for i in T.Parallel(N):\n"
    "            B[i] = A[i] + F[R - 1, i] + F[R - 2, i]\n";

std::string llvmText(CpuCompiled& c) {
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  REQUIRE(lowered);
  return cpu::emitLLVMText(*lowered, {}, /*optimized=*/false);
}

}  // namespace

TEST_CASE("a 16 MiB fragment runs from the heap and matches the interpreter") {
  CpuCompiled c = compileTl(kBigFragment);
  REQUIRE(c.module);
  CHECK(llvmText(c).find("tlc_cpu_alloc_local") != std::string::npos);
  OracleComparison r = runAgainstOracle(c);
  INFO(r.log);
  CHECK(r.pass);
}

TEST_CASE("add.tl with 32768-row tiles runs, on the heap; the default tiles stay on the stack") {
  std::string add = std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl";
  CpuCompiled big = compileTlFile(add, {{"block_M", "32768"}, {"M", "64"}, {"N", "64"}});
  REQUIRE(big.module);
  CHECK(llvmText(big).find("tlc_cpu_alloc_local") != std::string::npos);
  OracleComparison r = runAgainstOracle(big);
  INFO(r.log);
  CHECK(r.pass);

  CpuCompiled small = compileTlFile(add, {{"M", "256"}, {"N", "256"}});
  REQUIRE(small.module);
  std::string text = llvmText(small);
  CHECK(text.find("tlc_cpu_alloc_local") == std::string::npos);
  CHECK(text.find(cpu::kCpuFailureSymbol) == std::string::npos);
}

// expected-error: cpu-block-local-too-large
TEST_CASE("more than 1 GiB of block-local buffers is a located error at the kernel") {
  CpuCompiled c = compileTl(
      "def k(A: Tensor[(64,), float32]):\n"
      "    with T.Kernel(1) as bx:\n"
      "        F = T.alloc_fragment((32768, 32768), float32)\n"
      "        T.clear(F)\n"
      "        for i in T.Parallel(64):\n"
      "            F[1, i] = A[i]\n"
      "        T.copy(F[0, 0:64], A)\n");
  INFO(c.rendered());
  REQUIRE(c.module);
  CHECK(driver::compileForCpu(*c.module, {}, *c.diags) == nullptr);
  REQUIRE(c.diags->hasKind(DiagKind::CpuBlockLocalTooLarge));
  const Diagnostic& d = c.diags->diagnostics().back();
  CHECK(d.loc.line == 2);
  CHECK(d.message.find("more than 1 GiB per block") != std::string::npos);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].loc.line == 3);
  CHECK(d.notes[0].message == "`F` alone needs 4 GiB");
}

// expected-error: cpu-out-of-memory
TEST_CASE("heap block-local buffers that cannot be allocated are reported, not a crash") {
  // 512 MiB: more than any earlier test freed, so malloc must map new memory.
  CpuCompiled c = compileTl(kBigFragment, {{"R", "65536"}});
  REQUIRE(c.module);
  auto jit = driver::compileForCpu(*c.module, {}, *c.diags);
  REQUIRE(jit);
  const ir::PrimFunc& func = *c.module->funcs[0];
  auto args = driver::makeArguments(func, {}, 1, *c.diags);
  REQUIRE(args);
  // In a child limited to its current address space (the pool's threads do
  // not survive fork, so it runs the blocks itself).
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    tlc_cpu_set_num_threads(1);
    std::ifstream status("/proc/self/statm");
    long pages = 0;
    status >> pages;
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(4) << 20);
    setrlimit(RLIMIT_AS, &limit);
    driver::callCpuKernel(jit->kernel(func.name), func, *args);
    bool reported = driver::reportCpuFailure(*jit, func, *c.diags);
    bool right = reported && c.diags->hasKind(DiagKind::CpuOutOfMemory) &&
                 c.diags->diagnostics().back().message ==
                     "cannot allocate the 536870912 bytes of block-local buffers that `k` needs per thread";
    _exit(right ? 0 : 1);
  }
  int wstatus = 0;
  REQUIRE(waitpid(pid, &wstatus, 0) == pid);
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
}
