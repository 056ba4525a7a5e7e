// The gemm example compiled for sm_90a through NVRTC: its PTX has the
// Hopper instructions (wgmma, TMA tensor copies, mbarriers, setmaxnreg), and
// its version without TMA (for strides known only at launch) has none of
// them; compiled for sm_80 it has none of them either.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "compiler/backends/cuda/cuda_hopper.h"
#include "compiler/backends/cuda/nvrtc.h"
#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

std::string gemmExample() { return test::exampleSource("examples/gemm/gemm.tl"); }
// The gemm example with its sm_90a defaults, 128 x 256 x 64 tiles and two
// consumer warpgroups, whatever the target.
std::string wideGemmExample(const std::string& stages = "3") {
  std::string text = gemmExample();
  const std::string onHopper = "T.target(\"sm_90a\")";
  for (size_t at; (at = text.find(onHopper)) != std::string::npos;) text.replace(at, onHopper.size(), "True");
  const std::string three = "stages=3";
  REQUIRE(text.find(three) != std::string::npos);
  text.replace(text.find(three), three.size(), "stages=" + stages);
  REQUIRE(text.find("threads=256 if True") != std::string::npos);
  return text;
}

// The PTX of `source` for sm_90a; empty when NVRTC is not available here.
std::string ptxFor(const std::string& source) {
  std::string why;
  if (!cuda::nvrtcAvailable(&why)) {
    MESSAGE("PTX not checked: " << why);
    return "";
  }
  auto ptx = cuda::compileWithNvrtc(source, "sm_90a", true);
  INFO(ptx.error);
  REQUIRE(ptx.ok);
  return ptx.binary;
}

}  // namespace

TEST_CASE("the sm_90a gemm example compiles to wgmma, TMA and mbarrier instructions") {
  std::string source = test::emitCudaFor(gemmExample(), "sm_90a");
  CHECK(source.find("gemm_kernel0_no_tma") != std::string::npos);
  std::string ptx = ptxFor(source);
  if (ptx.empty()) return;
  size_t fallback = ptx.find(".entry gemm_kernel0_no_tma");
  REQUIRE(fallback != std::string::npos);
  std::string tma = ptx.substr(0, fallback), plain = ptx.substr(fallback);
  if (tma.find(".entry gemm_kernel0(") == std::string::npos) std::swap(tma, plain);
  for (const char* insn : {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "cp.async.bulk.tensor.2d",
                           "mbarrier.try_wait.parity", "mbarrier.arrive.expect_tx", "setmaxnreg.inc", "wgmma.wait_group"}) {
    CAPTURE(insn);
    CHECK(tma.find(insn) != std::string::npos);
    CHECK(plain.find(insn) == std::string::npos);
  }
  CHECK(plain.find("mma.sync.aligned.m16n8k16") != std::string::npos);
  auto sass = cuda::compileWithNvrtc(source, "sm_90a", false);
  INFO(sass.error);
  CHECK(sass.ok);
  std::string sm80 = test::emitCudaFor(gemmExample(), "sm_80");
  CHECK(sm80.find("wgmma") == std::string::npos);
  CHECK(sm80.find("tma_load") == std::string::npos);
}

TEST_CASE("a split-K gemm whose trip count is a let takes the warp-specialized mainloop") {
  std::string source = test::emitCudaFor(test::exampleSource("bench/zoo/gemm_splitk.tl"), "sm_90a");
  CHECK(source.find("tlc::tma_load_2d(") != std::string::npos);
  CHECK(source.find("tlc::wgmma_m64n256k16<") != std::string::npos);
}

TEST_CASE("an int8 gemm with B as [N, K] runs on int8 wgmma (k32, int32 accumulators)") {
  std::string text = test::exampleSource("bench/zoo/gemm_int8.tl");
  std::string source = test::emitCudaFor(text, "sm_90a");
  CHECK(source.find("tlc::wgmma_s8_m64n256k32(") != std::string::npos);
  CHECK(source.find("tlc::tma_load_2d(") != std::string::npos);
  std::string ptx = ptxFor(source);
  if (!ptx.empty()) CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8") != std::string::npos);
  // With B as [K, N] (MN-major) int8 wgmma does not apply: mma.sync does the gemm.
  std::string nn = text;
  nn.replace(nn.find("B: Tensor[(N, K), int8]"), 23, "B: Tensor[(K, N), int8]");
  nn.replace(nn.find("B_s = T.alloc_shared((block_N, block_K), int8)"), 46, "B_s = T.alloc_shared((block_K, block_N), int8)");
  nn.replace(nn.find("T.copy(B[bx * block_N, k * block_K], B_s)"), 41, "T.copy(B[k * block_K, bx * block_N], B_s)");
  nn.replace(nn.find(", transpose_B=True"), 18, "");
  std::string plain = test::emitCudaFor(nn, "sm_90a");
  CHECK(plain.find("wgmma_s8") == std::string::npos);
  CHECK(plain.find("mma_m16n8k32_s8") != std::string::npos);
}

