// `tlc build --target=cpu` output: a shared library whose kernel a host
// program loads with dlopen and calls through the documented C ABI.
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".so")).string();
}

}  // namespace

TEST_CASE("the gemm example builds into a .so that dlopen loads and runs") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl",
                                {{"M", "257"}, {"N", "200"}, {"K", "130"}, {"dtype", "float32"}});
  INFO(c.rendered());
  REQUIRE(c.module);
  std::string so = tempPath("tlc-gemm");
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(driver::buildForCpu(*c.module, so, {}, *c.diags) == 0);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("gemm.tl -> .so in " << seconds * 1e3 << " ms");
  CHECK(seconds < 5.0);  // generous for loaded CI machines; measured well under a second

  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO(dlerror());
  REQUIRE(lib != nullptr);
  auto fn = reinterpret_cast<cpu::CpuKernelFn>(dlsym(lib, cpu::cpuKernelSymbol("gemm").c_str()));
  REQUIRE(reinterpret_cast<void*>(fn) != nullptr);

  const ir::PrimFunc& func = *c.module->funcs[0];
  auto args = driver::makeArguments(func, {}, 7, *c.diags);
  REQUIRE(args);
  driver::RunArgs oracle = driver::cloneArguments(*args);
  REQUIRE(driver::runOracle(func, oracle, *c.diags));
  driver::callCpuKernel(fn, func, *args);
  std::ostringstream out;
  bool pass = driver::printSummary(out, func, *args, &oracle, "cpu-so", 7);
  INFO(out.str());
  CHECK(pass);
  dlclose(lib);
  std::filesystem::remove(so);
}

TEST_CASE("a kernel with dynamic dimensions takes them through shape_vars") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl", {{"dtype", "float32"}});
  REQUIRE(c.module);
  const ir::PrimFunc& func = *c.module->funcs[0];
  REQUIRE(func.shapeVars.size() == 2);
  std::string so = tempPath("tlc-add");
  REQUIRE(driver::buildForCpu(*c.module, so, {}, *c.diags) == 0);
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto fn = reinterpret_cast<cpu::CpuKernelFn>(dlsym(lib, cpu::cpuKernelSymbol("elementwise_add").c_str()));
  REQUIRE(reinterpret_cast<void*>(fn) != nullptr);
  // Plain arrays, as a C host would pass them.
  const int64_t M = 45, N = 70;
  std::vector<float> A(M * N), B(M * N), C(M * N, -1.0f);
  for (int64_t i = 0; i < M * N; ++i) {
    A[i] = float(i % 17) * 0.5f;
    B[i] = float(i % 5) - 2.0f;
  }
  void* argv[] = {A.data(), B.data(), C.data()};
  int64_t dims[2] = {0, 0};
  for (size_t j = 0; j < 2; ++j) dims[j] = func.shapeVars[j]->name == "M" ? M : N;
  fn(argv, dims);
  int64_t wrong = 0;
  for (int64_t i = 0; i < M * N; ++i)
    if (C[i] != A[i] + B[i]) ++wrong;
  CHECK(wrong == 0);
  dlclose(lib);
  std::filesystem::remove(so);
}

TEST_CASE("bad targets and unwritable outputs are reported, not crashes") {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl", {{"M", "64"}, {"N", "64"}});
  REQUIRE(c.module);
  driver::CpuOptions bad;
  bad.cpu = "no-such-cpu";
  // A command-line error (printed, exit code 2) for the driver...
  CHECK(driver::buildForCpu(*c.module, tempPath("tlc-bad"), bad, *c.diags) == 2);
  // ...and a diagnostic for the library entry point.
  // expected-error: cpu-invalid-target
  CHECK(driver::compileForCpu(*c.module, bad, *c.diags) == nullptr);
  CHECK(c.diags->hasKind(DiagKind::CpuInvalidTarget));
  // expected-error: cpu-build-failed
  CHECK(driver::buildForCpu(*c.module, "/nonexistent-dir/k.so", {}, *c.diags) == 1);
  CHECK(c.diags->hasKind(DiagKind::CpuBuildFailed));
  for (const Diagnostic& d : c.diags->diagnostics()) CHECK(d.loc.known());
}
