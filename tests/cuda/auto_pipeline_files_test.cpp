// Data-driven tests of the cuda-auto-pipeline pass on textual IR: every
// tests/cuda/auto_pipeline/*.tir is parsed, planned (pipeline-planning), run
// through the pass with the shared-memory budget of its `// BUDGET: <bytes>`
// line (default: half of an sm_90a block's), and printed; the tile IR is
// checked against the file's CHECK lines.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_auto_pipeline.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/pass_registry.h"
#include "tests/support/filecheck.h"
#include "tests/support/tir_files.h"

using namespace tlc;

TEST_CASE("every tests/cuda/auto_pipeline/*.tir file is pipelined as its CHECK lines expect") {
  testing::forEachTirFile("cuda/auto_pipeline", [](const testing::TestFile& f, const ir::Module& module,
                                                   DiagnosticEngine& diags) {
    int64_t budget = cuda::CudaOptions{}.maxSharedBytes / 2;
    if (size_t at = f.text.find("// BUDGET: "); at != std::string::npos) budget = std::stoll(f.text.substr(at + 11));
    passes::PassContext ctx(diags, passes::PassOptions{});
    ir::Module planned = passes::findPass("pipeline-planning")->run(module, ctx);
    auto check = testing::fileCheck(ir::printModule(cuda::autoPipeline(planned, budget)), f.text);
    CHECK_MESSAGE(check.ok, check.message);
  });
}
