// `tlc run --target=cpu` through the kernel cache: the first compile builds
// and stores the shared object, the second is answered from the cache (no
// LLVM), a changed binding misses, and both give working kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "compiler/driver/cpu_cache.h"
#include "tests/runtime/build_helpers.h"

using namespace tlc;

namespace {
// Runs the elementwise-add kernel (M x N float32) and checks C = A + B.
bool addWorks(cpu::CpuJitModule& jit, int64_t M, int64_t N) {
  cpu::CpuKernelFn fn = jit.kernel("elementwise_add");
  if (!fn) return false;
  std::vector<float> A(M * N), B(M * N), C(M * N, 0);
  for (int64_t i = 0; i < M * N; ++i) A[i] = float(i % 7), B[i] = float(i % 5) * 0.5f;
  void* args[] = {A.data(), B.data(), C.data()};
  int64_t dims[] = {M, N};
  fn(args, dims);
  for (int64_t i = 0; i < M * N; ++i)
    if (std::fabs(C[i] - (A[i] + B[i])) > 1e-6f) return false;
  return true;
}
}  // namespace

TEST_CASE("CPU kernels through the cache: miss, hit, miss on a changed binding") {
  auto dir = test::scratchDir("cpu-cache");
  driver::KernelCache cache(dir.string());
  cpu::CpuOptions options;
  for (std::string block : {"32", "32", "16"}) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto m = test::compileTl(sources, diags, "examples/elementwise_add/add.tl", {"dtype=float32", "block_M=" + block});
    REQUIRE(m);
    bool hit = true;
    auto jit = driver::compileForCpuCached(*m, options, diags, cache, &hit);
    INFO(diags.renderAll());
    REQUIRE(jit);
    static int call = 0;
    ++call;
    CHECK(hit == (call == 2));
    CHECK(addWorks(*jit, 45, 70));
  }
  driver::KernelCache off(dir.string(), false);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = test::compileTl(sources, diags, "examples/elementwise_add/add.tl", {"dtype=float32"});
  REQUIRE(m);
  bool hit = true;
  auto jit = driver::compileForCpuCached(*m, options, diags, off, &hit);
  REQUIRE(jit);
  CHECK(!hit);
  CHECK(addWorks(*jit, 3, 200));
}
