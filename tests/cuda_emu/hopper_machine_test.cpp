// The emulator's Hopper checks on small kernels: mbarrier ordering and
// deadlocks, named barriers after a warpgroup exits, wgmma operands and
// accumulators overwritten (or accumulators read) before their wait, bad tensor maps, setmaxnreg, and the
// alignment of dynamic shared memory.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "compiler/backends/cuda_emu/emulator.h"

using namespace tlc::cuda_emu;

namespace {

struct Run {
  LaunchResult r;
  std::vector<float> out;
};

Run run(const std::string& body, unsigned threads, size_t dynSmem = 0, std::vector<KernelArg> extra = {},
        const std::string& params = "", const std::string& launchBounds = "") {
  std::string bounds = launchBounds.empty() ? "" : "__launch_bounds__(" + launchBounds + ") ";
  std::string src = "#include \"tlc_cuda.h\"\nextern \"C\" __global__ void " + bounds + "k(float* out" + params +
                    ") {\n" + body + "\n}\n";
  std::string err;
  auto m = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(m, err);
  std::vector<float> out(256, 0.f);
  std::vector<KernelArg> args = {KernelArg::buffer("out", out.data(), out.size() * 4, true)};
  for (auto& a : extra) args.push_back(a);
  LaunchConfig cfg;
  cfg.block.x = threads;
  cfg.dynamicSharedBytes = dynSmem;
  Run res;
  res.r = m->launch("k", cfg, args);
  res.out = out;
  return res;
}

bool hasWith(const LaunchResult& r, FindingKind k, const std::string& text) {
  for (auto& f : r.findings)
    if (f.kind == k && f.message.find(text) != std::string::npos && f.where.line > 0) return true;
  return false;
}

// Thread 32 writes, arrives; thread 0 waits (or not) and reads.
const char* kHandoff = R"(
  __shared__ tlc::u64 bar;
  __shared__ float data[4];
  if (threadIdx.x == 0) { tlc::mbar_init(&bar, 1); tlc::mbar_init_fence(); }
  __syncthreads();
  if (threadIdx.x == 32) { data[1] = 42.f; tlc::mbar_arrive(&bar); }
  if (threadIdx.x == 0) {
    WAIT
    out[0] = data[1];
  }
)";

std::string handoff(const std::string& wait) {
  std::string s = kHandoff;
  s.replace(s.find("WAIT"), 4, wait);
  return s;
}

}  // namespace

TEST_CASE("mbarrier: a wait orders the arriving thread's writes before the reader") {
  Run r = run(handoff("tlc::mbar_wait(&bar, 0);"), 64);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.out[0] == 42.f);
}

TEST_CASE("mbarrier: reading without the wait is a race") {
  Run r = run(handoff(""), 64);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::SharedRace));
}

TEST_CASE("mbarrier: waiting parity 1 on a fresh barrier returns at once and orders nothing") {
  Run r = run(handoff("tlc::mbar_wait(&bar, 1);"), 64);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::SharedRace));
}

TEST_CASE("mbarrier: a wait nobody completes is a deadlock at the wait's line") {
  Run r = run(R"(
  __shared__ tlc::u64 bar;
  if (threadIdx.x == 0) { tlc::mbar_init(&bar, 2); tlc::mbar_init_fence(); }
  __syncthreads();
  if (threadIdx.x == 0) tlc::mbar_arrive(&bar);
  tlc::mbar_wait(&bar, 0);
)",
              64);
  INFO(r.r.render());
  CHECK(hasWith(r.r, FindingKind::Deadlock, "mbarrier wait"));
  CHECK(r.r.findings.size() == 1);
  CHECK(r.r.findings[0].where.line == 8);  // the mbar_wait
}

TEST_CASE("mbarrier: use before the initialization is ordered, and uninitialized barriers") {
  Run r = run(R"(
  __shared__ tlc::u64 bar, other;
  if (threadIdx.x == 0) tlc::mbar_init(&bar, 1);
  if (threadIdx.x == 1) tlc::mbar_arrive(&bar);
  if (threadIdx.x == 2) tlc::mbar_arrive(&other);
)",
              32);
  INFO(r.r.render());
  CHECK(hasWith(r.r, FindingKind::MbarrierMisuse, "with no barrier in between"));
  CHECK(hasWith(r.r, FindingKind::MbarrierMisuse, "never initialized"));
}

