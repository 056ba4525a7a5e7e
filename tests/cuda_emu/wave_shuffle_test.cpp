// Shuffles of a whole 64-lane wavefront (HIP C): isa::waveShfl against
// hand-computed sources; DPP moves and swizzles (tlc_lane_dpp,
// tlc_lane_swizzle) against hand-computed sources, and the group reductions
// whose short steps use them; and the emulated machine running HIP C whose
// width-64 shuffles are collectives of the wavefront: a 64-lane reduction
// (tlc::group_allreduce<64>, HIP's __shfl_xor) is exact for every lane of
// two wavefronts; the planted bug of a reduction without its distance-32
// step leaves each half with its own sum; a width-64 shuffle that part of
// a wavefront never reaches, or that meets another instruction, is a
// finding; a block that is not whole wavefronts has only the lanes that
// exist; CUDA C keeps widths up to 32.
#include <doctest/doctest.h>

#include <random>
#include <utility>
#include <vector>

#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/cuda_emu/isa.h"

using namespace tlc::cuda_emu;

namespace {

struct WaveShuffle {
  uint32_t value[64], out[64];
  int arg[64], src[64];
  bool valid[64];
  explicit WaveShuffle(int a) {
    for (int l = 0; l < 64; ++l) value[l] = 1000 + l, arg[l] = a;
  }
  void run(int mode, int width, uint64_t active = ~0ull) {
    isa::waveShfl(mode, active, value, arg, width, out, valid, src);
  }
};

std::unique_ptr<EmulatedModule> compile(const std::string& src) {
  std::string err;
  auto m = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(m, err);
  return m;
}

// Kernel `k(const int* in, int* out)` of HIP C: out[t] = BODY's `v`, from v = in[t].
std::string hipKernel(const std::string& body) {
  return "#include \"tlc_hip.h\"\n"
         "extern \"C\" __global__ void k(const int* in, int* out) {\n"
         "  const int t = threadIdx.x;\n"
         "  int v = in[t];\n"
         "  " + body + "\n"
         "  out[t] = v;\n"
         "}\n";
}

struct Run {
  LaunchResult r;
  std::vector<int> in, out;
};

// Random non-zero inputs, one per thread.
Run launch(EmulatedModule& m, unsigned threads) {
  Run run;
  std::mt19937 rng(threads);
  std::uniform_int_distribution<int> d(1, 1000);
  for (unsigned t = 0; t < threads; ++t) run.in.push_back(d(rng) * (t % 3 == 0 ? -1 : 1));
  run.out.assign(threads, 0);
  std::vector<KernelArg> args = {KernelArg::buffer("in", run.in.data(), threads * 4, false),
                                 KernelArg::buffer("out", run.out.data(), threads * 4, true)};
  LaunchConfig cfg;
  cfg.block.x = threads;
  run.r = m.launch("k", cfg, args);
  return run;
}

// The sum of the `lanes` consecutive threads from t's group.
int groupSum(const std::vector<int>& in, unsigned t, unsigned lanes) {
  int s = 0;
  for (unsigned u = t / lanes * lanes; u < t / lanes * lanes + lanes && u < in.size(); ++u) s += in[u];
  return s;
}

bool mentions(const LaunchResult& r, FindingKind k, const std::string& text) {
  return r.has(k) && r.render().find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("wavefront shuffles: sources by hand, the halves crossed at distance 32") {
  WaveShuffle x32(32);
  x32.run(TLC_EMU_SHFL_XOR, 64);
  CHECK(x32.out[5] == 1037);  // lane 5 reads lane 37 of the other half
  CHECK(x32.out[40] == 1008);
  CHECK(x32.valid[63]);
  x32.run(TLC_EMU_SHFL_XOR, 32);  // segments of 32 lanes: distance 32 leaves them, each keeps its value
  CHECK(x32.out[5] == 1005);
  CHECK(!x32.valid[5]);

  WaveShuffle x1(1);
  x1.run(TLC_EMU_SHFL_XOR, 64);
  CHECK(x1.out[33] == 1032);
  CHECK(x1.out[62] == 1063);

  WaveShuffle idx(40);
  idx.run(TLC_EMU_SHFL_IDX, 64);
  CHECK(idx.out[3] == 1040);
  CHECK(idx.out[60] == 1040);
  idx.run(TLC_EMU_SHFL_IDX, 32);  // lane 40 & 31 = 8 of the caller's half
  CHECK(idx.out[3] == 1008);
  CHECK(idx.out[50] == 1040);

  WaveShuffle down(16);
  down.run(TLC_EMU_SHFL_DOWN, 64);
  CHECK(down.out[40] == 1056);
  CHECK(down.out[20] == 1036);  // crosses into the upper half
  CHECK(down.out[50] == 1050);  // 66 is past the wavefront: its own value
  CHECK(!down.valid[50]);

  WaveShuffle up(32);
  up.run(TLC_EMU_SHFL_UP, 64);
  CHECK(up.out[45] == 1013);
  CHECK(up.out[10] == 1010);
  CHECK(!up.valid[10]);

  // A wavefront of 48 lanes (a block of 112 threads): lane 20 reads lane 52, which does not exist.
  x32.run(TLC_EMU_SHFL_XOR, 64, (1ull << 48) - 1);
  CHECK(x32.src[20] == 52);
  CHECK(!x32.valid[20]);
  CHECK(x32.out[20] == 1020);
  CHECK(x32.out[40] == 1008);
  CHECK(x32.valid[40]);
}

TEST_CASE("a 64-lane reduction in HIP C sums each whole wavefront") {
  for (const char* body : {"v = tlc::group_allreduce<64>(v, tlc::SumOp());",
                           "for (int s = 32; s >= 1; s >>= 1) v += __shfl_xor(v, s);",
                           "for (int s = 1; s < 64; s <<= 1) v += tlc::shfl_xor(v, s, 64);"}) {
    INFO(body);
    auto m = compile(hipKernel(body));
    Run run = launch(*m, 128);
    REQUIRE_MESSAGE(run.r.clean(), run.r.render());
    for (unsigned t = 0; t < 128; ++t) CHECK(run.out[t] == groupSum(run.in, t, 64));
    CHECK(groupSum(run.in, 0, 64) != groupSum(run.in, 64, 64));  // the two wavefronts differ
  }
}

TEST_CASE("DPP moves and swizzles in HIP C read the lanes their control words name") {
  // The source lane of lane l, by hand: quad_perm [1,0,3,2] and [2,3,0,1]
  // (xor 1, xor 2), row_half_mirror (7 - i within 8), row_mirror (15 - i
  // within 16), and quad_perm [3,3,0,1] (lanes 0 and 1 of a quad both read lane 3).
  struct Move {
    const char* ctrl;
    int (*src)(int);
  };
  const Move moves[] = {{"0xB1", [](int l) { return l ^ 1; }},
                        {"0x4E", [](int l) { return l ^ 2; }},
                        {"0x141", [](int l) { return (l & ~7) | (7 - (l & 7)); }},
                        {"0x140", [](int l) { return (l & ~15) | (15 - (l & 15)); }},
                        {"0x4F", [](int l) { return (l & ~3) | (0x4F >> (2 * (l & 3)) & 3); }}};
  for (const Move& mv : moves) {
    INFO(mv.ctrl);
    auto m = compile(hipKernel(std::string("v = tlc_lane_dpp<") + mv.ctrl + ">(v);"));
    Run run = launch(*m, 128);
    REQUIRE_MESSAGE(run.r.clean(), run.r.render());
    for (int t = 0; t < 128; ++t) CHECK(run.out[t] == run.in[t / 64 * 64 + mv.src(t % 64)]);
  }
  CHECK((0x4F >> 0 & 3) == 3);  // lane 0 of a quad reads lane 3
  // ds_swizzle's bit mode within each 32 lanes: xor 16 (0x401F), and
  // and 0x1C | or 1 (lane i reads (i & 28) | 1: 0x3C), by hand.
  for (auto [pattern, src] : std::vector<std::pair<const char*, int (*)(int)>>{
           {"0x401F", [](int l) { return l ^ 16; }}, {"0x3C", [](int l) { return (l & ~3) | 1; }}}) {
    INFO(pattern);
    auto m = compile(hipKernel(std::string("v = tlc_lane_swizzle<") + pattern + ">(v);"));
    Run run = launch(*m, 128);
    REQUIRE_MESSAGE(run.r.clean(), run.r.render());
    for (int t = 0; t < 128; ++t) CHECK(run.out[t] == run.in[t / 32 * 32 + src(t % 32)]);
  }
}

TEST_CASE("group reductions of 2 to 64 lanes in HIP C, their short steps by DPP, sum each group") {
  for (int group : {2, 4, 8, 16, 32, 64}) {
    INFO(group);
    auto m = compile(hipKernel("v = tlc::group_allreduce<" + std::to_string(group) + ">(v, tlc::SumOp());"));
    Run run = launch(*m, 128);
    REQUIRE_MESSAGE(run.r.clean(), run.r.render());
    for (unsigned t = 0; t < 128; ++t) CHECK(run.out[t] == groupSum(run.in, t, group));
  }
}

TEST_CASE("a planted bug: a wave64 reduction without its distance-32 step sums only each half") {
  auto m = compile(hipKernel("for (int s = 16; s >= 1; s >>= 1) v += __shfl_xor(v, s);"));
  Run run = launch(*m, 128);
  REQUIRE_MESSAGE(run.r.clean(), run.r.render());
  int wrong = 0;
  for (unsigned t = 0; t < 128; ++t) {
    CHECK(run.out[t] == groupSum(run.in, t, 32));
    wrong += run.out[t] != groupSum(run.in, t, 64);
  }
  CHECK(wrong == 128);  // no lane holds its wavefront's sum
}

TEST_CASE("a width-64 shuffle that its wavefront cannot complete is a finding") {
  SUBCASE("the upper half exits before the shuffle") {
    auto m = compile(hipKernel("if (t % 64 >= 32) return;\n  v += __shfl_xor(v, 32);"));
    Run run = launch(*m, 64);
    CHECK(!run.r.completed);
    CHECK((mentions(run.r, FindingKind::Deadlock, "exited")));
  }
  SUBCASE("only the lower half shuffles; the upper half waits at a barrier") {
    auto m = compile(hipKernel("if (t < 32) v += __shfl_xor(v, 32);\n  __syncthreads();"));
    Run run = launch(*m, 64);
    CHECK(!run.r.completed);
    CHECK(mentions(run.r, FindingKind::Deadlock, "__shfl_xor of width 64 (a 64-lane wavefront collective)"));
  }
  SUBCASE("the halves run different shuffles") {
    auto m = compile(hipKernel("if (t < 32) v += __shfl_xor(v, 32); else v += __shfl_down(v, 1);"));
    Run run = launch(*m, 64);
    CHECK(!run.r.completed);
    CHECK(mentions(run.r, FindingKind::CollectiveMismatch, "__shfl_down of width 64"));
  }
  SUBCASE("one half shuffles while the other runs an MFMA") {
    auto m = compile(hipKernel(
        "float acc[16] = {};\n  __half ab[4] = {};\n"
        "  if (t < 32) v += __shfl_xor(v, 32); else tlc::mfma_32x32x8_f16(acc, ab, ab);"));
    Run run = launch(*m, 64);
    CHECK(!run.r.completed);
    CHECK(run.r.has(FindingKind::CollectiveMismatch));
  }
  SUBCASE("a 64-lane shuffle inside one half's warp collective never completes") {
    auto m = compile(hipKernel("if (t < 16) v += __shfl_xor(v, 32); else v += __shfl_xor(v, 1, 32);"));
    Run run = launch(*m, 64);
    CHECK(!run.r.completed);
    CHECK(run.r.has(FindingKind::Deadlock));
  }
}

TEST_CASE("a block that is not whole wavefronts shuffles the lanes that exist") {
  SUBCASE("within the 32 lanes of the last wavefront") {
    auto m = compile(hipKernel("v = tlc::group_allreduce<32>(v, tlc::SumOp());\n  v += __shfl_xor(v, 1);"));
    Run run = launch(*m, 96);
    REQUIRE_MESSAGE(run.r.clean(), run.r.render());
    for (unsigned t = 0; t < 96; ++t) CHECK(run.out[t] == 2 * groupSum(run.in, t, 32));
  }
  SUBCASE("distance 32 in the last wavefront reads lanes that do not exist") {
    auto m = compile(hipKernel("v += __shfl_xor(v, 32);"));
    Run run = launch(*m, 96);
    CHECK(run.r.completed);
    CHECK(mentions(run.r, FindingKind::ShuffleFromInactiveLane, "which has only 32 threads"));
    CHECK(run.out[5] == run.in[5] + run.in[37]);
  }
}

TEST_CASE("CUDA C keeps shuffles within a 32-lane warp") {
  auto m = compile(
      "extern \"C\" __global__ void k(const int* in, int* out) {\n"
      "  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, in[threadIdx.x], 32, 64);\n"
      "}\n");
  Run run = launch(*m, 64);
  CHECK(mentions(run.r, FindingKind::Trap, "shuffle width must be a power of two in [1, 32]"));
}
