// Every example through the CUDA backend and the CUDA emulator
// (`tlc run --target=cuda:sm_80 --emulate --check`), at small sizes
// including ones the tiles do not divide: the emulator must report no
// finding and the results must match the reference interpreter.
#include <doctest/doctest.h>

#include <sstream>

#include "compiler/driver/emulate_target.h"
#include "compiler/sema/frontend.h"

using namespace tlc;
using namespace tlc::driver;

namespace {

struct Case {
  const char* path;
  std::vector<Define> defines;
  std::map<std::string, int64_t> dims;
  // float32 gemm runs on tensor cores in tf32 (10-bit mantissa), on the GPU
  // as in the emulator: only the emulator's own checks are required clean;
  // the float32 tolerance of the comparison is too tight for tf32.
  bool tf32 = false;
  // Ranges of the random inputs (`--fill NAME=lo:hi`).
  std::map<std::string, std::pair<double, double>> fills = {};
};

// Runs one example; returns the exit code and fills `log` with the summary
// and diagnostics.
int runEmulated(const Case& c, const std::string& arch, std::string* log, bool* emulatorClean,
                const EmulateOptions& options = {}) {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::string error;
  uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/" + c.path, error);
  REQUIRE_MESSAGE(file != 0, error);
  std::optional<ir::Module> module = compileSource(sm, diags, file, c.defines);
  INFO(diags.renderAll());
  REQUIRE(module);
  std::ostringstream out;
  RunSettings settings;
  settings.dims = c.dims;
  settings.seed = 7;
  settings.fills = c.fills;
  settings.check = true;
  settings.out = &out;
  int rc = runCudaEmulated(*module, settings, arch, diags, options);
  *log = out.str() + diags.renderAll();
  *emulatorClean = !diags.hasKind(DiagKind::CudaEmuCheckFailed) && !diags.hasKind(DiagKind::CudaEmuLaunchFailed) &&
                   !diags.hasKind(DiagKind::CudaEmuBuildFailed);
  return rc;
}

// Runs one case on `arch`: the emulator reports nothing and the results
// match the interpreter.
void checkEmulated(const Case& c, const std::string& arch, const EmulateOptions& options = {}) {
  std::string defs;
  for (auto& d : c.defines) defs += " -D " + d.name + "=" + d.value;
  for (auto& [n, v] : c.dims) defs += " --dim " + n + "=" + std::to_string(v);
  CAPTURE(c.path);
  CAPTURE(defs);
  std::string log;
  bool clean = false;
  int rc = runEmulated(c, arch, &log, &clean, options);
  INFO(log);
  CHECK(clean);
  CHECK(rc == 0);
}

}  // namespace

