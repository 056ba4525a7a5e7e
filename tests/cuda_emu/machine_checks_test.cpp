// Each check of the emulator on a small kernel that trips it, and the clean
// version that does not.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>

#include "compiler/backends/cuda_emu/emulator.h"

using namespace tlc::cuda_emu;

namespace {

struct Run {
  LaunchResult r;
  std::vector<float> out;
};

// Runs `kernel` (signature (const float* in, float* out, int n)) on in[i] = i.
Run run(const std::string& src, unsigned blocks, unsigned threads, int n, size_t dynSmem = 0,
        const std::string& kernel = "k") {
  std::string err;
  auto m = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(m, err);
  std::vector<float> in(n), out(n, 0.f);
  std::iota(in.begin(), in.end(), 0.f);
  std::vector<KernelArg> args = {KernelArg::buffer("in", in.data(), in.size() * 4, false),
                                 KernelArg::buffer("out", out.data(), out.size() * 4, true),
                                 KernelArg::value("n", n)};
  LaunchConfig cfg;
  cfg.grid.x = blocks;
  cfg.block.x = threads;
  cfg.dynamicSharedBytes = dynSmem;
  Run res;
  res.r = m->launch(kernel, cfg, args);
  res.out = out;
  return res;
}

const char* kShiftGood = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  float v = s[(threadIdx.x + 1) % blockDim.x];
  if (i < n) out[i] = v;
}
)";

}  // namespace

TEST_CASE("a correct kernel runs clean and computes the right values") {
  Run r = run(kShiftGood, 2, 64, 100);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.out[0] == 1.f);
  CHECK(r.out[63] == 0.f);  // wraps within the block
  CHECK(r.out[64] == 65.f);
  CHECK(r.out[99] == 0.f);  // thread 35 of block 1 reads s[36], loaded from in[100]: masked to 0
}

TEST_CASE("missing barrier: shared-memory race") {
  std::string src = kShiftGood;
  src.replace(src.find("__syncthreads();"), 16, "");
  Run r = run(src, 1, 64, 64);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::SharedRace));
}

TEST_CASE("__syncwarp orders a warp, not the block") {
  const char* warpOnly = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncwarp();
  out[threadIdx.x] = s[threadIdx.x ^ 1];   // same warp: ordered by __syncwarp
}
)";
  Run r = run(warpOnly, 1, 64, 64);
  INFO(r.r.render());
  CHECK(r.r.clean());
  const char* crossWarp = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncwarp();
  out[threadIdx.x] = s[threadIdx.x ^ 32];  // other warp: needs __syncthreads
}
)";
  Run r2 = run(crossWarp, 1, 64, 64);
  INFO(r2.r.render());
  CHECK(r2.r.has(FindingKind::SharedRace));
}

TEST_CASE("out-of-bounds and misaligned global accesses") {
  const char* oob = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];          // no tail predicate
}
)";
  Run r = run(oob, 2, 64, 100);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::OutOfBounds));
  const char* mis = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  int i = threadIdx.x;
  if (4 * i + 5 <= n) *(float4*)(out + 4 * i + 1) = *(const float4*)(in + 4 * i);
}
)";
  Run r2 = run(mis, 1, 8, 64);
  INFO(r2.r.render());
  CHECK(r2.r.has(FindingKind::Misaligned));
}

TEST_CASE("writes to inputs, races between blocks, wild pointers") {
  const char* toInput = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  ((float*)in)[threadIdx.x] = 1.f;
}
)";
  CHECK(run(toInput, 1, 32, 32).r.has(FindingKind::WriteToReadOnly));
  const char* interBlock = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  out[threadIdx.x] = blockIdx.x;   // every block writes the same elements
}
)";
  CHECK(run(interBlock, 2, 32, 32).r.has(FindingKind::GlobalRace));
  const char* atomics = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  atomicAdd(&out[threadIdx.x % 4], 1.f);   // atomics do not race
}
)";
  Run ra = run(atomics, 3, 64, 4);
  INFO(ra.r.render());
  CHECK(ra.r.clean());
  CHECK(ra.out[0] == 48.f);
  const char* wild = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  float* p = out + (1 << 22);      // 16 MB past the allocation
  if (threadIdx.x == 0) out[0] = p[0];
}
)";
  Run rw = run(wild, 1, 32, 32);
  INFO(rw.r.render());
  CHECK((rw.r.has(FindingKind::WildAccess) || rw.r.has(FindingKind::Fault)));
}

TEST_CASE("barrier not reached by all threads, deadlocks, mismatched collectives") {
  const char* early = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[64];
  if (threadIdx.x >= 48) return;
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x - 16];
}
)";
  Run r = run(early, 1, 64, 64);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::BarrierNotReachedByAll));
  const char* shflExited = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  if (threadIdx.x % 2) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, in[threadIdx.x], 2);
}
)";
  Run r2 = run(shflExited, 1, 32, 32);
  INFO(r2.r.render());
  CHECK(r2.r.has(FindingKind::Deadlock));
  CHECK(!r2.r.completed);
  const char* mismatch = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  float v = in[threadIdx.x];
  if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
  else v = (float)__ballot_sync(0xffffffffu, v > 3.f);
  out[threadIdx.x] = v;
}
)";
  Run r3 = run(mismatch, 1, 32, 32);
  INFO(r3.r.render());
  CHECK(r3.r.has(FindingKind::CollectiveMismatch));
  const char* wrongBarrierCount = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  if (threadIdx.x < 32) __syncthreads();
  out[threadIdx.x] = 1.f;
}
)";
  Run r4 = run(wrongBarrierCount, 1, 64, 64);
  INFO(r4.r.render());
  CHECK(r4.r.has(FindingKind::BarrierNotReachedByAll));
}