TEST_CASE("a float8 gemm runs on float8 tensor cores: wgmma k32 on sm_90a, mma.sync k32 on sm_89") {
  std::string text = test::exampleSource("examples/gemm_fp8/gemm_fp8.tl");
  std::string source = test::emitCudaFor(text, "sm_90a");
  CHECK(source.find("tlc::wgmma_f8_m64n128k32<0>(") != std::string::npos);
  CHECK(source.find("tlc::tma_load_2d(") != std::string::npos);
  std::string ptx = ptxFor(source);
  if (!ptx.empty()) CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") != std::string::npos);
  // e5m2 operands take the other instruction.
  std::string e5 = text;
  e5.replace(e5.find("in_dtype=float8_e4m3"), 20, "in_dtype=float8_e5m2");
  CHECK(test::emitCudaFor(e5, "sm_90a").find("tlc::wgmma_f8_m64n128k32<1>(") != std::string::npos);
  // sm_89 and sm_90: mma.sync m16n8k32 on float8 fragments.
  for (const char* arch : {"sm_89", "sm_90"}) {
    CAPTURE(arch);
    std::string sync = test::emitCudaFor(text, arch);
    CHECK(sync.find("wgmma") == std::string::npos);
    CHECK(sync.find("tlc::mma_m16n8k32_e4m3(") != std::string::npos);
  }
  std::string why;
  if (cuda::nvrtcAvailable(&why)) {
    auto sm89 = cuda::compileWithNvrtc(test::emitCudaFor(text, "sm_89"), "sm_89", true);
    INFO(sm89.error);
    REQUIRE(sm89.ok);
    CHECK(sm89.binary.find("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32") != std::string::npos);
  }
  // sm_80 has no float8 tensor cores: the gemm runs on the CUDA cores, and
  // the float8 mma helpers are not compiled for it.
  std::string sm80 = test::emitCudaFor(text, "sm_80");
  CHECK(sm80.find("mma_m16n8k32_e4m3") == std::string::npos);
  if (cuda::nvrtcAvailable(&why)) {
    auto bin = cuda::compileWithNvrtc(sm80, "sm_80", false);
    INFO(bin.error);
    CHECK(bin.ok);
  }
  // A float8 B operand stored [K, N] (MN-major) cannot feed float8 wgmma:
  // the mainloop says so and the gemm runs on mma.sync.
  std::string nn = text;
  auto replace = [&](const std::string& from, const std::string& to) {
    size_t at = nn.find(from);
    REQUIRE(at != std::string::npos);
    nn.replace(at, from.size(), to);
  };
  replace("B: Tensor[(N, K), in_dtype]", "B: Tensor[(K, N), in_dtype]");
  replace("B_s = T.alloc_shared((block_N, block_K), in_dtype)", "B_s = T.alloc_shared((block_K, block_N), in_dtype)");
  replace("T.copy(B[bx * block_N, k * block_K], B_s)", "T.copy(B[k * block_K, bx * block_N], B_s)");
  replace(", transpose_B=True", "");
  std::string plain = test::emitCudaFor(nn, "sm_90a");
  CHECK(plain.find("wgmma_f8") == std::string::npos);
  CHECK(plain.find("tlc::mma_m16n8k32_e4m3(") != std::string::npos);
}

TEST_CASE("a float32 gemm with B as [N, K] runs on tf32 wgmma (k8) on sm_90a") {
  std::string text = test::exampleSource("bench/zoo/gemm_nt.tl");
  text.replace(text.find("dtype=float16"), 13, "dtype=float32");
  text.replace(text.find("block_K=64"), 10, "block_K=32");
  std::string source = test::emitCudaFor(text, "sm_90a");
  CHECK(source.find("tlc::wgmma_tf32_m64n256k8(") != std::string::npos);
  CHECK(source.find("tlc::tma_load_2d(") != std::string::npos);
  std::string ptx = ptxFor(source);
  if (!ptx.empty()) CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32") != std::string::npos);
}

