// --cpu / --features are checked against what LLVM's target for this host
// knows before a TargetMachine exists: unknown names get the valid choices
// and a close name, and subtargets LLVM cannot generate code for (a 32-bit
// CPU, SSE or SSE2 off on x86-64) are refused instead of aborting in LLVM.
#include <doctest/doctest.h>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

std::string problem(const std::string& cpu, const std::string& features) {
  cpu::CpuOptions o;
  o.cpu = cpu;
  o.features = features;
  return cpu::checkCpuOptions(o);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the host's CPU and valid names and features are accepted") {
  CHECK(problem("", "") == "");
  CHECK(problem("native", "") == "");
  CHECK(problem("x86-64-v3", "") == "");
  CHECK(problem("", "+avx2,-avx512f") == "");
  CHECK(problem("", "avx2") == "");
  CHECK(problem("znver4", "-avx512f,") == "");
}

TEST_CASE("unknown CPUs and features name the valid choices and a close one") {
  std::string cpu = problem("znver9", "");
  INFO(cpu);
  CHECK(contains(cpu, "unknown CPU `--cpu=znver9`"));
  CHECK(contains(cpu, "did you mean `znver"));
  CHECK(contains(cpu, "x86-64-v3"));
  CHECK_FALSE(contains(cpu, " i386,"));  // only CPUs that can run x86-64 code are offered

  std::string feature = problem("", "+avx2,-avx512ff");
  INFO(feature);
  CHECK(contains(feature, "unknown CPU feature `avx512ff`"));
  CHECK(contains(feature, "did you mean `avx512f`?"));
  CHECK(contains(feature, "fma"));
  CHECK(contains(problem("", "+nothing-like-this-at-all"), "the features LLVM knows"));
}

TEST_CASE("subtargets LLVM cannot generate x86-64 code for are refused") {
  std::string i386 = problem("i386", "");
  INFO(i386);
  CHECK(contains(i386, "`--cpu=i386` cannot be used"));
  CHECK(contains(i386, "cannot run 64-bit x86 code"));
  for (const char* f : {"-sse", "-sse2", "+avx2,-sse", "-64bit"}) {
    std::string p = problem("", f);
    INFO(f, " ", p);
    CHECK(contains(p, "leaves a CPU LLVM cannot generate code for"));
  }
  CHECK(contains(problem("", "-sse"), "needs SSE and SSE2"));
  CHECK(contains(problem("x86-64", "-sse2"), "needs SSE and SSE2"));
}

TEST_CASE("every entry point refuses bad options instead of crashing") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl", {{"M", "64"}, {"N", "64"}});
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  REQUIRE(lowered);
  cpu::CpuOptions bad;
  bad.features = "-sse";
  std::string error;
  CHECK(cpu::jitCompile(*lowered, bad, &error) == nullptr);
  CHECK(contains(error, "needs SSE and SSE2"));
  CHECK(contains(cpu::emitLLVMText(*lowered, bad, true), "; error: "));
  CHECK(contains(cpu::emitAssembly(*lowered, bad), "# error: "));
  CHECK(driver::compileForCpu(*c.module, bad, *c.diags) == nullptr);
  CHECK(c.diags->hasKind(DiagKind::CpuInvalidTarget));
}
