// The zoo's block-sparse kernels (bench/zoo/gemm_blocksparse.tl,
// attention_blocksparse.tl: the K loop's body under `if Mask[...]`) in the
// emulator against the interpreter, with half of the mask's entries zero, at
// sizes the tiles do not divide. hoist-guarded-copies moves their tile loads
// out of the `if`, so the loops pipeline; on sm_90a the producer issues a
// stage's TMA copies only where the mask keeps the tile (CopyStmt::usedWhen)
// and otherwise arrives on the stage's `full` barrier without bytes.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

int runMasked(const ir::Module& module, DiagnosticEngine& diags, const std::map<std::string, int64_t>& dims,
              const std::string& arch, std::string* log) {
  std::ostringstream out;
  driver::RunSettings settings;
  settings.dims = dims;
  settings.seed = 11;
  settings.check = true;
  settings.out = &out;
  settings.fills["Mask"] = {0.0, 2.0};  // 0 or 1
  int rc = driver::runCudaEmulated(module, settings, arch, diags, {});
  *log = out.str() + diags.renderAll();
  return rc;
}

}  // namespace

TEST_CASE("block-sparse kernels pipeline, skip the masked tiles' copies on sm_90a, and agree with the interpreter") {
  for (const auto& [file, dims] : std::vector<std::pair<std::string, std::map<std::string, int64_t>>>{
           {"bench/zoo/gemm_blocksparse.tl", {{"M", 300}, {"N", 200}, {"K", 330}}},
           {"bench/zoo/attention_blocksparse.tl", {{"B", 1}, {"H", 2}, {"S", 300}}}}) {
    SourceManager sm;
    DiagnosticEngine diags{sm};
    ir::Module module = test::compileTreeFile(file, sm, diags, {});
    for (const std::string arch : {"sm_80", "sm_90a"}) {
      CAPTURE(file);
      CAPTURE(arch);
      std::string src = test::pipelinedModuleSource(module, arch, diags);
      if (arch == "sm_90a") {
        // The producer: the tiles' bytes and copies only where the mask keeps
        // the tile, a plain arrival otherwise.
        size_t guard = src.find("if ((Mask[");
        REQUIRE(guard != std::string::npos);
        size_t expect = src.find("tlc::mbar_arrive_expect_tx(&tlc_full[", guard);
        size_t skip = src.find("} else {", expect);
        CHECK(expect != std::string::npos);
        CHECK(src.find("tlc::tma_load_", expect) < skip);
        CHECK(src.find("tlc::mbar_arrive(&tlc_full[", skip) < src.find("tlc::mbar_wait", skip));
      }
      std::string log;
      int rc = runMasked(module, diags, dims, arch, &log);
      INFO(log);
      CHECK(rc == 0);
    }
  }
}