// A float8, int8 or float32 A operand that a Parallel loop fills takes the
// A-operand layout of its element type (four 8-bit columns per lane and
// atom, one tf32) and wgmma reads it from registers (the RS form).
TEST_CASE("float8, int8 and tf32 register A operands run on wgmma's RS form on sm_90a, mma.sync elsewhere") {
  std::string text = test::exampleSource("tests/cuda_emu_examples/register_fragments/narrow_operands.tl");
  std::string source = test::emitCudaFor(text, "sm_90a");
  CHECK(source.find("tlc::wgmma_f8_rs_m64n32k32<0>(") != std::string::npos);
  CHECK(source.find("tlc::wgmma_tf32_rs_m64n32k8(") != std::string::npos);
  CHECK(source.find("= tlc::pack4_bytes(A_f[0], A_f[1], A_f[2], A_f[3]);") != std::string::npos);
  CHECK(source.find("= tlc::to_tf32(A_f[0]);") != std::string::npos);
  CHECK(source.find("tlc::wgmma_s8_rs_m64n32k32(") != std::string::npos);
  std::string ptx = ptxFor(source);
  if (!ptx.empty()) {
    CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3") != std::string::npos);
    CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8") != std::string::npos);
    CHECK(ptx.find("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32") != std::string::npos);
  }
  std::string e5 = text;
  e5.replace(e5.find("dtype=float8_e4m3"), 17, "dtype=float8_e5m2");
  CHECK(test::emitCudaFor(e5, "sm_90a").find("tlc::wgmma_f8_rs_m64n32k32<1>(") != std::string::npos);
  std::string sm89 = test::emitCudaFor(text, "sm_89");
  CHECK(sm89.find("wgmma") == std::string::npos);
  CHECK(sm89.find("tlc::mma_m16n8k32_e4m3(") != std::string::npos);
  CHECK(sm89.find("= tlc::to_tf32(A_f[") != std::string::npos);
  CHECK(sm89.find("tlc::mma_m16n8k32_s8(") != std::string::npos);
}

TEST_CASE("persistent (the default): a gemm mainloop kernel loops over its tiles, its version without TMA does not") {
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  options.persistent = true;
  auto cu = test::generateCudaFor(wideGemmExample(), options);
  const std::string& source = cu->source;
  REQUIRE(cu->funcs.size() == 1);
  REQUIRE(cu->funcs[0].kernels.size() == 1);
  const cuda::KernelLaunch& k = cu->funcs[0].kernels[0];
  CHECK(k.persistentBlocksPerSM == 1);
  size_t fallback = source.find("gemm_kernel0_no_tma(");
  REQUIRE(fallback != std::string::npos);
  std::string tma = source.substr(0, fallback), plain = source.substr(fallback);
  // The producer and the consumers each walk the tiles; the consumers keep
  // their ring position across tiles and hand each tile's last stage back.
  size_t loops = 0;
  for (size_t at = 0; (at = tma.find("for (unsigned long long tlc_tile = blockIdx.x; tlc_tile < tlc_tiles;", at)) !=
                      std::string::npos;
       ++at)
    ++loops;
  CHECK(loops == 2);
  CHECK(tma.find("int ring_stage = 0, ring_prev = 0;") != std::string::npos);
  CHECK(tma.find("if (n_iter_1 > 0 && tid % 32 == 0) tlc::mbar_arrive(&tlc_empty[ring_prev]);") != std::string::npos);
  CHECK(plain.find("tlc_tile") == std::string::npos);
  std::string ptx = ptxFor(source);
  if (!ptx.empty()) CHECK(ptx.find("wgmma.mma_async") != std::string::npos);
  // It is the default; --no-persistent, or sm_80, launches a block per tile.
  CHECK(test::emitCudaFor(wideGemmExample(), "sm_90a").find("tlc_tile") != std::string::npos);
  // So does a kernel of one consumer warpgroup that runs two blocks per SM
  // (persistent, such kernels were slower on the H200).
  auto two = test::generateCudaFor(gemmExample(), options);
  CHECK(two->funcs[0].kernels[0].persistentBlocksPerSM == 0);
  CHECK(two->source.find("__launch_bounds__(256, 2)") != std::string::npos);
  CHECK(two->source.find("tlc_tile") == std::string::npos);
  options.persistent = false;
  CHECK(test::generateCudaFor(wideGemmExample(), options)->source.find("tlc_tile") == std::string::npos);
  options.persistent = true;
  options.arch = "sm_80";
  CHECK(test::generateCudaFor(wideGemmExample(), options)->source.find("tlc_tile") == std::string::npos);
}