TEST_CASE("every example runs clean in the CUDA emulator and matches the interpreter") {
  const std::vector<Case> cases = {
      {"examples/elementwise_add/add.tl", {}, {{"M", 70}, {"N", 100}}},
      // Kernels in TileLang's spelling (docs/language.md, TileLang spellings).
      {"tests/tilelang/matmul.tl", {{"M", "72"}, {"N", "80"}, {"K", "40"}}, {}},
      {"tests/tilelang/softmax.tl", {{"N", "100"}}, {{"M", 11}}},
      {"tests/tilelang/bias_relu.tl", {{"M", "45"}, {"N", "100"}, {"block_M", "16"}, {"block_N", "32"}}, {}},
      {"tests/tilelang/tvm_spellings.tl", {}, {{"M", 21}}},
      {"tests/tilelang/python_helper.tl", {}, {{"N", 37}}},
      {"tests/tilelang/splitk_atomic.tl", {{"M", "70"}, {"N", "45"}, {"K", "96"}}, {}},
      {"tests/tilelang/splitk_atomic_x2.tl", {{"M", "70"}, {"N", "46"}, {"K", "96"}}, {}},
      {"tests/tilelang/while_loops.tl", {}, {{"M", 11}}, false, {{"V", {1, 1000}}}},
      {"tests/tilelang/thread_binding.tl", {{"N", "45"}, {"K", "37"}}, {}},
      {"tests/tilelang/if_frames.tl", {{"M", "70"}}, {}},
      {"tests/tilelang/reducers.tl", {}, {{"M", 37}, {"N", 300}}},
      {"tests/tilelang/atomic_prev.tl", {}, {{"N", 300}, {"B", 7}}},
      {"tests/tilelang/gemv_vectorized.tl", {{"dtype", "float32"}}, {{"N", 37}, {"K", 300}}},
      // C a multiple of block_K: on sm_90a the im2col tile is a TMA load.
      {"tests/tilelang/convolution.tl",
       {{"N", "2"}, {"C", "32"}, {"H", "9"}, {"W", "11"}, {"F", "40"}, {"K", "3"}, {"S", "1"}, {"D", "1"}, {"P", "1"}},
       {}},
      {"tests/tilelang/convolution.tl",
       {{"N", "1"}, {"C", "24"}, {"H", "13"}, {"W", "10"}, {"F", "20"}, {"K", "3"}, {"S", "2"}, {"D", "2"}, {"P", "2"}},
       {}},
      {"examples/gemm/gemm.tl", {{"M", "128"}, {"N", "128"}, {"K", "64"}}, {}},
      {"examples/gemm/gemm.tl", {{"block_M", "64"}, {"block_N", "64"}}, {{"M", 72}, {"N", 80}, {"K", 40}}},
      {"examples/gemm/gemm.tl", {{"dtype", "bfloat16"}, {"block_M", "64"}, {"block_N", "64"}},
       {{"M", 64}, {"N", 64}, {"K", 64}}},
      {"examples/gemm/gemm.tl", {{"dtype", "float32"}, {"block_M", "64"}, {"block_N", "32"}},
       {{"M", 40}, {"N", 48}, {"K", 24}}, /*tf32=*/true},
      {"examples/row_reduce/row_sum.tl", {}, {{"M", 37}, {"N", 300}}},
      {"examples/rmsnorm/rmsnorm.tl", {}, {{"M", 5}}},
      {"examples/softmax/softmax.tl", {}, {{"M", 70}, {"N", 300}}},
      // Attention: sequence lengths the tiles do not divide, one key, the
      // causal diagonal, grouped K/V heads, bfloat16 and a narrower head.
      {"examples/flash_attention/mha_fwd_bshd.tl", {}, {{"B", 1}, {"S", 200}, {"H", 2}}},
      {"examples/flash_attention/mha_fwd_bshd.tl", {{"causal", "True"}, {"D", "64"}}, {{"B", 2}, {"S", 129}, {"H", 1}}},
      {"examples/flash_attention/mha_fwd_bshd.tl", {{"groups", "2"}}, {{"B", 1}, {"S", 1}, {"H", 4}}},
      {"examples/flash_attention/mha_fwd_bshd.tl",
       {{"dtype", "bfloat16"}, {"causal", "True"}, {"block_N", "64"}, {"threads", "128"}, {"block_M", "64"}},
       {{"B", 1}, {"S", 100}, {"H", 2}}},
  };
  for (const Case& c : cases) {
    std::string defs;
    for (auto& d : c.defines) defs += " -D " + d.name + "=" + d.value;
    CAPTURE(c.path);
    CAPTURE(defs);
    std::string log;
    bool clean = false;
    int rc = runEmulated(c, "sm_80", &log, &clean);
    INFO(log);
    CHECK(clean);
    if (!c.tf32) CHECK(rc == 0);
  }
}

