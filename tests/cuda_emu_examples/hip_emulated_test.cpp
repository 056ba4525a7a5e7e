// The HIP C of the GPU emitter's HIP dialect in the emulator
// (`tlc run --target=hip:gfx942 --emulate --check`): every example at sizes
// its tiles do not divide runs clean and matches the interpreter on gfx90a
// and gfx942, reductions combine whole 64-lane wavefronts, and a HIP kernel
// whose barrier was removed is caught.
#include <doctest/doctest.h>

#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/hip/hip_archs.h"
#include "compiler/driver/emulate_target.h"
#include "compiler/sema/frontend.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;
using namespace tlc::driver;

namespace {

struct Case {
  const char* path;
  std::vector<Define> defines;
  std::map<std::string, int64_t> dims;
};

void checkHipEmulated(const Case& c, const std::string& arch) {
  std::string defs;
  for (auto& d : c.defines) defs += " -D " + d.name + "=" + d.value;
  for (auto& [n, v] : c.dims) defs += " --dim " + n + "=" + std::to_string(v);
  CAPTURE(c.path);
  CAPTURE(arch);
  CAPTURE(defs);
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile(c.path, sm, diags, c.defines, "hip:" + arch);
  std::ostringstream out;
  RunSettings settings;
  settings.dims = c.dims;
  settings.seed = 7;
  settings.check = true;
  settings.out = &out;
  int rc = runEmulated(module, settings, hip::hipOptions(arch), diags);
  const std::string log = out.str() + diags.renderAll();
  INFO(log);
  for (DiagKind bad : {DiagKind::CudaEmuCheckFailed, DiagKind::CudaEmuLaunchFailed, DiagKind::CudaEmuBuildFailed})
    CHECK(!diags.hasKind(bad));
  CHECK(rc == 0);
  CHECK(out.str().find("hip:" + arch + " (emulated)") != std::string::npos);
}

}  // namespace

TEST_CASE("every example's HIP C runs clean in the emulator and matches the interpreter") {
  const std::vector<Case> cases = {
      {"examples/elementwise_add/add.tl", {}, {{"M", 70}, {"N", 100}}},
      {"examples/gemm/gemm.tl", {{"block_M", "64"}, {"block_N", "64"}}, {{"M", 72}, {"N", 80}, {"K", 40}}},
      {"examples/gemm/gemm.tl", {{"dtype", "bfloat16"}, {"block_M", "64"}, {"block_N", "64"}},
       {{"M", 65}, {"N", 70}, {"K", 33}}},
      // The default tiles (MFMA 32x32x8 on a 2 x 1 wavefront grid), and 16x16x16 blocks.
      {"examples/gemm/gemm.tl", {}, {{"M", 130}, {"N", 140}, {"K", 70}}},
      {"examples/gemm/gemm.tl", {{"block_M", "48"}, {"block_N", "32"}, {"threads", "64"}},
       {{"M", 50}, {"N", 40}, {"K", 33}}},
      {"examples/row_reduce/row_sum.tl", {}, {{"M", 37}, {"N", 300}}},
      {"examples/rmsnorm/rmsnorm.tl", {}, {{"M", 5}}},
      {"examples/softmax/softmax.tl", {}, {{"M", 70}, {"N", 300}}},
      {"examples/flash_attention/mha_fwd_bshd.tl", {{"causal", "True"}, {"D", "64"}, {"block_M", "64"},
                                                     {"block_N", "32"}, {"threads", "128"}},
       {{"B", 1}, {"S", 70}, {"H", 2}}},
      {"examples/flash_attention/mha_fwd_bhsd.tl", {{"D", "64"}, {"block_M", "64"}, {"block_N", "64"}, {"threads", "128"}},
       {{"B", 1}, {"S", 100}, {"H", 1}}},
      // The defaults on HIP (`T.target("hip")`: 64 x 64 tiles on 128 threads), D 128.
      {"examples/flash_attention/mha_fwd_bhsd.tl", {}, {{"B", 1}, {"S", 70}, {"H", 2}}},
      // TileLang's spellings: a grouped pipeline plan; T.dynamic and T.use_swizzle on a 3-D grid.
      {"tests/tilelang/flash_attention.tl", {{"dim", "64"}}, {{"batch", 1}, {"heads", 2}, {"seq_len", 100}}},
      {"tests/tilelang/batched_gemm.tl", {{"N", "70"}, {"K", "50"}}, {{"batch", 3}, {"M", 150}}},
  };
  for (const char* arch : {"gfx90a", "gfx942"})
    for (const Case& c : cases) checkHipEmulated(c, arch);
}