TEST_CASE("a persistent gemm whose ring does not fit beside its staging tile launches a block per tile") {
  // 128x256x64 float16 tiles: 48 KB a stage. With three stages the ring
  // (144 KB) and the accumulator's staging tile (67.5 KB) fit side by side,
  // and the kernel is persistent; with four (192 KB) they only fit sharing
  // bytes, which a persistent kernel's ring cannot, so it keeps a block per tile.
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  for (const char* stages : {"3", "4"}) {
    CAPTURE(stages);
    auto cu = test::generateCudaFor(wideGemmExample(stages), options);
    REQUIRE(cu);
    bool persistent = std::string(stages) == "3";
    CHECK((cu->funcs[0].kernels[0].persistentBlocksPerSM > 0) == persistent);
    CHECK((cu->primarySource.find("tlc_tile") != std::string::npos) == persistent);
  }
}

TEST_CASE("the versions without TMA form a translation unit of their own; modules without them have one") {
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  auto cu = test::generateCudaFor(gemmExample(), options);
  REQUIRE(cu);
  const std::string prelude = "// Generated by tlc for sm_90a.\n#include \"tlc_cuda.h\"\n\n";
  CHECK(cu->primarySource.rfind(prelude, 0) == 0);
  CHECK(cu->fallbackSource.rfind(prelude, 0) == 0);
  CHECK(cu->primarySource.find("gemm_kernel0(") != std::string::npos);
  CHECK(cu->primarySource.find("_no_tma") == std::string::npos);
  CHECK(cu->fallbackSource.find("gemm_kernel0_no_tma(") != std::string::npos);
  CHECK(cu->fallbackSource.find("gemm_kernel0(") == std::string::npos);
  // Together they are the module's source, kernel by kernel.
  CHECK(cu->source == cu->primarySource + cu->fallbackSource.substr(prelude.size()));
  // Static shapes with aligned rows: one version, one program.
  std::string fixed = gemmExample();
  auto cs = test::generateCudaFor(fixed.replace(fixed.find("def gemm[M, N, K,"), 17, "def gemm[M=256, N=256, K=256,"),
                                  options);
  REQUIRE(cs);
  CHECK(cs->fallbackSource.empty());
  CHECK(cs->primarySource == cs->source);
}

TEST_CASE("the consumers' setmaxnreg increase never exceeds what the producer warpgroup releases") {
  // setmaxnreg.inc waits for registers the block's setmaxnreg.dec released:
  // a consumer target above that waits forever (the W4A16 decode kernel at
  // two blocks per SM hung on an H200 that way). Every choice keeps
  // 128 * (entry - producer) >= threads * (consumer - entry), entry being
  // the launch's per-thread count (65536 / blocks / (threads + 128), a
  // multiple of 8).
  for (int64_t threads : {128, 256, 384}) {
    for (int64_t tileRegisters : {8, 40, 64, 100, 200}) {
      for (bool general : {true, false}) {
        for (int64_t shared : {8 * 1024, 40 * 1024, 100 * 1024}) {
          cuda::HopperMainloop plan;
          ir::GemmStmt gemm(ir::Region{}, ir::Region{}, ir::Region{}, false, false, false, {});
          if (!general) plan.gemm = &gemm;
          cuda::chooseHopperOccupancy(&plan, threads, shared, 227 * 1024, tileRegisters, 16);
          CAPTURE(threads);
          CAPTURE(tileRegisters);
          CAPTURE(general);
          CAPTURE(shared);
          CAPTURE(plan.blocksPerSM);
          REQUIRE(plan.blocksPerSM >= 1);
          CHECK(plan.blocksPerSM * (threads + 128) <= 2048);
          int64_t entry = 65536 / plan.blocksPerSM / (threads + 128) / 8 * 8;
          CHECK(plan.consumerRegs % 8 == 0);
          CHECK(plan.consumerRegs <= 240);
          CHECK(plan.producerRegs <= entry);
          CHECK(128 * (entry - plan.producerRegs) >= threads * (plan.consumerRegs - entry));
          // A general loop takes more blocks only when its tiles fit the consumers.
          if (general && plan.blocksPerSM > 1 && threads > 128) CHECK(plan.consumerRegs >= tileRegisters + 32);
        }
      }
    }
  }
}

