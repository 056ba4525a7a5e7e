// expand-pipelines preserves meaning: every example with a pipelined loop is
// planned (inline-loop-lets, pipeline-planning) and run by the reference
// interpreter before and after the expansion on the same seeded inputs, at
// sizes the tiles do not divide; the outputs must be bit-identical. The
// interpreter completes asynchronous copies only at their wait and rejects
// reading a tile an unfinished copy writes, so a misplaced wait, a wrong
// version or a copy issued too late cannot pass; the cases after the first
// check that it does reject them.
#include "compiler/ir/ir_parser.h"
#include "compiler/passes/cpu_pipeline.h"
#include "compiler/passes/expand_pipelines.h"
#include "compiler/passes/pass_registry.h"
#include "compiler/sema/frontend.h"
#include "tests/ir_roundtrip/example_runs.h"

using namespace tlc;
using namespace tlc::testing;

namespace {

struct CountExpanded : ir::IRVisitor {
  int loops = 0;
  void visitAlloc(const ir::AllocStmt* a) override { loops += a->versions > 1; }
};

std::optional<ir::Module> runPasses(const ir::Module& m, const char* names, DiagnosticEngine& diags) {
  std::string error;
  auto pipeline = passes::pipelineFromNames(names, error);
  REQUIRE_MESSAGE(pipeline.has_value(), error);
  passes::PassContext ctx(diags);
  return pipeline->run(m, ctx);
}

}  // namespace

TEST_CASE("expanded pipelines compute exactly what the planned loops compute") {
  int compared = 0, tiles = 0;
  for (const std::filesystem::path& path : exampleFiles()) {
    INFO("example: " << path.string());
    SourceManager sources;
    DiagnosticEngine diags(sources);
    ir::Module module = compileExample(path, sources, diags);
    auto planned = runPasses(module, "inline-loop-lets,pipeline-planning", diags);
    REQUIRE_MESSAGE(planned.has_value(), diags.renderAll());
    auto expanded = runPasses(*planned, "expand-pipelines", diags);
    REQUIRE_MESSAGE(expanded.has_value(), diags.renderAll());
    for (size_t fi = 0; fi < planned->funcs.size(); ++fi) {
      if (expanded->funcs[fi] == planned->funcs[fi]) continue;  // nothing expanded
      CountExpanded count;
      count.visit(expanded->funcs[fi]->body);
      tiles += count.loops;
      const ir::PrimFunc& f = *planned->funcs[fi];
      std::vector<interp::HostTensor> inputs = exampleInputs(f);
      std::string errA, errB;
      auto want = runExample(f, inputs, errA);
      REQUIRE_MESSAGE(want.has_value(), errA);
      auto got = runExample(*expanded->funcs[fi], inputs, errB);
      REQUIRE_MESSAGE(got.has_value(), errB);
      for (size_t i = 0; i < want->size(); ++i) CHECK(bitIdentical((*want)[i], (*got)[i]));
      ++compared;
    }
  }
  // The gemms, attention and convolution examples pipeline their tiles.
  CHECK(compared >= 8);
  CHECK(tiles >= 16);
}

namespace {

// Runs the one function of `text` on seeded inputs; returns the diagnostics.
std::string runText(const std::string& text) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("async.tir", text);
  auto module = ir::parseIRModule(sources, diags, file);
  REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
  std::string errors;
  auto out = runExample(*module->funcs[0], exampleInputs(*module->funcs[0]), errors);
  return out ? "" : errors;
}

// A depth-2 pipeline over A's columns, with `steady` as the steady state's
// statements before the consumer.
std::string pipeline(const std::string& prologueWait, const std::string& steady, const std::string& drain = "wait_group(0)") {
  return "func @f(A: float32[64, 8], out: float32[64]) {\n"
         "  kernel grid(1) threads(64) as (b) {\n"
         "    alloc S: shared float32[64] versions(2)\n"
         "    alloc acc: fragment float32[64]\n"
         "    fill(acc, 0.0)\n"
         "    version(S) = 0 {\n"
         "      copy_async(A[0 : +64, 0 : +1], S)\n"
         "    }\n"
         "    commit_group\n" +
         prologueWait +
         "    for j in serial(0 : +8) {\n" + steady +
         "      version(S) = j % 2 {\n"
         "        for i in parallel(0 : +64) {\n"
         "          acc[i] = acc[i] + S[i]\n"
         "        }\n"
         "      }\n"
         "    }\n" +
         drain + "\n"
         "    copy(acc, out)\n"
         "  }\n"
         "}\n";
}

const std::string kIssueNext =
    "      if j + 1 < 8 {\n"
    "        version(S) = (j + 1) % 2 {\n"
    "          copy_async(A[0 : +64, j + 1 : +1], S)\n"
    "        }\n"
    "      }\n"
    "      commit_group\n";

}  // namespace

TEST_CASE("the interpreter runs a correct hand-written pipeline") {
  CHECK(runText(pipeline("", "      wait_group(0)\n" + kIssueNext)) == "");
}

TEST_CASE("reading a tile before the wait for its copy is an error") {
  // Waiting after the next copy is issued, the newest group may stay
  // pending, not the two newest: the older is iteration j's own tile.
  CHECK(runText(pipeline("", kIssueNext + "      wait_group(1)\n")) == "");
  std::string e = runText(pipeline("", kIssueNext + "      wait_group(2)\n"));
  CHECK(e.find("while an asynchronous copy to it is in flight") != std::string::npos);
  CHECK(e.find("[invalid-program]") != std::string::npos);
}

TEST_CASE("a copy no wait completes is an error at the end of its block") {
  auto lone = [](const std::string& after) {
    return runText(
        "func @f(A: float32[64], out: float32[64]) {\n"
        "  kernel grid(1) threads(64) as (b) {\n"
        "    alloc S: shared float32[64]\n"
        "    copy_async(A, S)\n" +
        after +
        "    copy(A, out)\n"
        "  }\n"
        "}\n");
  };
  CHECK(lone("    commit_group\n    wait_group(0)\n") == "");
  CHECK(lone("    commit_group\n").find("never completed") != std::string::npos);
  CHECK(lone("").find("never committed") != std::string::npos);
}

TEST_CASE("a version outside the buffer's versions is an error") {
  std::string text = pipeline("", "      wait_group(0)\n" + kIssueNext);
  const std::string consumer = "version(S) = j % 2";
  size_t at = text.find(consumer);
  REQUIRE(at != std::string::npos);
  text.replace(at, consumer.size(), "version(S) = j");
  CHECK(runText(text).find("version 2 of `S`, which has 2 versions") != std::string::npos);
}

// expected-error: async-unsupported (at the first asynchronous statement)
TEST_CASE("the CPU target rejects expanded pipelines with a located error") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module = compileExample(std::filesystem::path(TLC_SOURCE_DIR) / "examples/gemm/gemm.tl", sources, diags);
  auto expanded = runPasses(module, "inline-loop-lets,pipeline-planning,expand-pipelines", diags);
  REQUIRE(expanded.has_value());
  passes::PassContext ctx(diags);
  CHECK(!cpu::lowerForCpu(*expanded, ctx, cpu::CpuLoweringOptions{}).has_value());
  std::string text = diags.renderAll();
  CHECK(text.find("a versioned allocation in `@gemm`: the CPU target compiles Pipelined loops itself") !=
        std::string::npos);
  CHECK(text.find("[async-unsupported]") != std::string::npos);
  CHECK(text.find("gemm.tl:") != std::string::npos);
}