// T.Pipelined on HIP (no cp.async): the tiles of the next iteration are
// loaded into registers before the current iteration's MFMAs and stored into
// the other of two LDS stages after them (register staging,
// cuda_deferred_copies.cpp) where the buffer plan fits both stages in the
// LDS. Every example with a pipelined loop whose tiles fit 64 KB of LDS,
// and a kernel whose stages fill it beside a tile that reuses their bytes,
// at sizes their tiles do not divide: clean in the emulator (races,
// barriers) and equal to the interpreter.
TEST_CASE("pipelined loops are register-staged on HIP and run clean at ragged sizes") {
  SUBCASE("the gemm's HIP C: loads ahead, the MFMAs, then the stores, no cp.async") {
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module = test::compileTreeFile("examples/gemm/gemm.tl", sm, diags, {{"block_M", "64"}, {"block_N", "64"}});
    auto hip = cuda::generateCuda(module, hip::hipOptions("gfx942"), diags);
    REQUIRE_MESSAGE(hip, diags.renderAll());
    const std::string& src = hip->source;
    CHECK(src.find("cp_async") == std::string::npos);
    const size_t loop = src.find("for (int iter");
    REQUIRE(loop != std::string::npos);
    const size_t load = src.find("tlc::copy_vec<__half, 8>(staged", loop), mfma = src.find("tlc::mfma_", loop);
    const size_t store = src.find(", staged", mfma);
    CHECK(load < mfma);
    CHECK(store != std::string::npos);
    CHECK(src.find("__syncthreads()", mfma) > store);  // one barrier an iteration, at its top
  }
  SUBCASE("the buffer plan decides whether the second stages fit: a tile after the loop reuses their bytes") {
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/staged_reuse.tl", sm, diags, {});
    auto hip = cuda::generateCuda(module, hip::hipOptions("gfx942"), diags);
    REQUIRE_MESSAGE(hip, diags.renderAll());
    CHECK(hip->source.find("__half staged[64];") != std::string::npos);  // 64 elements of A a thread in registers
    CHECK(hip->source.find("C_s = reinterpret_cast<float*>(tlc_smem + 0);") != std::string::npos);
    CHECK(hip->funcs.at(0).kernels.at(0).sharedBytes == 65536);
  }
  const std::vector<Case> cases = {
      {"tests/cuda_emu_examples/staged_reuse.tl", {}, {{"M", 70}, {"N", 100}, {"K", 300}}},
      {"examples/gemm_fp8/gemm_fp8.tl", {{"stages", "2"}, {"block_M", "64"}, {"block_N", "64"}, {"threads", "128"}},
       {{"M", 70}, {"N", 150}, {"K", 300}}},
      {"examples/gemm_fp8/gemm_fp8_blockscale.tl", {{"block_M", "64"}, {"block_N", "64"}, {"threads", "128"}},
       {{"M", 70}, {"N", 200}, {"K", 300}}},
      {"examples/dequantize_gemm/w4a16_gemm.tl", {}, {{"M", 37}, {"N", 150}, {"K", 200}}},
      {"examples/convolution/conv2d_nhwc.tl", {}, {{"N", 1}, {"H", 9}, {"W", 10}, {"C", 40}, {"F", 70}}},
  };
  for (const char* arch : {"gfx90a", "gfx942"})
    for (const Case& c : cases) checkHipEmulated(c, arch);
}