TEST_CASE("named barriers over the consumers after the producer warpgroup exited") {
  Run r = run(R"(
  __shared__ float s[128];
  if (threadIdx.x >= 128) return;
  s[threadIdx.x] = threadIdx.x;
  tlc::named_barrier(1, 128);
  float v = s[(threadIdx.x + 1) % 128];
  tlc::named_barrier(1, 128);
  s[threadIdx.x] = v;
  tlc::named_barrier(1, 128);
  if (threadIdx.x == 0) out[0] = s[5];
)",
              256);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.out[0] == 6.f);
}

namespace {
// 128 threads fill A (64 x 16) and B (16 x 8) K-major without swizzle, run
// one wgmma m64n8k16 and write D; WRITE_EARLY overwrites A before the wait.
const char* kWgmma = R"(
  __shared__ __align__(128) __half A[64 * 16];
  __shared__ __align__(128) __half B[8 * 16];
  int t = threadIdx.x;
  // K-major, no swizzle: core matrix (8 rows x 8 k) of 128 contiguous bytes;
  // K-adjacent core matrices 128 B apart (LBO), M-adjacent 256 B (SBO).
  for (int i = t; i < 64 * 16; i += 128) {
    int m = i / 16, kk = i % 16;
    A[(m / 8) * 128 + (kk / 8) * 64 + (m % 8) * 8 + kk % 8] = __float2half((float)((m + kk) % 5));
  }
  if (t < 128) {
    int n = t / 16, kk = t % 16;
    B[(kk / 8) * 64 + n * 8 + kk % 8] = __float2half(kk == n ? 1.f : 0.f);
  }
  tlc::fence_proxy_async();
  __syncthreads();
  float d[4] = {0, 0, 0, 0}, early = 0;
  tlc::wgmma_fence();
  tlc::wgmma_m64n8k16<0, 0, 0>(d, tlc::smem_desc(A, 128, 256, 0), tlc::smem_desc(B, 128, 256, 0), 0);
  tlc::wgmma_commit();
  WRITE_EARLY
  tlc::wgmma_wait<0>();
  int w = t / 32, g = (t % 32) / 4, q = t % 4;
  if (g == 0 && w == 0) { out[2 * q] = d[0]; out[2 * q + 1] = d[1]; }
  if (t == 0) out[100] = early;
)";
std::string wgmmaKernel(const std::string& early) {
  std::string s = kWgmma;
  s.replace(s.find("WRITE_EARLY"), 11, early);
  return s;
}
}  // namespace

TEST_CASE("wgmma from shared memory: D = A * I (row 0) and a clean run") {
  Run r = run(wgmmaKernel(""), 128);
  INFO(r.r.render());
  CHECK(r.r.clean());
  for (int c = 0; c < 8; ++c) CHECK(r.out[c] == (float)(c % 5));  // A[0][c] = c % 5
}

TEST_CASE("wgmma: writing an operand before wgmma.wait_group retires it") {
  Run r = run(wgmmaKernel("if (t == 0) A[3] = __float2half(9.f);"), 128);
  INFO(r.r.render());
  CHECK(hasWith(r.r, FindingKind::WgmmaOperandOverwritten, "wait_group"));
}

TEST_CASE("wgmma: the accumulators hold their results only after wgmma.wait_group") {
  // Read before the wait: not the product (a NaN while the wgmma is in flight).
  Run r = run(wgmmaKernel("early = d[0];"), 128);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(std::isnan(r.out[100]));
  for (int c = 0; c < 8; ++c) CHECK(r.out[c] == (float)(c % 5));
  // Written before the wait: a finding at the wait, naming the wgmma.
  Run w = run(wgmmaKernel("d[1] = 3.f;"), 128);
  INFO(w.r.render());
  CHECK(hasWith(w.r, FindingKind::WgmmaOperandOverwritten, "accumulator register"));
}

TEST_CASE("wgmma: groups chained on one accumulator retire in order") {
  // Two groups accumulate A * I into d; wait<1> retires the first only, so
  // the registers still wait for the second; wait<0> gives both.
  std::string body = kWgmma;
  body.replace(body.find("WRITE_EARLY"), 11,
               "tlc::wgmma_fence();\n"
               "  tlc::wgmma_m64n8k16<0, 0, 1>(d, tlc::smem_desc(A, 128, 256, 0), tlc::smem_desc(B, 128, 256, 0), 1);\n"
               "  tlc::wgmma_commit();\n"
               "  tlc::wgmma_wait<1>();\n"
               "  early = d[0];");
  Run r = run(body, 128);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(std::isnan(r.out[100]));
  for (int c = 0; c < 8; ++c) CHECK(r.out[c] == 2.f * (float)(c % 5));
}