TEST_CASE("producers that gather keep the registers the consumers can spare") {
  // At 56 registers the gather of conv2d_nhwc.tl's tile (64 x 64, 128
  // producer threads) spilled (ptxas: 128 bytes; ncu: a million local
  // requests) and needed 88; a 256-row dequantizing gemm's consumers
  // (register tiles of 160 per thread) spill below 192.
  // At one block per SM a gathering producer takes two warpgroups where
  // each of their threads keeps 88 registers (one warp per scheduler issued
  // every run of the 128-row convolution's tiles).
  struct Case {
    int64_t threads, tileRegisters, shared;
    int64_t producerAtLeast, consumerAtLeast, producerThreads;
  } cases[] = {
      {128, 64, 96 * 1024, 88, 128, 128},    // the convolution, two blocks per SM
      {256, 64, 160 * 1024, 88, 128, 256},   // its 128-row tiles, one block: two producer warpgroups
      {256, 160, 160 * 1024, 56, 224, 128},  // the dequantizing gemm: consumers first, one warpgroup
  };
  for (const Case& k : cases) {
    cuda::HopperMainloop plan;
    ir::GemmStmt gemm(ir::Region{}, ir::Region{}, ir::Region{}, false, false, false, {});
    plan.gemm = &gemm;
    cuda::HopperOperand a;
    a.gather = ir::GatherNest{};
    // The gathered tile: the convolution's [block_M, 64] float16 im2col
    // tile, the dequantizing gemm's [128, 1] scales.
    ir::Buffer tile = ir::makeBuffer("T", DType::Float16,
                                     {ir::makeInt(k.tileRegisters == 160 ? 128 : k.threads / 2),
                                      ir::makeInt(k.tileRegisters == 160 ? 1 : 64)},
                                     ir::MemScope::Shared);
    a.tile = tile.get();
    plan.tiles = {a};
    cuda::chooseHopperOccupancy(&plan, k.threads, k.shared, 227 * 1024, k.tileRegisters, 64);
    CAPTURE(k.threads);
    CAPTURE(k.tileRegisters);
    CHECK(plan.producerThreads == k.producerThreads);
    CHECK(plan.blocksPerSM * (k.threads + plan.producerThreads) <= 2048);
    int64_t entry = 65536 / plan.blocksPerSM / (k.threads + plan.producerThreads) / 8 * 8;
    CHECK(plan.producerRegs >= k.producerAtLeast);
    CHECK(plan.consumerRegs >= k.consumerAtLeast);
    CHECK(plan.producerRegs < entry);
    CHECK(plan.consumerRegs > entry);
    CHECK(plan.consumerRegs <= 240);
    CHECK(plan.producerThreads * (entry - plan.producerRegs) >= k.threads * (plan.consumerRegs - entry));
  }
  // Not where the widest wgmma's accumulator (m64n256: 128 registers) and
  // 32 more would not fit the entry count of 512 threads (128).
  cuda::HopperMainloop plan;
  ir::GemmStmt gemm(ir::Region{}, ir::Region{}, ir::Region{}, false, false, false, {});
  plan.gemm = &gemm;
  cuda::HopperOperand a;
  a.gather = ir::GatherNest{};
  ir::Buffer tile = ir::makeBuffer("T", DType::Float16, {ir::makeInt(128), ir::makeInt(64)}, ir::MemScope::Shared);
  a.tile = tile.get();
  plan.tiles = {a};
  cuda::chooseHopperOccupancy(&plan, 256, 160 * 1024, 227 * 1024, 64, 64);
  CHECK(plan.producerThreads == 256);
  cuda::chooseHopperOccupancy(&plan, 256, 160 * 1024, 227 * 1024, 64, 128);
  CHECK(plan.producerThreads == 128);
}

TEST_CASE("more blocks per SM only when the widest wgmma's accumulator fits the entry register count") {
  // ptxas compiles the consumers within the count __launch_bounds__ implies,
  // whatever their setmaxnreg.inc: an m64n256 float32 wgmma (128 accumulator
  // registers) at 128 registers per thread is a fatal ptxas error. Found by
  // `tlc tune` of gemm.tl (block_M=64 block_N=256 block_K=32, 128 threads).
  for (bool general : {true, false}) {
    cuda::HopperMainloop plan;
    ir::GemmStmt gemm(ir::Region{}, ir::Region{}, ir::Region{}, false, false, false, {});
    if (!general) plan.gemm = &gemm;
    CAPTURE(general);
    cuda::chooseHopperOccupancy(&plan, 128, 40 * 1024, 227 * 1024, 128, 128);
    CHECK(plan.blocksPerSM == 1);
    // Two m64n128 wgmmas accumulating the same 128 registers fit 128.
    cuda::chooseHopperOccupancy(&plan, 128, 40 * 1024, 227 * 1024, 128, 64);
    CHECK(plan.blocksPerSM == 2);
    CHECK(65536 / plan.blocksPerSM / 256 >= 64 + 32);
  }
}