// On a 64-lane wavefront the reductions' xor shuffles span the whole
// wavefront (one step more, of distance 32, than on a CUDA warp): a row of
// 64 threads reduces without shared memory, column and multi-wavefront
// reductions combine a partial result per wavefront, and the rows that the
// cost rule widens to fewer registers may take 64 threads.
TEST_CASE("HIP reductions combine the lanes of whole 64-lane wavefronts") {
  cuda::CudaOptions sm80;
  sm80.arch = "sm_80";
  const cuda::CudaOptions gfx942 = hip::hipOptions("gfx942");
  const char* wide = "tests/cuda_emu_examples/register_fragments/wide_rows.tl";
  SUBCASE("a row of 64 threads: one wavefront, no shared memory or barrier") {
    const std::string cu = test::emittedSource(wide, sm80), hip = test::emittedSource(wide, gfx942);
    CHECK(test::count(cu, "tlc::group_allreduce<32>") == 2);
    CHECK(test::count(cu, "row_partial") > 0);
    CHECK(test::count(hip, "tlc::group_allreduce<64>") == 2);
    CHECK(test::count(hip, "row_partial") == 0);
    CHECK(test::count(hip, "__syncthreads()") == 0);
  }
  SUBCASE("a row of 256 threads: a partial result per wavefront") {
    const std::string hip = test::emittedSource("examples/softmax/softmax.tl", gfx942);
    CHECK(test::count(hip, "tlc::group_allreduce<64>") == 2);
    CHECK(test::count(hip, "row_partial[ri * 4 + tid / 64]") == 1);
  }
  SUBCASE("column reductions shuffle up to distance 32 and combine a partial per wavefront") {
    const std::string hip = test::emittedSource("tests/cuda_emu_examples/register_fragments/column_sums.tl", gfx942);
    CHECK(test::count(hip, "for (int s = 16; s < 64; s <<= 1)") == 2);
    CHECK(test::count(hip, ", s, 64)") == 2);
    CHECK(test::count(hip, "col_partial[(tid / 64 * 8 + c) * 16 + tid % 64]") == 1);
  }
  SUBCASE("rmsnorm's rows take 64 threads: half the registers for the weights") {
    CHECK(test::count(test::emittedSource("examples/rmsnorm/rmsnorm.tl", sm80), "tlc::group_allreduce<32>") == 1);
    CHECK(test::count(test::emittedSource("examples/rmsnorm/rmsnorm.tl", gfx942), "tlc::group_allreduce<64>") == 1);
  }
  SUBCASE("clean and equal to the interpreter at ragged sizes") {
    const char* dir = "tests/cuda_emu_examples/register_fragments/";
    const std::string columns = std::string(dir) + "column_sums.tl";
    const std::string deferred = std::string(dir) + "deferred_reductions.tl";
    const std::vector<Case> cases = {
        {wide, {}, {{"M", 5}, {"N", 1000}}},
        {columns.c_str(), {}, {{"M", 37}, {"N", 300}}},
        {deferred.c_str(), {{"block_M", "2"}, {"block_N", "512"}}, {{"M", 5}, {"N", 1100}}},
        {deferred.c_str(), {}, {{"M", 37}, {"N", 300}}},
    };
    for (const char* arch : {"gfx90a", "gfx942"})
      for (const Case& c : cases) checkHipEmulated(c, arch);
  }
}

// A planted bug: the emitter's HIP C for a transpose through LDS, with its
// barrier removed, is a shared-memory race; the same code with the barrier
// runs clean and right.
TEST_CASE("a HIP kernel missing its barrier is caught by the emulator") {
  const char* tl = R"(def flip(A: Tensor[(64,), float32], B: Tensor[(64,), float32]):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((64,), float32)
        T.copy(A[0], s)
        for i in T.Parallel(64):
            B[i] = s[63 - i]
)";
  SourceManager sm;
  DiagnosticEngine diags{sm};
  uint32_t file = sm.addBuffer("flip.tl", tl);
  auto module = compileSource(sm, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(module);
  cuda::CudaOptions options = hip::hipOptions("gfx942");
  options.lineDirectives = false;
  auto hip = cuda::generateCuda(*module, options, diags);
  REQUIRE(hip);
  REQUIRE(hip->source.find("#include \"tlc_hip.h\"") != std::string::npos);
  REQUIRE(hip->source.find("__syncthreads();") != std::string::npos);
  REQUIRE(hip->funcs.size() == 1);
  const cuda::KernelLaunch& k = hip->funcs[0].kernels.at(0);

  auto launch = [&](const std::string& source, std::vector<float>* out) {
    std::string err;
    auto m = cuda_emu::EmulatedModule::compile(source, &err);
    REQUIRE_MESSAGE(m, err);
    std::vector<float> in(64);
    for (int i = 0; i < 64; ++i) in[i] = float(i);
    out->assign(64, -1.f);
    std::vector<cuda_emu::KernelArg> args = {cuda_emu::KernelArg::buffer("A", in.data(), 256, false),
                                             cuda_emu::KernelArg::buffer("B", out->data(), 256, true)};
    cuda_emu::LaunchConfig cfg;
    cfg.block.x = (unsigned)k.threads;
    cfg.dynamicSharedBytes = (size_t)k.sharedBytes;
    return m->launch(k.name, cfg, args);
  };
  std::vector<float> out;
  cuda_emu::LaunchResult clean = launch(hip->source, &out);
  INFO(clean.render());
  CHECK(clean.clean());
  CHECK(out[0] == 63.f);
  CHECK(out[63] == 0.f);

  std::string buggy = hip->source;
  for (size_t at; (at = buggy.find("__syncthreads();")) != std::string::npos;) buggy.erase(at, 16);
  cuda_emu::LaunchResult bug = launch(buggy, &out);
  INFO(bug.render());
  CHECK(bug.has(cuda_emu::FindingKind::SharedRace));
}