TEST_CASE("wgmma: a warpgroup with a missing thread deadlocks, mismatched shapes are reported") {
  Run r = run(R"(
  __shared__ __align__(128) __half A[64 * 16];
  float d[8] = {};
  if (threadIdx.x == 5) return;
  tlc::wgmma_fence();
)",
              128);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::Deadlock));
  Run m = run(R"(
  __shared__ __align__(128) __half A[64 * 16];
  for (int i = threadIdx.x; i < 64 * 16; i += 128) A[i] = __float2half(0.f);
  __syncthreads();
  float d[8] = {};
  tlc::u64 a = tlc::smem_desc(A, 128, 256, 0);
  if (threadIdx.x < 64) tlc::wgmma_m64n8k16<0, 0, 0>(d, a, a, 0);
  else tlc::wgmma_m64n16k16<0, 0, 0>(d, a, a, 0);
)",
                128);
  INFO(m.r.render());
  CHECK(m.r.has(FindingKind::CollectiveMismatch));
}

TEST_CASE("setmaxnreg: a register count outside the rules traps, a valid one runs") {
  CHECK(run("tlc::reg_alloc<240>(); tlc::reg_dealloc<24>();", 128).r.clean());
  Run r = run("tlc::reg_alloc<30>();", 128);
  CHECK(hasWith(r.r, FindingKind::Trap, "multiple of 8"));
}

TEST_CASE("setmaxnreg: consumers taking more registers than the producer released would wait forever") {
  // __launch_bounds__(384, 2): 80 registers per thread at launch. The
  // producer warpgroup's decrease to 56 releases 128 * 24; two consumer
  // warpgroups may then grow to 88 (2 * 128 * 8), not to 96 (2 * 128 * 16).
  const char* kSplit = "if (threadIdx.x >= 256) tlc::reg_dealloc<56>(); else tlc::reg_alloc<REGS>();";
  auto body = [&](const char* regs) {
    std::string b = kSplit;
    b.replace(b.find("REGS"), 4, regs);
    return b;
  };
  CHECK(run(body("88"), 384, 0, {}, "", "384, 2").r.clean());
  Run r = run(body("96"), 384, 0, {}, "", "384, 2");
  bool deadlock = false;
  for (auto& f : r.r.findings)
    deadlock |= f.kind == FindingKind::Deadlock && f.message.find("setmaxnreg.inc asks for 4096 more") == 0;
  CHECK(deadlock);
  // One block per SM: 168 at launch, enough released for 224.
  CHECK(run(body("224"), 384, 0, {}, "", "384, 1").r.clean());
  // Without launch bounds the count at launch is unknown: nothing to check.
  CHECK(run(body("96"), 384).r.clean());
  // A decrease above the current count goes the wrong way.
  Run up = run("tlc::reg_dealloc<200>();", 128, 0, {}, "", "128, 4");
  CHECK(hasWith(up.r, FindingKind::Trap, "goes the wrong way"));
}

TEST_CASE("a tensor copy with a map that is not one") {
  unsigned char zeros[128] = {};
  Run r = run(R"(
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ tlc::u64 bar;
  if (threadIdx.x == 0) { tlc::mbar_init(&bar, 1); tlc::mbar_init_fence(); }
  __syncthreads();
  if (threadIdx.x == 0) tlc::tma_load_2d(smem, &map, &bar, 0, 0);
)",
              32, 4096, {byValue("map", zeros, 128)}, ", const __grid_constant__ tlc::TensorMap map");
  INFO(r.r.render());
  CHECK(hasWith(r.r, FindingKind::BadTensorMap, "not a tensor map"));
}

TEST_CASE("dynamic shared memory starts on a 1024-byte boundary of the shared window") {
  Run r = run(R"(
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ float pad[3];
  if (threadIdx.x == 0) { pad[0] = 1; out[0] = (float)(__cvta_generic_to_shared(smem) % 1024); out[1] = pad[0]; }
)",
              32, 2048);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.out[0] == 0.f);
}
