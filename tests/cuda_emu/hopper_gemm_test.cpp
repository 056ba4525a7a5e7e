// A hand-written warp-specialized TMA + mbarrier + wgmma GEMM tile
// (tests/cuda_emu/data/gemm_wgmma_ws.cu) runs clean and correct in the
// emulator, and every planted bug is reported.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "runtime/cuda_emu/emu_float.h"
#include "tests/cuda_emu/gemm_reference.h"

using namespace tlc::cuda_emu;
namespace cu = tlc::cuda;

namespace {

std::string readKernel() {
  std::ifstream f(std::string(TLC_SOURCE_DIR) + "/tests/cuda_emu/data/gemm_wgmma_ws.cu");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

cu::TensorMapSpec map2d(const void* base, uint64_t inner, uint64_t outer, uint32_t boxInner, uint32_t boxOuter) {
  cu::TensorMapSpec s;
  s.dtype = cu::TmaDType::F16;
  s.elemBytes = 2;
  s.rank = 2;
  s.address = (uint64_t)base;
  s.dims[0] = inner;
  s.dims[1] = outer;
  s.strides[0] = 2;
  s.strides[1] = inner * 2;
  s.box[0] = boxInner;
  s.box[1] = boxOuter;
  s.swizzle = cu::TmaSwizzle::B128;
  return s;
}

struct GemmRun {
  LaunchResult result;
  double maxError = 0;
};

GemmRun runGemm(const std::string& bug, int M, int N, int K) {
  GemmRun run;
  std::string src = (bug.empty() ? std::string() : "#define " + bug + " 1\n") + readKernel();
  std::string err;
  auto mod = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(mod, err);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> A((size_t)M * K), B((size_t)K * N);
  for (auto& x : A) x = tlc_emu_float::floatToHalf(dist(rng));
  for (auto& x : B) x = tlc_emu_float::floatToHalf(dist(rng));
  std::vector<float> C((size_t)M * N, 0.f);
  unsigned char amap[128], bmap[128];
  REQUIRE(encodeTensorMap(map2d(A.data(), K, M, 64, 64), amap, &err));
  REQUIRE(encodeTensorMap(map2d(B.data(), N, K, 64, 64), bmap, &err));
  std::vector<KernelArg> args = {byValue("A_map", amap, 128), byValue("B_map", bmap, 128),
                                 KernelArg::buffer("C", C.data(), C.size() * 4, true, true), KernelArg::value("M", M),
                                 KernelArg::value("N", N), KernelArg::value("K", K)};
  LaunchConfig cfg;
  cfg.grid = {(unsigned)((N + 127) / 128), (unsigned)((M + 63) / 64), 1};
  cfg.block = {256, 1, 1};
  cfg.dynamicSharedBytes = 2 * (64 * 64 + 64 * 128) * 2;
  LaunchOptions opts;
  opts.timeoutSeconds = 120;
  run.result = mod->launch("ws_gemm", cfg, args, opts);
  if (getenv("TLC_EMU_TEST_VERBOSE")) {
    std::string text = bug + ":\n" + run.result.render();
    MESSAGE(text);
  }
  run.maxError = tlc::test::maxGemmError(A, B, C, M, N, K);
  return run;
}

bool mentionsLine(const LaunchResult& r, FindingKind k, const std::string& text) {
  for (auto& f : r.findings)
    if (f.kind == k && f.where.file.find("kernel.cu") != std::string::npos && f.where.line > 0 &&
        f.message.find(text) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE("warp-specialized wgmma gemm: clean and correct (divisible sizes)") {
  GemmRun r = runGemm("", 128, 256, 256);
  INFO(r.result.render());
  CHECK(r.result.clean());
  CHECK(r.result.findings.empty());
  CHECK(r.maxError < 1e-3);
}

TEST_CASE("warp-specialized wgmma gemm: clean and correct (tails zero-filled by the tensor copies)") {
  GemmRun r = runGemm("", 72, 200, 200);
  INFO(r.result.render());
  CHECK(r.result.clean());
  CHECK(r.maxError < 1e-3);
}

TEST_CASE("planted bug: consumer waits with the wrong parity") {
  GemmRun r = runGemm("BUG_WRONG_PARITY", 64, 128, 256);
  INFO(r.result.render());
  CHECK_FALSE(r.result.clean());
  CHECK((r.result.has(FindingKind::AsyncCopyInFlight) || r.result.has(FindingKind::SharedRace)));
}

TEST_CASE("planted bug: expect_tx announces fewer bytes than the copies deliver") {
  GemmRun r = runGemm("BUG_SHORT_TX", 64, 128, 256);
  INFO(r.result.render());
  CHECK(r.result.has(FindingKind::MbarrierTxMismatch));
  CHECK(r.result.has(FindingKind::Deadlock));
  CHECK(mentionsLine(r.result, FindingKind::Deadlock, "mbarrier wait"));
}

TEST_CASE("planted bug: producer refills a stage without waiting for its empty barrier") {
  GemmRun r = runGemm("BUG_NO_EMPTY_WAIT", 64, 128, 256);
  INFO(r.result.render());
  CHECK_FALSE(r.result.clean());
  CHECK((r.result.has(FindingKind::AsyncCopyInFlight) || r.result.has(FindingKind::WgmmaOperandOverwritten)));
}

TEST_CASE("planted bug: the epilogue reads the accumulators before the last wgmma.wait_group") {
  GemmRun r = runGemm("BUG_LAST_WAIT_MISSING", 64, 128, 256);
  INFO(r.result.render());
  // No memory is misused: the accumulators still hold the in-flight NaN.
  CHECK(r.result.clean());
  CHECK(std::isinf(r.maxError));
}
