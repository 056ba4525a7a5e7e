// T.gemm on the CDNA matrix cores: the HIP C of gemms in every operand
// orientation, float16, bfloat16, int8, float32 and float8 (gfx942; gfx90a's
// multiply-add fallback), 32x32 and 16x16 blocks, register
// epilogues and row reductions over the MFMA accumulator layout, an
// accumulator in LDS and an A operand held in registers, runs clean in the
// emulator (MFMA as a 64-lane wavefront collective) and equals the
// interpreter at sizes the tiles do not divide, on gfx90a and gfx942.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/hip/hip_archs.h"
#include "compiler/driver/emulate_target.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;
using namespace tlc::driver;

namespace {

const char* kFile = "tests/cuda_emu_examples/mfma/gemm_variants.tl";

struct Case {
  const char* func;
  std::map<std::string, int64_t> dims;
  const char* helper;       // the MFMA helper its HIP C calls ("": none, the multiply-add fallback)
  const char* gfx942 = "";  // another one on gfx942 (its int8 and float8 forms)
};

}  // namespace

TEST_CASE("gemms on MFMA in the emulator match the interpreter on gfx90a and gfx942") {
  const std::vector<Case> cases = {
      {"gemm_nt", {{"M", 70}, {"N", 90}, {"K", 40}}, "tlc::mfma_32x32x8_f16"},
      {"gemm_tn", {{"M", 50}, {"N", 33}, {"K", 20}}, "tlc::mfma_16x16x16_f16"},
      {"gemm_tt", {{"M", 65}, {"N", 70}, {"K", 33}}, "tlc::mfma_32x32x8_bf16"},
      {"gemm_rows", {{"M", 45}, {"N", 48}, {"K", 50}}, "tlc::mfma_16x16x16_f16"},
      {"gemm_shared_acc", {{"M", 40}, {"N", 35}, {"K", 70}}, "tlc::mfma_32x32x8_f16"},
      {"gemm_chain", {{"M", 70}, {"N", 100}, {"K", 40}}, "tlc::mfma_32x32x8_f16"},
      {"gemm_i8_nt", {{"M", 70}, {"N", 100}, {"K", 150}}, "tlc::mfma_32x32x8_i8", "tlc::mfma_32x32x16_i8"},
      {"gemm_i8_nn", {{"M", 45}, {"N", 50}, {"K", 130}}, "tlc::mfma_16x16x16_i8", "tlc::mfma_16x16x32_i8"},
      {"gemm_f32", {{"M", 70}, {"N", 50}, {"K", 40}}, "tlc::mfma_32x32x2_f32"},
      {"gemm_f32_nt", {{"M", 50}, {"N", 20}, {"K", 30}}, "tlc::mfma_16x16x4_f32"},
      {"gemm_fp8_nt", {{"M", 70}, {"N", 100}, {"K", 150}}, "", "tlc::mfma_32x32x16_e4m3"},
      {"gemm_fp8_tn", {{"M", 45}, {"N", 50}, {"K", 100}}, "", "tlc::mfma_16x16x32_e5m2"},
      {"gemm_wide_out", {{"M", 200}, {"N", 150}, {"K", 100}}, "tlc::mfma_32x32x8_i8", "tlc::mfma_32x32x16_i8"},
  };
  for (const char* arch : {"gfx90a", "gfx942"})
    for (const Case& c : cases) {
      CAPTURE(arch);
      CAPTURE(c.func);
      SourceManager sm;
      DiagnosticEngine diags{sm};
      ir::Module module = test::compileTreeFile(kFile, sm, diags);
      auto hip = cuda::generateCuda(module, hip::hipOptions(arch), diags);
      REQUIRE_MESSAGE(hip, diags.renderAll());
      // Every function of the file is in the module; this one's kernel calls its helper.
      const std::string& src = hip->source;
      size_t at = src.find(std::string(c.func) + "_kernel");
      REQUIRE(at != std::string::npos);
      size_t next = src.find("__global__", at);
      const std::string helper = std::string(arch) == "gfx942" && *c.gfx942 ? c.gfx942 : c.helper;
      const std::string body = src.substr(at, next == std::string::npos ? std::string::npos : next - at);
      if (helper.empty())
        CHECK(body.find("tlc::mfma_") == std::string::npos);
      else
        CHECK(body.find(helper + "(") != std::string::npos);
      std::ostringstream out;
      RunSettings settings;
      settings.kernel = c.func;
      settings.dims = c.dims;
      settings.seed = 5;
      settings.check = true;
      settings.out = &out;
      int rc = runEmulated(module, settings, hip::hipOptions(arch), diags);
      const std::string log = out.str() + diags.renderAll();
      INFO(log);
      for (DiagKind bad : {DiagKind::CudaEmuCheckFailed, DiagKind::CudaEmuLaunchFailed, DiagKind::CudaEmuBuildFailed})
        CHECK(!diags.hasKind(bad));
      CHECK(rc == 0);
    }
}

