// hoist-guarded-copies preserves meaning: the functions of its pass test
// (a block-sparse gemm, and loops whose copies must stay guarded) run in the
// interpreter before and after the pass on the same seeded inputs, with
// bit-identical results; and the zoo's block-sparse gemm and attention,
// after the CUDA passes' first steps, have their tile loads planned ahead of
// the guarded statements.
#include <fstream>
#include <sstream>

#include "compiler/ir/printer.h"
#include "tests/ir_roundtrip/example_runs.h"

using namespace tlc;
using namespace tlc::testing;

TEST_CASE("hoisting guarded copies changes no result") {
  std::ifstream in(std::filesystem::path(TLC_SOURCE_DIR) / "tests/passes/hoist_guarded_copies.tir");
  std::stringstream text;
  text << in.rdbuf();
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto module = ir::parseIRModule(sources, diags, sources.addBuffer("hoist.tir", text.str()));
  REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
  auto hoisted = runPassNames(*module, "hoist-guarded-copies", diags);
  REQUIRE(hoisted.has_value());
  int changed = 0;
  for (size_t fi = 0; fi < module->funcs.size(); ++fi) {
    INFO("function: " << module->funcs[fi]->name);
    changed += hoisted->funcs[fi] != module->funcs[fi];
    std::vector<interp::HostTensor> inputs = exampleInputs(*module->funcs[fi]);
    std::string errA, errB;
    auto want = runExample(*module->funcs[fi], inputs, errA);
    REQUIRE_MESSAGE(want.has_value(), errA);
    auto got = runExample(*hoisted->funcs[fi], inputs, errB);
    REQUIRE_MESSAGE(got.has_value(), errB);
    for (size_t i = 0; i < want->size(); ++i) CHECK(bitIdentical((*want)[i], (*got)[i]));
  }
  CHECK(changed == 2);  // @blocksparse, @data_guard; @kept keeps every copy guarded
}

namespace {

// The zoo kernel `name` after inline-loop-lets, hoist-guarded-copies and pipeline-planning.
std::string planned(const char* name) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module =
      compileExample(std::filesystem::path(TLC_SOURCE_DIR) / "bench/zoo" / (std::string(name) + ".tl"), sources, diags);
  auto out = runPassNames(module, "inline-loop-lets,hoist-guarded-copies,pipeline-planning", diags);
  REQUIRE_MESSAGE(out.has_value(), diags.renderAll());
  return ir::printModule(*out);
}

}  // namespace

TEST_CASE("a block-sparse gemm's tile loads run ahead of its guarded gemm") {
  CHECK(planned("gemm_blocksparse").find("num_stages=3, order=[0, 1, 2], stage=[0, 0, 2])") != std::string::npos);
}

TEST_CASE("a block-sparse attention's K and V loads run ahead of its guarded softmax and gemms") {
  // K's copy, V's copy, then the guarded rest in the last stage.
  CHECK(planned("attention_blocksparse").find("num_stages=2, order=[0, 1, 2], stage=[0, 0, 1])") !=
        std::string::npos);
}
