// Data-driven tests of the cuda-auto-pipeline pass on textual IR: every
// tests/cuda/auto_pipeline/*.tir is parsed, planned (pipeline-planning), run
// through the pass with the shared-memory budget of its `// BUDGET: <bytes>`
// line (default: half of an sm_90a block's), and printed; the tile IR is
// checked against the file's CHECK lines.
#include <doctest/doctest.h>

#include <filesystem>

#include "compiler/backends/cuda/cuda_auto_pipeline.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/pass_registry.h"
#include "tests/support/filecheck.h"
#include "tests/support/test_files.h"

using namespace tlc;
namespace fs = std::filesystem;

TEST_CASE("every tests/cuda/auto_pipeline/*.tir file is pipelined as its CHECK lines expect") {
  auto files = testing::readTestFiles(fs::path(TLC_SOURCE_DIR) / "tests" / "cuda" / "auto_pipeline", ".tir");
  REQUIRE(!files.empty());
  for (const testing::TestFile& f : files) {
    INFO("file: " << f.name);
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto module = ir::parseIRModule(sources, diags, sources.addBuffer(f.name, f.text));
    REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
    int64_t budget = cuda::CudaOptions{}.maxSharedBytes / 2;
    if (size_t at = f.text.find("// BUDGET: "); at != std::string::npos) budget = std::stoll(f.text.substr(at + 11));
    passes::PassContext ctx(diags, passes::PassOptions{});
    ir::Module planned = passes::findPass("pipeline-planning")->run(*module, ctx);
    std::string printed = ir::printModule(cuda::autoPipeline(planned, budget));
    auto check = testing::fileCheck(printed, f.text);
    CHECK_MESSAGE(check.ok, check.message);
  }
}
