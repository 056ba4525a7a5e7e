// simplify preserves meaning: each example, before and after the CPU
// lowering (whose guards and clamps give the range reasoning real work), is
// run by the reference interpreter with and without simplify on the same
// seeded inputs, with dynamic sizes the tiles do not divide; the outputs
// must be bit-identical.
#include "compiler/passes/cpu_pipeline.h"
#include "compiler/passes/simplify.h"
#include "compiler/sema/frontend.h"
#include "tests/ir_roundtrip/example_runs.h"

using namespace tlc;
using namespace tlc::testing;

TEST_CASE("simplified kernels compute exactly what the originals compute") {
  std::vector<std::filesystem::path> files = exampleFiles();
  int compared = 0;
  for (const std::filesystem::path& path : files) {
    INFO("example: " << path.string());
    SourceManager sources;
    DiagnosticEngine diags(sources);
    std::optional<ir::Module> module = compileExample(path, sources, diags);
    passes::PassContext ctx(diags);
    auto lowered = cpu::lowerForCpu(*module, ctx, cpu::CpuLoweringOptions{});
    REQUIRE(lowered.has_value());
    for (const ir::Module* m : {&*module, &*lowered}) {
      ir::Module simplified = passes::simplify(*m);
      for (size_t fi = 0; fi < m->funcs.size(); ++fi) {
        const ir::PrimFunc& f = *m->funcs[fi];
        std::vector<interp::HostTensor> inputs = exampleInputs(f);
        std::string errA, errB;
        auto want = runExample(f, inputs, errA);
        if (!want) {
          // The interpreter does not know every CPU intrinsic (e.g. cpu.gemm).
          CHECK_MESSAGE(m == &*lowered, errA);
          continue;
        }
        auto got = runExample(*simplified.funcs[fi], inputs, errB);
        REQUIRE_MESSAGE(got.has_value(), errB);
        for (size_t i = 0; i < want->size(); ++i) CHECK(bitIdentical((*want)[i], (*got)[i]));
        ++compared;
      }
    }
  }
  CHECK(compared >= static_cast<int>(files.size()) + 2);
}
