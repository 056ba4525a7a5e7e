// A hand-written multistage mma.sync GEMM (tests/cuda_emu/data/gemm_multistage.cu)
// runs clean and correct in the emulator, and every planted bug is reported.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/backends/cuda_emu/emulator.h"
#include "runtime/cuda_emu/emu_float.h"
#include "tests/cuda_emu/gemm_reference.h"

using namespace tlc::cuda_emu;

namespace {

std::string readKernel() {
  std::ifstream f(std::string(TLC_SOURCE_DIR) + "/tests/cuda_emu/data/gemm_multistage.cu");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct GemmRun {
  LaunchResult result;
  double maxError = 0;  // vs the double-precision reference
  bool compiled = false;
};

GemmRun runGemm(const std::string& bug, int M, int N, int K) {
  GemmRun run;
  std::string src = (bug.empty() ? std::string() : "#define " + bug + " 1\n") + readKernel();
  std::string err;
  auto mod = EmulatedModule::compile(src, &err);
  if (!mod) {
    FAIL_CHECK(err);
    return run;
  }
  run.compiled = true;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> A((size_t)M * K), B((size_t)K * N);
  for (auto& x : A) x = tlc_emu_float::floatToHalf(dist(rng));
  for (auto& x : B) x = tlc_emu_float::floatToHalf(dist(rng));
  std::vector<float> C((size_t)M * N, 0.f);
  std::vector<KernelArg> args = {KernelArg::buffer("A", A.data(), A.size() * 2, false),
                                 KernelArg::buffer("B", B.data(), B.size() * 2, false),
                                 KernelArg::buffer("C", C.data(), C.size() * 4, true, true),
                                 KernelArg::value("M", M), KernelArg::value("N", N), KernelArg::value("K", K)};
  LaunchConfig cfg;
  cfg.grid = {(unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64), 1};
  cfg.block = {128, 1, 1};
  cfg.dynamicSharedBytes = 3 * (64 * 32 + 32 * 64) * 2;
  run.result = mod->launch("gemm_kernel", cfg, args);
  if (getenv("TLC_EMU_TEST_VERBOSE")) {
    std::string text = bug + ":\n" + run.result.render();
    MESSAGE(text);
  }
  run.maxError = tlc::test::maxGemmError(A, B, C, M, N, K);
  return run;
}

}  // namespace

TEST_CASE("the multistage mma.sync GEMM runs clean and matches the reference") {
  for (auto [M, N, K] : {std::tuple{64, 64, 32}, std::tuple{128, 64, 96}, std::tuple{72, 136, 40}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    GemmRun r = runGemm("", M, N, K);
    INFO(r.result.render());
    CHECK(r.result.clean());
    CHECK(r.maxError < 1e-3);
    CHECK(r.result.sharedInstructions > 0);
    // The swizzle makes ldmatrix and cp.async conflict-free.
    CHECK(r.result.sharedWavefronts == r.result.idealSharedWavefronts);
  }
}

TEST_CASE("planted bugs are reported") {
  struct Case {
    const char* bug;
    FindingKind expected;
    int M, N, K;
  };
  const Case cases[] = {
      {"BUG_NO_BARRIER", FindingKind::SharedRace, 64, 64, 96},
      {"BUG_SHORT_WAIT", FindingKind::AsyncCopyInFlight, 64, 64, 96},
      {"BUG_REFILL_STAGE", FindingKind::AsyncCopyInFlight, 64, 64, 96},
      {"BUG_NO_PREDICATE", FindingKind::OutOfBounds, 72, 64, 32},
      {"BUG_EPILOGUE_PREDICATE", FindingKind::OutOfBounds, 64, 72, 32},
      {"BUG_EARLY_EXIT", FindingKind::BarrierNotReachedByAll, 40, 64, 64},
  };
  for (const Case& c : cases) {
    CAPTURE(c.bug);
    GemmRun r = runGemm(c.bug, c.M, c.N, c.K);
    INFO(r.result.render());
    CHECK(r.result.has(c.expected));
    CHECK(r.result.errorCount() > 0);
  }
}

TEST_CASE("planted data-layout bugs give wrong results or bank conflicts") {
  {
    GemmRun r = runGemm("BUG_SWIZZLE_MISMATCH", 64, 64, 64);
    INFO(r.result.render());
    CHECK(r.maxError > 1e-2);
  }
  {
    GemmRun r = runGemm("BUG_FRAGMENT", 64, 64, 64);
    INFO(r.result.render());
    CHECK(r.maxError > 1e-2);
  }
  {
    GemmRun r = runGemm("BUG_NO_SWIZZLE", 64, 64, 64);
    INFO(r.result.render());
    CHECK(r.result.clean());
    CHECK(r.maxError < 1e-3);
    CHECK(r.result.has(FindingKind::BankConflict));
    CHECK(r.result.sharedWavefronts > r.result.idealSharedWavefronts);
  }
}