TEST_CASE("the HIP C says which fragments have an MFMA accumulator layout") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile(kFile, sm, diags);
  auto hip = cuda::generateCuda(module, hip::hipOptions("gfx942"), diags);
  REQUIRE_MESSAGE(hip, diags.renderAll());
  CHECK(hip->source.find("registers, MFMA 32x32 accumulator layout (2 x 1 wavefronts)") != std::string::npos);
  CHECK(hip->source.find("registers, MFMA 16x16 accumulator layout") != std::string::npos);
}

// Attention at 128 x 64 tiles and D = 128 fills the 64 KB of LDS with Q, K
// and V; the probabilities' MFMA stage does not fit beside them: a located
// error that lists the buffers and the stage.
TEST_CASE("an MFMA stage that does not fit in LDS is a located error naming it") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("examples/flash_attention/mha_fwd_bhsd.tl", sm, diags,
                                            {{"block_M", "128"}, {"block_N", "64"}});
  auto hip = cuda::generateCuda(module, hip::hipOptions("gfx942"), diags);
  CHECK(!hip);
  REQUIRE(diags.hasKind(DiagKind::CudaSharedMemoryOverflow));
  const Diagnostic& d = diags.diagnostics()[0];
  CHECK(d.loc.line > 0);
  CHECK(d.message.find("65536") != std::string::npos);
  bool stageNote = false, qNote = false;
  for (auto& n : d.notes) {
    stageNote |= n.message.find("the LDS stage of MFMA gemms") != std::string::npos;
    qNote |= n.message.find("`Q_s`: 32768 bytes") != std::string::npos;
  }
  CHECK(stageNote);
  CHECK(qNote);
}


TEST_CASE("MFMA operands read along or across k are free of bank conflicts, their copies included") {
  // The operand tiles whose k runs along the rows (A not transposed, B
  // transposed) take the run swizzle chosen from the MFMA read (8-byte runs;
  // 4-byte reads: 8 bytes for 16-row blocks, 4 for 32-row ones); those read
  // across k (B not transposed) the layout that spreads the lane groups E
  // rows apart; an A operand's LDS stage and an MFMA accumulator's staging
  // tile the row pitch their stores and reads need: the whole kernel's LDS
  // traffic, copies and reads, reaches the emulator's conflict-free count
  // (before: 5120 against 3584 wavefronts for float16 NT, 14336 against 8192
  // for float32, 11776 against 7168 for int8 NN on gfx942, 18432 against 9984
  // for float8 TN, 5248 against 4352 for the chained gemms, at 128^3).
  struct Gemm {
    const char* func;
    const char* dtype;
    bool gfx90a;
  };
  const Gemm gemms[] = {{"gemm_nt", "float16", true}, {"gemm_nt", "bfloat16", true}, {"gemm_tt", "bfloat16", true},
                        {"gemm_i8_nt", "", true},     {"gemm_f32", "", true},         {"gemm_fp8_nt", "", false},
                        {"gemm_shared_acc", "", true}, {"gemm_i8_nn", "", true},     {"gemm_rows", "", true},
                        {"gemm_chain", "", true},      {"gemm_fp8_tn", "", false}};
  for (const char* arch : {"gfx90a", "gfx942"})
    for (const Gemm& g : gemms) {
      if (!g.gfx90a && std::string(arch) == "gfx90a") continue;
      CAPTURE(arch);
      CAPTURE(g.func);
      CAPTURE(g.dtype);
      std::vector<Define> defines;
      if (*g.dtype) defines.push_back({"dtype", g.dtype});
      const test::SharedTraffic t = test::sharedTraffic(test::emulatedAt128(kFile, g.func, arch, defines));
      CHECK(t.wavefronts == t.ideal);
    }
}

// A transposed (read across k) in 48-row tiles: the gemm's own LDS reads
// are free of bank conflicts (the copies of the ragged edge tiles, element
// by element, keep some).
TEST_CASE("MFMA operands read across k from a transposed A are free of bank conflicts") {
  std::ifstream in(std::string(TLC_SOURCE_DIR) + "/" + kFile);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // The line of gemm_tn's gemm.
  size_t line = 0;
  for (size_t i = 0; i < lines.size() && !line; ++i)
    if (lines[i].find("def gemm_tn[") == 0)
      for (size_t j = i + 1; j < lines.size() && !line; ++j)
        if (lines[j].find("T.gemm(") != std::string::npos) line = j + 1;
  REQUIRE(line > 0);
  for (const char* arch : {"gfx942", "gfx90a"}) {
    CAPTURE(arch);
    const std::string log = test::emulatedAt128(kFile, "gemm_tn", arch);
    CHECK(log.find("shared-memory bank conflicts") != std::string::npos);  // elsewhere: the check sees the warnings
    CHECK(log.find(".tl:" + std::to_string(line) + ": warning: shared-memory bank conflicts") == std::string::npos);
  }
}