TEST_CASE("gemm operands the kernel only reads may be staged for TMA; the module then defines tlc_stage_rows") {
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  auto maps = [](const cuda::CudaModule& cu) {
    REQUIRE(cu.funcs.size() == 1);
    REQUIRE(cu.funcs[0].kernels.size() == 1);
    return cu.funcs[0].kernels[0].tensorMaps;
  };
  auto cu = test::generateCudaFor(wideGemmExample(), options);
  REQUIRE(cu);
  std::vector<cuda::TensorMapArg> read = maps(*cu);
  REQUIRE(read.size() == 3);
  CHECK(read[0].stage);
  CHECK(read[1].stage);
  // The accumulator's staging tile is stored to C by TMA: C's map is a store map, never staged.
  CHECK(read[2].store);
  CHECK_FALSE(read[2].stage);
  CHECK_FALSE(read[0].store);
  CHECK(cu->primarySource.find(std::string("void __launch_bounds__(128) ") + cuda::kStageRowsEntry + "(") !=
        std::string::npos);
  CHECK(cu->fallbackSource.find(cuda::kStageRowsEntry) == std::string::npos);
  // The product written over B: B's tiles are not staged (the copy would
  // miss the kernel's own writes), A's still are.
  std::string text = wideGemmExample();
  const std::string store = "T.copy(C_f, C[by * block_M, bx * block_N])";
  REQUIRE(text.find(store) != std::string::npos);
  text.replace(text.find(store), store.size(), "T.copy(C_f, B[by * block_M, bx * block_N])");
  auto written = test::generateCudaFor(text, options);
  REQUIRE(written);
  std::vector<cuda::TensorMapArg> w = maps(*written);
  REQUIRE(w.size() == 3);
  CHECK(w[0].stage);
  CHECK_FALSE(w[1].stage);
  CHECK(w[2].store);
  // Staging off (--no-tma-staging): no map may be staged, no staging kernel.
  options.stageTma = false;
  auto off = test::generateCudaFor(wideGemmExample(), options);
  REQUIRE(off);
  for (const cuda::TensorMapArg& t : maps(*off)) CHECK_FALSE(t.stage);
  CHECK(off->source.find(cuda::kStageRowsEntry) == std::string::npos);
}

TEST_CASE("tma_load_im2col_4d assembles to an im2col tensor copy with 16-bit im2col offsets") {
  const std::string source = R"(#include "tlc_cuda.h"
extern "C" __global__ void k(const __grid_constant__ tlc::TensorMap map, float* out, int c, int w, int h, int n,
                             unsigned short off_w, unsigned short off_h) {
  __shared__ __align__(128) unsigned char tile[64 * 32];
  __shared__ tlc::u64 bar;
  if (threadIdx.x == 0) { tlc::mbar_init(&bar, 1); tlc::mbar_init_fence(); }
  __syncthreads();
  if (threadIdx.x == 0) {
    tlc::mbar_arrive_expect_tx(&bar, sizeof tile);
    tlc::tma_load_im2col_4d(tile, &map, &bar, c, w, h, n, off_w, off_h);
  }
  tlc::mbar_wait(&bar, 0);
  out[threadIdx.x] = tile[threadIdx.x];
}
)";
  std::string ptx = ptxFor(source);
  if (ptx.empty()) return;
  // Coordinates (c, w, h, n) in 32-bit registers, the offsets (w, h) in 16-bit ones.
  static const std::regex insn(
      R"(cp\.async\.bulk\.tensor\.4d\.shared::cluster\.global\.im2col\.mbarrier::complete_tx::bytes )"
      R"(\[%r\d+\], \[%rd\d+, \{%r\d+, %r\d+, %r\d+, %r\d+\}\], \[%r\d+\], \{%rs\d+, %rs\d+\};)");
  CHECK(std::regex_search(ptx, insn));
  auto cubin = cuda::compileWithNvrtc(source, "sm_90a", false);
  INFO(cubin.error);
  CHECK(cubin.ok);
}
