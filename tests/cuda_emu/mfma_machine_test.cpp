// MFMA as a 64-lane wavefront collective of the emulated machine: HIP C
// calling tlc_hip.h's tlc::mfma_* helpers runs in the emulator, the two
// 32-lane halves of each wavefront combine into one instruction (checked
// against a plain matrix product, two wavefronts with different data), and
// wavefronts that cannot complete are findings: too few threads, a lane that
// exited, lanes in different instructions, a half waiting at a barrier.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/cuda_emu/isa_mfma.h"
#include "runtime/cuda_emu/emu_float.h"

using namespace tlc::cuda_emu;
namespace fl = tlc_emu_float;

namespace {

struct Helper {
  isa::MfmaKind kind;
  const char* name;
  const char* type;
};
const Helper kHelpers[] = {
    {isa::MfmaKind::F32_32x32x8_F16, "tlc::mfma_32x32x8_f16", "__half"},
    {isa::MfmaKind::F32_16x16x16_F16, "tlc::mfma_16x16x16_f16", "__half"},
    {isa::MfmaKind::F32_32x32x8_BF16, "tlc::mfma_32x32x8_bf16", "tlc_bfloat16"},
    {isa::MfmaKind::F32_16x16x16_BF16, "tlc::mfma_16x16x16_bf16", "tlc_bfloat16"},
};

// Each thread loads its 4 A and 4 B elements and its accumulator from
// per-lane arrays, runs the helper (BEFORE/AFTER: code around it), and
// stores the accumulator back.
std::string kernel(const Helper& h, const std::string& before = "", const std::string& after = "") {
  std::string T = h.type;
  return "#include \"tlc_hip.h\"\n"
         "extern \"C\" __global__ void k(const " + T + "* a, const " + T + "* b, float* d) {\n"
         "  const int t = threadIdx.x;\n"
         "  " + T + " av[4], bv[4];\n"
         "  float acc[16];\n"
         "  for (int v = 0; v < 4; ++v) { av[v] = a[t * 4 + v]; bv[v] = b[t * 4 + v]; }\n"
         "  for (int r = 0; r < 16; ++r) acc[r] = d[t * 16 + r];\n"
         "  " + before + "\n"
         "  " + std::string(h.name) + "(acc, av, bv);\n"
         "  " + after + "\n"
         "  for (int r = 0; r < 16; ++r) d[t * 16 + r] = acc[r];\n"
         "}\n";
}

std::unique_ptr<EmulatedModule> compile(const std::string& src) {
  std::string err;
  auto m = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(m, err);
  return m;
}

struct Launch {
  LaunchResult r;
  std::vector<float> d;
};

Launch launch(EmulatedModule& m, unsigned threads, std::vector<uint16_t>& a, std::vector<uint16_t>& b,
              std::vector<float> d) {
  std::vector<KernelArg> args = {KernelArg::buffer("a", a.data(), a.size() * 2, false),
                                 KernelArg::buffer("b", b.data(), b.size() * 2, false),
                                 KernelArg::buffer("d", d.data(), d.size() * 4, true)};
  LaunchConfig cfg;
  cfg.block.x = threads;
  Launch out;
  out.r = m.launch("k", cfg, args);
  out.d = std::move(d);
  return out;
}

// Every wavefront's D (per lane, 16 registers a lane) against C + A * B.
template <class Acc, class Elem>
void checkProduct(isa::MfmaKind kind, const std::vector<Acc>& d, const std::vector<std::vector<Elem>>& A,
                  const std::vector<std::vector<Elem>>& B, const std::vector<std::vector<Elem>>& C) {
  const isa::MfmaInfo& info = isa::mfmaInfo(kind);
  for (size_t w = 0; w < A.size(); ++w)
    for (int l = 0; l < 64; ++l)
      for (int r = 0; r < info.accRegs; ++r) {
        isa::MfmaCoord p = isa::mfmaDElement(kind, l, r);
        Elem want = C[w][p.row * info.n + p.col];
        for (int k = 0; k < info.k; ++k) want += A[w][p.row * info.k + k] * B[w][k * info.n + p.col];
        CAPTURE(w);
        CAPTURE(l);
        CAPTURE(r);
        CHECK(d[(w * 64 + l) * 16 + r] == want);
      }
}

// A kernel in which each thread passes 8 operand elements of type T
// (int8, float8) and 16 accumulators of type ACC to helper `name`.
std::string eightElementKernel(const std::string& name, const std::string& T, const std::string& acc) {
  return "#include \"tlc_hip.h\"\n"
         "extern \"C\" __global__ void k(const " + T + "* a, const " + T + "* b, " + acc + "* d) {\n"
         "  const int t = threadIdx.x;\n"
         "  " + T + " av[8], bv[8];\n"
         "  " + acc + " acc[16];\n"
         "  for (int v = 0; v < 8; ++v) { av[v] = a[t * 8 + v]; bv[v] = b[t * 8 + v]; }\n"
         "  for (int r = 0; r < 16; ++r) acc[r] = d[t * 16 + r];\n"
         "  " + name + "(acc, av, bv);\n"
         "  for (int r = 0; r < 16; ++r) d[t * 16 + r] = acc[r];\n"
         "}\n";
}

template <class Acc>
LaunchResult launchBytes(EmulatedModule& m, unsigned threads, std::vector<uint8_t>& a, std::vector<uint8_t>& b,
                         std::vector<Acc>& d) {
  std::vector<KernelArg> args = {KernelArg::buffer("a", a.data(), a.size(), false),
                                 KernelArg::buffer("b", b.data(), b.size(), false),
                                 KernelArg::buffer("d", d.data(), d.size() * sizeof(Acc), true)};
  LaunchConfig cfg;
  cfg.block.x = threads;
  return m.launch("k", cfg, args);
}

bool hasWith(const LaunchResult& r, FindingKind k, const std::string& text) {
  for (auto& f : r.findings)
    if (f.kind == k && f.message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("an MFMA in HIP C combines both halves of each wavefront into one product") {
  for (const Helper& h : kHelpers) {
    CAPTURE(h.name);
    const isa::MfmaInfo& info = isa::mfmaInfo(h.kind);
    auto m = compile(kernel(h));
    const int waves = 2, threads = 64 * waves;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> small(-4, 4);
    // Small integers: every product and sum is exact in float32.
    std::vector<std::vector<float>> A(waves, std::vector<float>(info.m * info.k)),
        B(waves, std::vector<float>(info.k * info.n)), C(waves, std::vector<float>(info.m * info.n));
    std::vector<uint16_t> a(threads * 4), b(threads * 4);
    std::vector<float> d(threads * 16, 0.f);
    auto bits = [&](float x) { return info.bf16 ? fl::floatToBf16(x) : fl::floatToHalf(x); };
    for (int w = 0; w < waves; ++w) {
      for (auto* mat : {&A[w], &B[w], &C[w]})
        for (float& x : *mat) x = (float)small(rng);
      for (int l = 0; l < 64; ++l) {
        for (int v = 0; v < 4; ++v) {
          isa::MfmaCoord pa = isa::mfmaAElement(h.kind, l, v), pb = isa::mfmaBElement(h.kind, l, v);
          a[(w * 64 + l) * 4 + v] = bits(A[w][pa.row * info.k + pa.col]);
          b[(w * 64 + l) * 4 + v] = bits(B[w][pb.row * info.n + pb.col]);
        }
        for (int r = 0; r < info.accRegs; ++r) {
          isa::MfmaCoord p = isa::mfmaDElement(h.kind, l, r);
          d[(w * 64 + l) * 16 + r] = C[w][p.row * info.n + p.col];
        }
      }
    }
    Launch run = launch(*m, threads, a, b, d);
    INFO(run.r.render());
    REQUIRE(run.r.clean());
    checkProduct(h.kind, run.d, A, B, C);
  }
}

TEST_CASE("the int8 MFMAs in HIP C combine both halves of each wavefront into one int32 product") {
  const Helper int8Helpers[] = {
      {isa::MfmaKind::I32_32x32x8_I8, "tlc::mfma_32x32x8_i8", "tlc::i8"},
      {isa::MfmaKind::I32_16x16x16_I8, "tlc::mfma_16x16x16_i8", "tlc::i8"},
      {isa::MfmaKind::I32_32x32x16_I8, "tlc::mfma_32x32x16_i8", "tlc::i8"},
      {isa::MfmaKind::I32_16x16x32_I8, "tlc::mfma_16x16x32_i8", "tlc::i8"},
  };
  for (const Helper& h : int8Helpers) {
    CAPTURE(h.name);
    const isa::MfmaInfo& info = isa::mfmaInfo(h.kind);
    const int E = info.elems, waves = 2, threads = 64 * waves;
    auto m = compile(eightElementKernel(h.name, h.type, "int"));
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> any(-128, 127);
    std::vector<std::vector<int>> A(waves, std::vector<int>(info.m * info.k)), B(waves, std::vector<int>(info.k * info.n)),
        C(waves, std::vector<int>(info.m * info.n));
    std::vector<uint8_t> a(threads * 8, 0), b(threads * 8, 0);
    std::vector<int32_t> d(threads * 16, 0);
    for (int w = 0; w < waves; ++w) {
      for (auto* mat : {&A[w], &B[w]})
        for (int& x : *mat) x = any(rng);
      for (int& x : C[w]) x = any(rng) * 1000;
      for (int l = 0; l < 64; ++l) {
        for (int v = 0; v < E; ++v) {
          isa::MfmaCoord pa = isa::mfmaAElement(h.kind, l, v), pb = isa::mfmaBElement(h.kind, l, v);
          a[(w * 64 + l) * 8 + v] = (uint8_t)A[w][pa.row * info.k + pa.col];
          b[(w * 64 + l) * 8 + v] = (uint8_t)B[w][pb.row * info.n + pb.col];
        }
        for (int r = 0; r < info.accRegs; ++r) {
          isa::MfmaCoord p = isa::mfmaDElement(h.kind, l, r);
          d[(w * 64 + l) * 16 + r] = C[w][p.row * info.n + p.col];
        }
      }
    }
    LaunchResult r = launchBytes(*m, threads, a, b, d);
    INFO(r.render());
    REQUIRE(r.clean());
    checkProduct(h.kind, d, A, B, C);
  }
}

TEST_CASE("the float8 MFMA helpers convert OCP operands and add a quarter of the product") {
  const Helper fp8Helpers[] = {
      {isa::MfmaKind::F32_32x32x16_FP8, "tlc::mfma_32x32x16_e4m3", "tlc_fp8_e4m3"},
      {isa::MfmaKind::F32_16x16x32_FP8, "tlc::mfma_16x16x32_e4m3", "tlc_fp8_e4m3"},
      {isa::MfmaKind::F32_32x32x16_BF8, "tlc::mfma_32x32x16_e5m2", "tlc_fp8_e5m2"},
      {isa::MfmaKind::F32_16x16x32_BF8, "tlc::mfma_16x16x32_e5m2", "tlc_fp8_e5m2"},
  };
  for (const Helper& h : fp8Helpers) {
    CAPTURE(h.name);
    const isa::MfmaInfo& info = isa::mfmaInfo(h.kind);
    const int waves = 2, threads = 64 * waves;
    auto m = compile(eightElementKernel(h.name, h.type, "float"));
    // Values both formats hold exactly, -0 among them (OCP 0x80, FNUZ's NaN).
    const float values[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, -1.5f, 2.0f, 3.0f, -4.0f, 0.25f};
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> pick(0, 9), small(-8, 8);
    auto encode = [&](float x) {
      return info.fp8Exp == 4 ? fl::floatToE4M3(x) : fl::floatToE5M2(x);
    };
    std::vector<std::vector<float>> A(waves, std::vector<float>(info.m * info.k)),
        B(waves, std::vector<float>(info.k * info.n)), C(waves, std::vector<float>(info.m * info.n));
    std::vector<uint8_t> a(threads * 8), b(threads * 8);
    std::vector<float> d(threads * 16, 0.f);
    for (int w = 0; w < waves; ++w) {
      for (auto* mat : {&A[w], &B[w]})
        for (float& x : *mat) x = values[pick(rng)];
      for (float& x : C[w]) x = (float)small(rng);
      for (int l = 0; l < 64; ++l) {
        for (int v = 0; v < 8; ++v) {
          isa::MfmaCoord pa = isa::mfmaAElement(h.kind, l, v), pb = isa::mfmaBElement(h.kind, l, v);
          a[(w * 64 + l) * 8 + v] = encode(A[w][pa.row * info.k + pa.col]);
          b[(w * 64 + l) * 8 + v] = encode(B[w][pb.row * info.n + pb.col]);
        }
        for (int r = 0; r < info.accRegs; ++r) {
          isa::MfmaCoord p = isa::mfmaDElement(h.kind, l, r);
          d[(w * 64 + l) * 16 + r] = C[w][p.row * info.n + p.col];
        }
      }
    }
    LaunchResult r = launchBytes(*m, threads, a, b, d);
    INFO(r.render());
    REQUIRE(r.clean());
    // D = C + A * B / 4: the quarter the gemm makes up for (cuda_mfma.cpp).
    for (auto& mat : A)
      for (float& x : mat) x /= 4;
    checkProduct(h.kind, d, A, B, C);
  }
}

TEST_CASE("an MFMA whose wavefront cannot complete is a finding") {
  const Helper& h = kHelpers[0];
  std::vector<uint16_t> a(128 * 4, 0), b(128 * 4, 0);
  std::vector<float> d(128 * 16, 0.f);
  SUBCASE("a block of 96 threads: the second wavefront has 32 lanes") {
    auto m = compile(kernel(h));
    Launch run = launch(*m, 96, a, b, d);
    CHECK(!run.r.completed);
    CHECK(hasWith(run.r, FindingKind::Deadlock, "which has only 32 threads"));
  }
  SUBCASE("the upper half of the wavefront exits before the MFMA") {
    auto m = compile(kernel(h, "if (t % 64 >= 32) return;"));
    Launch run = launch(*m, 64, a, b, d);
    CHECK(!run.r.completed);
    CHECK(run.r.has(FindingKind::Deadlock));
    CHECK((hasWith(run.r, FindingKind::Deadlock, "exited") || hasWith(run.r, FindingKind::Deadlock, "wavefront")));
  }
  SUBCASE("the halves run different MFMA instructions") {
    auto m = compile(kernel(h, "if (t >= 32) { tlc::mfma_16x16x16_f16(acc, av, bv); return; }"));
    Launch run = launch(*m, 64, a, b, d);
    CHECK(!run.r.completed);
    CHECK(hasWith(run.r, FindingKind::CollectiveMismatch, "v_mfma_f32_32x32x8f16"));
  }
  SUBCASE("one half waits at a barrier while the other waits in the MFMA") {
    auto m = compile(kernel(h, "if (t >= 32) __syncthreads();", "if (t < 32) __syncthreads();"));
    Launch run = launch(*m, 64, a, b, d);
    CHECK(!run.r.completed);
    CHECK(hasWith(run.r, FindingKind::Deadlock, "64-lane wavefront collective"));
  }
}
