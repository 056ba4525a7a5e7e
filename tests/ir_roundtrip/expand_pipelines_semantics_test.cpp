// expand-pipelines preserves meaning: every example with a pipelined loop is
// planned (inline-loop-lets, pipeline-planning) and run by the reference
// interpreter before and after the expansion on the same seeded inputs, at
// sizes the tiles do not divide; the outputs must be bit-identical. The
// interpreter completes asynchronous copies only at their wait and rejects
// reading a tile an unfinished copy writes, so a misplaced wait, a wrong
// version or a copy issued too late cannot pass; the cases after the first
// check that it does reject them.
#include "compiler/passes/cpu_pipeline.h"
#include "compiler/passes/expand_pipelines.h"
#include "compiler/sema/frontend.h"
#include "tests/ir_roundtrip/example_runs.h"

using namespace tlc;
using namespace tlc::testing;

TEST_CASE("expanded pipelines compute exactly what the planned loops compute") {
  int tiles = 0;
  struct CountExpanded : ir::IRVisitor {
    int& tiles;
    explicit CountExpanded(int& t) : tiles(t) {}
    void visitAlloc(const ir::AllocStmt* a) override { tiles += a->versions > 1; }
  };
  int compared = compareExamplesAfter("expand-pipelines", [&](const ir::PrimFunc& f) { CountExpanded(tiles).visit(f.body); });
  // The gemms, attention and convolution examples pipeline their tiles.
  CHECK(compared >= 8);
  CHECK(tiles >= 16);
}

namespace {

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
  CHECK(runTirText(pipeline("", "      wait_group(0)\n" + kIssueNext)) == "");
}

TEST_CASE("reading a tile before the wait for its copy is an error") {
  // Waiting after the next copy is issued, the newest group may stay
  // pending, not the two newest: the older is iteration j's own tile.
  CHECK(runTirText(pipeline("", kIssueNext + "      wait_group(1)\n")) == "");
  std::string e = runTirText(pipeline("", kIssueNext + "      wait_group(2)\n"));
  CHECK(e.find("while an asynchronous copy to it is in flight") != std::string::npos);
  CHECK(e.find("[invalid-program]") != std::string::npos);
}

TEST_CASE("a copy no wait completes is an error at the end of its block") {
  auto lone = [](const std::string& after) {
    return runTirText(
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
  CHECK(runTirText(text).find("version 2 of `S`, which has 2 versions") != std::string::npos);
}

// expected-error: async-unsupported (at the first asynchronous statement)
TEST_CASE("the CPU target rejects expanded pipelines with a located error") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module = compileExample(std::filesystem::path(TLC_SOURCE_DIR) / "examples/gemm/gemm.tl", sources, diags);
  auto expanded = runPassNames(module, "inline-loop-lets,pipeline-planning,expand-pipelines", diags);
  REQUIRE(expanded.has_value());
  passes::PassContext ctx(diags);
  CHECK(!cpu::lowerForCpu(*expanded, ctx, cpu::CpuLoweringOptions{}).has_value());
  std::string text = diags.renderAll();
  CHECK(text.find("a versioned allocation in `@gemm`: the CPU target compiles Pipelined loops itself") !=
        std::string::npos);
  CHECK(text.find("[async-unsupported]") != std::string::npos);
  CHECK(text.find("gemm.tl:") != std::string::npos);
}