TEST_CASE("cp.async data lands at the wait; early reads are in flight") {
  const char* good = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  extern __shared__ __align__(16) float buf[];
  int t = threadIdx.x;
  tlc_emu::cp_async(buf + 4 * t, in + 4 * t, 16, 16);
  tlc_emu::cp_async_commit();
  tlc_emu::cp_async_wait(0);
  __syncthreads();
  out[t] = buf[(4 * t + 4) % (4 * blockDim.x)];
}
)";
  Run r = run(good, 1, 16, 64, 256);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.out[0] == 4.f);
  std::string early = good;
  early.replace(early.find("tlc_emu::cp_async_wait(0);"), 26, "");
  Run r2 = run(early, 1, 16, 64, 256);
  INFO(r2.r.render());
  CHECK(r2.r.has(FindingKind::AsyncCopyInFlight));
  // Reading past the launch's dynamic shared memory.
  Run r3 = run(good, 1, 16, 64, 128);
  INFO(r3.r.render());
  CHECK(r3.r.has(FindingKind::OutOfBounds));
}

TEST_CASE("traps, faults and uninitialized shared memory") {
  const char* trap = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  assert(threadIdx.x < 16);
  out[threadIdx.x] = 1.f;
}
)";
  Run r = run(trap, 1, 32, 32);
  INFO(r.r.render());
  CHECK(r.r.has(FindingKind::Trap));
  const char* fault = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  int zero = n - 32;
  out[threadIdx.x] = 7 / zero;
}
)";
  Run r2 = run(fault, 1, 32, 32);
  INFO(r2.r.render());
  CHECK(r2.r.has(FindingKind::Fault));
  const char* uninit = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[64];
  if (threadIdx.x < 16) s[threadIdx.x] = 1.f;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
)";
  Run r3 = run(uninit, 1, 32, 32);
  INFO(r3.r.render());
  CHECK(r3.r.has(FindingKind::UninitializedSharedRead));
}

TEST_CASE("findings name the source line, through #line directives") {
  const char* src = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[64];
#line 42 "gemm.tl"
  s[threadIdx.x] = in[threadIdx.x];
#line 43 "gemm.tl"
  out[threadIdx.x] = s[63 - threadIdx.x];
}
)";
  Run r = run(src, 1, 64, 64);
  INFO(r.r.render());
  REQUIRE(r.r.has(FindingKind::SharedRace));
  bool named = false;
  for (auto& f : r.r.findings)
    if (f.kind == FindingKind::SharedRace && f.where.file == "gemm.tl" && f.where.line == 43 && f.other.line == 42)
      named = true;
  CHECK(named);
}

TEST_CASE("bank conflicts are counted") {
  const char* strided = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ float s[32 * 32];
  s[threadIdx.x * 32] = in[threadIdx.x];     // all lanes in bank 0
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x * 32];
}
)";
  Run r = run(strided, 1, 32, 32);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.r.has(FindingKind::BankConflict));
  CHECK(r.r.sharedWavefronts == 64);
  CHECK(r.r.idealSharedWavefronts == 2);
}

TEST_CASE("a 16-byte copy_vec is one access, into registers too; a misaligned one is a finding, not a fault") {
  // The host compiler splits a plain vector copy into the elements their uses
  // read; the emulator's copy_vec keeps it whole, as the GPU's ld.shared.v4.
  const char* src = R"(
#include "tlc_cuda.h"
extern "C" __global__ void k(const float* in, float* out, int n) {
  __shared__ __align__(16) float s[32 * 4 + 4];
  for (int i = threadIdx.x; i < 32 * 4; i += 32) s[i] = in[i];
  __syncthreads();
  __align__(16) float v[4];
  tlc::copy_vec<float, 4>(v, &s[4 * threadIdx.x + OFFSET]);
  out[threadIdx.x] = v[0] + v[1] + v[2] + v[3];
}
)";
  std::string aligned = std::string("#define OFFSET 0\n") + src;
  Run r = run(aligned, 1, 32, 128);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK_FALSE(r.r.has(FindingKind::BankConflict));
  CHECK(r.r.sharedWavefronts == 8);  // 4 word stores, and 4 phases of 8 lanes for the 16-byte loads
  CHECK(r.r.idealSharedWavefronts == 8);
  CHECK(r.out[1] == 4.f + 5.f + 6.f + 7.f);
  Run m = run(std::string("#define OFFSET 1\n") + src, 1, 32, 128);
  INFO(m.r.render());
  CHECK(m.r.has(FindingKind::Misaligned));
}

TEST_CASE("__syncthreads_count, _and and _or reduce over the block") {
  const char* src = R"(
extern "C" __global__ void k(const float* in, float* out, int n) {
  int c = __syncthreads_count(in[threadIdx.x] < 10.f);
  int a = __syncthreads_and(in[threadIdx.x] >= 0.f);
  int o = __syncthreads_or(in[threadIdx.x] > 1000.f);
  out[threadIdx.x] = c * 100 + a * 10 + o;
}
)";
  Run r = run(src, 1, 64, 64);
  INFO(r.r.render());
  CHECK(r.r.clean());
  CHECK(r.out[0] == 1010.f);
  CHECK(r.out[63] == 1010.f);
}