// On sm_90a the gemm example takes the warp-specialized mainloop (a TMA
// producer warpgroup, mbarriers, wgmma consumers). When its tensors' rows
// are whole 16-byte multiples TMA reads them in place; otherwise the launch
// stages them into padded rows first (tlc_stage_rows), or, with staging
// off, runs the version without TMA. Each must run clean in the emulator
// and match the interpreter, at sizes the tiles divide and sizes they do
// not (TMA's out-of-bounds zero fill). The epilogue stores C by TMA; C is
// never staged: where its rows are not whole 16-byte multiples (N = 45,
// 130, 4097) the launch passes a map of zeros and the kernel stores C with
// vectors.
TEST_CASE("the sm_90a gemm through TMA and wgmma runs clean in the CUDA emulator and matches the interpreter") {
  const std::vector<Define> big = {{"block_M", "128"}, {"block_N", "256"}, {"block_K", "64"}, {"threads", "256"}};
  struct HopperCase {
    Case c;
    bool tma;  // false: the shapes make the launch stage a tensor, or without staging take the version without TMA
  };
  std::vector<HopperCase> cases;
  for (const char* dtype : {"float16", "bfloat16"}) {
    std::vector<Define> d = {{"dtype", dtype}};
    cases.push_back({{"examples/gemm/gemm.tl", d, {{"M", 256}, {"N", 256}, {"K", 128}}}, true});
    cases.push_back({{"examples/gemm/gemm.tl", d, {{"M", 130}, {"N", 136}, {"K", 72}}}, true});
    std::vector<Define> fixed = d;
    for (auto [n, v] : {std::pair{"M", "72"}, std::pair{"N", "80"}, std::pair{"K", "40"}}) fixed.push_back({n, v});
    cases.push_back({{"examples/gemm/gemm.tl", fixed, {}}, true});
    std::vector<Define> wide = d;
    wide.insert(wide.end(), big.begin(), big.end());
    cases.push_back({{"examples/gemm/gemm.tl", wide, {{"M", 130}, {"N", 264}, {"K", 96}}}, true});
  }
  cases.push_back({{"examples/gemm/gemm.tl", {}, {{"M", 33}, {"N", 45}, {"K", 27}}}, false});
  // Rows of A and B that are not whole vectors, with whole tiles inside: the
  // tiles load shifted vectors, stored to their stage after the mma steps.
  cases.push_back({{"examples/gemm/gemm.tl", {}, {{"M", 200}, {"N", 130}, {"K", 99}}}, false});
  // With 128x256 tiles on 256 threads (one 16-row slice per warp) the
  // version without TMA runs its gemm as wgmma in place, the next stage's
  // copies issued while the wgmmas run.
  std::vector<Define> wideBf16 = big;
  wideBf16.push_back({"dtype", "bfloat16"});
  cases.push_back({{"examples/gemm/gemm.tl", wideBf16, {{"M", 300}, {"N", 520}, {"K", 203}}}, false});
  std::vector<Define> wideF16 = big;
  cases.push_back({{"examples/gemm/gemm.tl", wideF16, {{"M", 64}, {"N", 4097}, {"K", 200}}}, false});
  for (const HopperCase& h : cases) {
    std::string defs;
    for (auto& d : h.c.defines) defs += " -D " + d.name + "=" + d.value;
    for (auto& [n, v] : h.c.dims) defs += " --dim " + n + "=" + std::to_string(v);
    CAPTURE(defs);
    std::string log;
    bool clean = false;
    for (bool stage : {true, false}) {
      if (h.tma && !stage) continue;
      CAPTURE(stage);
      EmulateOptions options;
      options.stageTma = stage;
      int rc = runEmulated(h.c, "sm_90a", &log, &clean, options);
      INFO(log);
      CHECK(clean);
      CHECK(rc == 0);
      CHECK((log.find("through a copy whose rows are padded") != std::string::npos) == (!h.tma && stage));
      CHECK((log.find("version without TMA") != std::string::npos) == (!h.tma && !stage));
    }
  }
}

