// Device builds without a GPU: a CUDA build writes `<out>.cubin.json` whose
// launch plan the runtime reads, the embed source carries it, and loading the
// module reports a missing driver cleanly (or, on a GPU machine, succeeds).
#include <doctest/doctest.h>

#ifdef TLC_TEST_HAVE_CUDA
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "compiler/backends/cuda/cubin_info.h"
#include "compiler/backends/metadata.h"
#include "compiler/driver/cuda_target.h"
#include "compiler/driver/header_gen.h"
#include "tests/runtime/build_helpers.h"
#include "tlc/runtime.h"

using namespace tlc;

namespace {

// Builds `m` for `arch` into `cubin` and reads the metadata beside it into
// *json; false when NVRTC is not available (the caller skips).
bool buildCubin(const ir::Module& m, DiagnosticEngine& diags, const std::string& arch, const std::string& cubin,
                std::string* json, bool persistent = false) {
  driver::CudaOptions options;
  options.arch = arch;
  options.persistent = persistent;
  int rc = driver::buildForCuda(m, cubin, options, diags);
  INFO(diags.renderAll());
  if (rc != 0 && diags.renderAll().find("NVRTC") != std::string::npos) {
    MESSAGE("NVRTC is not available; skipping");
    return false;
  }
  REQUIRE(rc == 0);
  std::ifstream in(cubin + ".json");
  json->assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

TEST_CASE("a CUDA build writes metadata with its launch plan; the runtime reads it") {
  auto dir = test::scratchDir("cuda-build");
  for (std::string ex : {"gemm/gemm", "softmax/softmax"}) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto m = test::compileTl(sources, diags, "examples/" + ex + ".tl", {"dtype=float32"});
    INFO(diags.renderAll());
    REQUIRE(m);
    std::string stem = ex.substr(ex.find('/') + 1);
    std::string cubin = (dir / (stem + "_cuda_sm_90.cubin")).string();
    std::string json;
    if (!buildCubin(*m, diags, "sm_90", cubin, &json)) return;
    meta::ParsedModule pm;
    std::string err;
    REQUIRE(meta::parseModuleMetadata(json, &pm, &err));
    CHECK(pm.target == "cuda:sm_90");
    CHECK(pm.binary == "cubin");
    REQUIRE(pm.kernels.size() == 1);
    CHECK(json.find("\"launches\"") != std::string::npos);
    CHECK(json.find("\"device_args\"") != std::string::npos);
    REQUIRE(driver::writeHostFiles(*m, cubin, (dir / (stem + "_cuda_sm_90.h")).string(),
                                   (dir / (stem + "_cuda_sm_90_embed.c")).string(), &err));
    std::ifstream e(dir / (stem + "_cuda_sm_90_embed.c"));
    std::string embed((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
    CHECK(embed.find("_metadata_[] =") != std::string::npos);

    tlc_module* mod = nullptr;
    tlc_status st = tlcLoadModule(cubin.c_str(), &mod);
    if (st == TLC_SUCCESS) {
      CHECK(tlcModuleBackend(mod) == TLC_BACKEND_CUDA);
      tlcUnloadModule(mod);
    } else {
      CHECK(st == TLC_ERROR_BACKEND_UNAVAILABLE);
      CHECK(std::string(tlcGetLastError()).find("CUDA driver") != std::string::npos);
    }
  }
}

TEST_CASE("an sm_90a gemm build lists its tensor maps and its version without TMA; the runtime reads them") {
  auto dir = test::scratchDir("cuda-build-tma");
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = test::compileTl(sources, diags, "examples/gemm/gemm.tl", {});
  INFO(diags.renderAll());
  REQUIRE(m);
  std::string cubin = (dir / "gemm_sm_90a.cubin").string();
  std::string json;
  if (!buildCubin(*m, diags, "sm_90a", cubin, &json)) return;
  INFO(json);
  // A: 16-row boxes of 32 columns (two 16-row slices per warp), 64-byte swizzle;
  // B: 32 rows of one 64-column panel, 128-byte swizzle.
  auto squeeze = [](const std::string& text) {
    std::string out;
    for (char c : text)
      if (c != ' ' && c != '\n') out += c;
    return out;
  };
  std::string compact = squeeze(json);
  // Both are gemm operands the kernel only reads: a launch may stage them
  // into padded rows (cuda::StagedTensor) with the cubin's tlc_stage_rows.
  // C, which the epilogue stores by TMA, has a store map (never staged).
  CHECK(compact.find(R"("tensor_maps":[{"box":[16,32],"param":0,"stage":true,"swizzle":64},)"
                     R"({"box":[32,64],"param":1,"stage":true,"swizzle":128},{"box":[)") != std::string::npos);
  CHECK(compact.find(R"("param":2,"stage":false,"store":true,"swizzle":)") != std::string::npos);
  CHECK(compact.find(R"("fallback":{"block":[128,1,1],"entry":"gemm_kernel0_no_tma")") != std::string::npos);
  CHECK(compact.find(R"("block":[256,1,1])") != std::string::npos);
  CHECK(compact.find(R"("persistent_blocks_per_sm":0)") != std::string::npos);
  // Built persistent: the launch says how many blocks per SM its grid has
  // (one: two consumer warpgroups); the version without TMA is not
  // persistent. These tiles (one consumer warpgroup, two blocks per SM)
  // keep a block per tile even so.
  std::string persistentJson;
  REQUIRE(buildCubin(*m, diags, "sm_90a", (dir / "gemm_persistent.cubin").string(), &persistentJson, true));
  CHECK(squeeze(persistentJson).find(R"("persistent_blocks_per_sm":0)") != std::string::npos);
  auto wide = test::compileTl(sources, diags, "examples/gemm/gemm.tl", {"block_N=256", "block_K=64", "threads=256"});
  REQUIRE(wide);
  REQUIRE(buildCubin(*wide, diags, "sm_90a", (dir / "gemm_wide_persistent.cubin").string(), &persistentJson, true));
  CHECK(squeeze(persistentJson).find(R"("persistent_blocks_per_sm":1)") != std::string::npos);
  // The version without TMA is a second cubin, compiled apart (at once with
  // the first) and carried in the metadata; the .cubin holds the TMA kernel.
  meta::ParsedModule pm;
  std::string err;
  REQUIRE(meta::parseModuleMetadata(json, &pm, &err));
  std::ifstream in(cubin, std::ios::binary);
  std::string primary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, int> primaryRegs = cuda::cubinRegisterCounts(primary),
                             fallbackRegs = cuda::cubinRegisterCounts(pm.fallbackImage);
  CHECK(primaryRegs.count("gemm_kernel0") == 1);
  CHECK(primaryRegs.count("gemm_kernel0_no_tma") == 0);
  CHECK(fallbackRegs.count("gemm_kernel0_no_tma") == 1);
  CHECK(fallbackRegs.count("gemm_kernel0") == 0);
  CHECK(primaryRegs.count(cuda::kStageRowsEntry) == 1);
  CHECK(fallbackRegs.count(cuda::kStageRowsEntry) == 0);
  tlc_module* mod = nullptr;
  tlc_status st = tlcLoadModule(cubin.c_str(), &mod);
  if (st == TLC_SUCCESS) {
    tlcUnloadModule(mod);
  } else {
    CHECK(st == TLC_ERROR_BACKEND_UNAVAILABLE);
  }
}

// Device builds go through the kernel cache: a second build of the same
// module is a hit with the same bytes, the metadata included; another
// binding is a miss.
TEST_CASE("CUDA builds through the kernel cache: miss, hit, miss on a changed binding") {
  std::string dir = std::string(TLC_BINARY_DIR) + "/tests/cuda-build-cache";
  std::filesystem::remove_all(dir);
  const char* saved = std::getenv("TLC_CACHE_DIR");
  std::string previous = saved ? saved : "";
  setenv("TLC_CACHE_DIR", dir.c_str(), 1);
  auto entries = [&] {
    size_t n = 0;
    if (std::filesystem::exists(dir))
      for (auto& e : std::filesystem::recursive_directory_iterator(dir)) n += e.path().extension() == ".bin";
    return n;
  };
  auto build = [&](const std::vector<std::string>& defines, const std::string& out, std::string* bytes,
                   std::string* json) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto m = test::compileTl(sources, diags, "examples/gemm/gemm.tl", defines);
    REQUIRE(m);
    if (!buildCubin(*m, diags, "sm_80", out, json)) return false;
    std::ifstream in(out, std::ios::binary);
    bytes->assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return true;
  };
  std::string base = std::string(TLC_BINARY_DIR) + "/tests/cache_gemm_";
  std::string a, aj, b, bj, c, cj;
  if (build({"K=64"}, base + "a.cubin", &a, &aj)) {
    CHECK(entries() == 2);  // the binary and its metadata
    REQUIRE(build({"K=64"}, base + "b.cubin", &b, &bj));
    CHECK(entries() == 2);
    CHECK(a == b);
    CHECK(aj == bj);
    REQUIRE(build({"K=128"}, base + "c.cubin", &c, &cj));
    CHECK(entries() == 4);
    CHECK(a != c);
  }
  if (saved) setenv("TLC_CACHE_DIR", previous.c_str(), 1);
  else unsetenv("TLC_CACHE_DIR");
}
#endif