// On sm_90a the attention example's gemms run as wgmma in place: the scores
// from shared-memory descriptors (SS), the output with the probabilities
// read from registers (RS); they must run clean and match the interpreter.
TEST_CASE("the sm_90a flash-attention example through wgmma runs clean in the CUDA emulator") {
  const std::vector<Case> cases = {
      {"examples/flash_attention/mha_fwd_bshd.tl", {}, {{"B", 1}, {"S", 200}, {"H", 2}}},
      {"examples/flash_attention/mha_fwd_bshd.tl", {{"causal", "True"}, {"D", "64"}, {"groups", "2"}},
       {{"B", 1}, {"S", 129}, {"H", 2}}},
      {"examples/flash_attention/mha_fwd_bshd.tl",
       {{"dtype", "bfloat16"}, {"block_M", "64"}, {"block_N", "64"}, {"threads", "128"}}, {{"B", 2}, {"S", 1}, {"H", 1}}},
      {"examples/flash_attention/mha_fwd_bhsd.tl", {{"causal", "True"}, {"D", "64"}}, {{"B", 1}, {"S", 150}, {"H", 2}}},
      // The default tiles of D=256 (64 keys) and D=64 (192 rows on 384 threads).
      {"examples/flash_attention/mha_fwd_bshd.tl", {{"D", "256"}}, {{"B", 1}, {"S", 70}, {"H", 1}}},
      {"examples/flash_attention/mha_fwd_bshd.tl", {{"D", "64"}}, {{"B", 1}, {"S", 200}, {"H", 1}}},
  };
  for (const Case& c : cases) checkEmulated(c, "sm_90a");
}

// Kernels in TileLang's spelling (tests/tilelang/): a flash attention whose
// pipeline plan is written in TileLang's form (`group=`, -1 entries), and a
// batched gemm with `T.dynamic`, `T.use_swizzle` on a 3-D grid (3 rows of
// blocks in panels of 2), TileLang's -1 plan and `disable_tma=True`.
TEST_CASE("TileLang's pipeline plans, 3-D swizzle and dynamic dimensions run clean in the CUDA emulator") {
  const std::vector<Case> cases = {
      {"tests/tilelang/flash_attention.tl", {{"dim", "64"}}, {{"batch", 1}, {"heads", 2}, {"seq_len", 100}}},
      {"tests/tilelang/batched_gemm.tl", {{"N", "70"}, {"K", "50"}}, {{"batch", 3}, {"M", 150}}},
  };
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const Case& c : cases) checkEmulated(c, arch);
}

// A split-K gemm (bench/zoo/gemm_splitk.tl): its trip count is a let of the
// kernel, which the TMA producer substitutes; on sm_90a it takes the
// warp-specialized mainloop and adds its partial products with atomics.
TEST_CASE("the sm_90a split-K gemm through TMA and wgmma runs clean in the CUDA emulator") {
  for (auto dims : {std::map<std::string, int64_t>{{"M", 150}, {"N", 300}, {"K", 200}},
                    std::map<std::string, int64_t>{{"M", 128}, {"N", 128}, {"K", 1000}}})
    checkEmulated({"bench/zoo/gemm_splitk.tl", {}, dims}, "sm_90a");
}

// An int8 gemm (bench/zoo/gemm_int8.tl, B as [N, K]): on sm_90a its mainloop
// runs int8 wgmma (k32, int32 accumulators) from TMA tiles when the rows are
// 16-byte multiples, mma.sync otherwise; exact against the interpreter.
TEST_CASE("the sm_90a int8 gemm through TMA and int8 wgmma runs clean in the CUDA emulator") {
  for (auto dims : {std::map<std::string, int64_t>{{"M", 130}, {"N", 136}, {"K", 96}},
                    std::map<std::string, int64_t>{{"M", 256}, {"N", 128}, {"K", 256}},
                    std::map<std::string, int64_t>{{"M", 70}, {"N", 50}, {"K", 200}}})
    checkEmulated({"bench/zoo/gemm_int8.tl", {}, dims}, "sm_90a");
}

// The float8 gemms (examples/gemm_fp8/): on sm_90a the per-tensor-scale
// gemm's mainloop runs float8 wgmma (k32) from TMA tiles, and the block-scaled
// one's gemm runs as float8 wgmma in place (its loop warp-specialized where
// TMA can load A and B); on sm_89 both run mma.sync
// m16n8k32 on float8 fragments. At sizes the tiles divide and sizes they do
// not, for both float8 types.
TEST_CASE("the float8 gemms run on float8 tensor cores clean in the CUDA emulator") {
  const std::vector<Define> small = {{"block_M", "64"}, {"block_N", "64"}, {"threads", "128"}};
  std::vector<Define> e5 = small;
  e5.push_back({"in_dtype", "float8_e5m2"});
  const std::vector<Case> cases = {
      {"examples/gemm_fp8/gemm_fp8.tl", {}, {{"M", 128}, {"N", 256}, {"K", 256}}},
      {"examples/gemm_fp8/gemm_fp8.tl", {}, {{"M", 130}, {"N", 270}, {"K", 200}}},
      {"examples/gemm_fp8/gemm_fp8.tl", small, {{"M", 70}, {"N", 50}, {"K", 96}}},
      {"examples/gemm_fp8/gemm_fp8.tl", e5, {{"M", 64}, {"N", 130}, {"K", 160}}},
      {"examples/gemm_fp8/gemm_fp8_blockscale.tl", small, {{"M", 70}, {"N", 200}, {"K", 300}}},
      // Rows TMA can load: A and B by TMA, the column of A's scales by the
      // producer threads' cp.async beside them; with two stages (the
      // default) in order, with three (sm_90a) the scaled add one K step
      // behind the wgmmas.
      {"examples/gemm_fp8/gemm_fp8_blockscale.tl", {}, {{"M", 200}, {"N", 300}, {"K", 400}}},
      {"examples/gemm_fp8/gemm_fp8_blockscale.tl", {{"stages", "3"}}, {{"M", 200}, {"N", 300}, {"K", 400}}},
      {"examples/gemm_fp8/gemm_fp8_blockscale.tl", {{"stages", "3"}}, {{"M", 130}, {"N", 256}, {"K", 256}}},
  };
  for (const char* arch : {"sm_90a", "sm_89"}) {
    CAPTURE(arch);
    for (const Case& c : cases) checkEmulated(c, arch);
  }
}

// A float32 gemm with B as [N, K] (bench/zoo/gemm_nt.tl): on sm_90a its
// mainloop runs tf32 wgmma (k8, both operands K-major) from TMA tiles, and
// it matches the interpreter at tf32 tolerances.
TEST_CASE("the sm_90a float32 gemm through TMA and tf32 wgmma runs clean in the CUDA emulator") {
  const std::vector<Define> f32 = {{"dtype", "float32"}, {"block_K", "32"}};
  std::vector<Define> small = f32;
  for (auto [n, v] : {std::pair{"block_M", "64"}, std::pair{"block_N", "64"}, std::pair{"threads", "128"}})
    small.push_back({n, v});
  for (const Case& c : std::vector<Case>{{"bench/zoo/gemm_nt.tl", f32, {{"M", 128}, {"N", 256}, {"K", 64}}},
                                         {"bench/zoo/gemm_nt.tl", f32, {{"M", 130}, {"N", 264}, {"K", 100}}},
                                         {"bench/zoo/gemm_nt.tl", small, {{"M", 70}, {"N", 50}, {"K", 40}}}})
    checkEmulated(c, "sm_90a");
}

// Persistent kernels (the default): the emulated GPU has two SMs, so each
// block loops over several tiles, its producer running ahead into the next
// tile's stages; the ring's barriers, the release of each tile's last stage
// and the barrier between tiles are what these check, with the split-K
// gemm's per-tile lets, int8 and float8 mainloops, rasterized and plain
// grids, at sizes the tiles divide and sizes they do not; and the general
// form's consumers (which carry the ring's stage and phase across tiles):
// the block-scaled gemm's deferred loop, attention, a dequantizing gemm and
// the split-K decode. The same kernels built --no-persistent (a block per
// tile) run too.
TEST_CASE("warp-specialized kernels, persistent and not, loop over their tiles clean in the CUDA emulator") {
  EmulateOptions persistent, perTile;
  persistent.persistent = true;
  perTile.persistent = false;
  const std::vector<Define> wide = {{"block_M", "128"}, {"block_N", "256"}, {"block_K", "64"}, {"threads", "256"}};
  const std::vector<Case> cases = {
      {"examples/gemm/gemm.tl", wide, {{"M", 512}, {"N", 512}, {"K", 64}}},
      // One consumer warpgroup, two blocks per SM: a block per tile either way.
      {"examples/gemm/gemm.tl", {}, {{"M", 300}, {"N", 270}, {"K", 72}}},
      {"examples/gemm/gemm.tl", wide, {{"M", 520}, {"N", 600}, {"K", 130}}},
      {"bench/zoo/gemm_splitk.tl", {}, {{"M", 150}, {"N", 300}, {"K", 200}}},
      {"bench/zoo/gemm_int8.tl", {}, {{"M", 256}, {"N", 384}, {"K", 256}}},
      {"examples/gemm_fp8/gemm_fp8.tl", {}, {{"M", 300}, {"N", 600}, {"K", 256}}},
      {"examples/gemm_fp8/gemm_fp8_blockscale.tl", {}, {{"M", 300}, {"N", 512}, {"K", 640}}},
      {"examples/flash_attention/mha_fwd_bhsd.tl", {{"B", "1"}, {"H", "2"}, {"S", "300"}, {"D", "64"}, {"causal", "True"}}, {}},
      {"examples/dequantize_gemm/w4a16_gemm.tl", {{"group", "64"}}, {{"M", 37}, {"N", 300}, {"K", 256}}},
      {"examples/dequantize_gemm/w4a16_decode.tl", {{"group", "64"}, {"split", "3"}}, {{"M", 3}, {"N", 300}, {"K", 1000}}},
      // Six stages: the producer's scale copies lag four iterations (11 and
      // 10 per tile, not multiples of four).
      {"examples/dequantize_gemm/w4a16_decode.tl", {{"split", "2"}, {"stages", "6"}}, {{"M", 1}, {"N", 300}, {"K", 2600}}},
  };
  for (const Case& c : cases) {
    checkEmulated(c, "sm_90a", persistent);
    checkEmulated(c, "sm_90a", perTile);
  }
}

// Transposes written element by element, staged through a shared tile by
// stage-transposed-stores, at sizes their tiles do not divide.
TEST_CASE("element-by-element transposes staged through shared memory run clean in the CUDA emulator") {
  for (const Case& c : std::vector<Case>{{"tests/cuda_emu_examples/transposed_stores.tl", {}, {{"M", 70}, {"N", 100}}},
                                         {"tests/cuda_emu_examples/transposed_stores.tl", {}, {{"M", 64}, {"N", 33}}}})
    for (const char* arch : {"sm_90a", "sm_80"}) checkEmulated(c, arch);
}

// Zoo kernels whose fragments and Parallel nests take the register column
// reductions, the reductions into shared memory and the vector accesses of
// plain nests, at sizes their tiles do not divide.
TEST_CASE("zoo kernels with column reductions and vectorized nests run clean in the CUDA emulator") {
  const std::vector<Case> cases = {
      {"bench/zoo/col_sum.tl", {}, {{"M", 100}, {"N", 300}}},
      {"bench/zoo/groupnorm.tl", {{"C", "64"}, {"HW", "300"}}, {{"B", 2}}},
      {"bench/zoo/embedding.tl", {}, {{"T_", 30}, {"V", 50}}},
      {"bench/zoo/permute_3d.tl", {}, {{"B", 2}, {"M", 50}, {"N", 70}}},
      // Column vectors in a warp-wide row group (32 threads per row).
      {"bench/zoo/bias_add_mixed.tl", {}, {{"M", 50}, {"N", 700}}},
  };
  for (const Case& c : cases) checkEmulated(c, "sm_90a");
}
