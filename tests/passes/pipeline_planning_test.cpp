// pipeline-planning's checks of plans written by the user: each bad plan is
// a located error (expected-error: pipeline-plan-invalid), and the pipeline
// stops. A plan in TileLang's form (`group`, -1 entries) is mapped onto the
// statements; where it does not fit, a note at the loop says so
// (expected-note: pipeline-plan-ignored) and the default plan is used.
#include <doctest/doctest.h>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/pipeline_planning.h"

using namespace tlc;

namespace {

struct Outcome {
  bool ok;
  std::string rendered;
  int line = 0;  // line of the first diagnostic
  std::string planned = {};  // the module after the pass
};

// Parses `text` and runs pipeline-planning on it.
Outcome runPlanning(const std::string& text) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("plan.tir", text);
  auto module = ir::parseIRModule(sources, diags, file);
  REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
  passes::PassPipeline pipeline;
  pipeline.add({"pipeline-planning", "", passes::planPipelines});
  passes::PassContext ctx(diags);
  auto result = pipeline.run(*module, ctx);
  Outcome o{result.has_value(), diags.renderAll()};
  if (!diags.diagnostics().empty()) o.line = (int)diags.diagnostics()[0].loc.line;
  if (result) o.planned = ir::printModule(*result);
  return o;
}

Outcome plan(const std::string& attrs) {
  std::string text =
      "func @f[K](A: float16[128, K], C: float32[128, 128]) {\n"
      "  kernel grid(1) threads(128) as (bx) {\n"
      "    alloc A_s: shared float16[128, 32]\n"
      "    alloc C_f: fragment float32[128, 128]\n"
      "    for k in pipelined(0 : +floordiv(K + 31, 32), num_stages=3" + attrs + ") {\n"
      "      copy(A[0 : +128, k * 32 : +32], A_s)\n"
      "      gemm(A_s, A_s, C_f, transpose_B=true)\n"
      "    }\n"
      "    copy(C_f, C)\n"
      "  }\n"
      "}\n";
  return runPlanning(text);
}

}  // namespace

TEST_CASE("a consistent user plan is accepted") {
  CHECK(plan(", stage=[0, 2]").ok);
  CHECK(plan(", order=[1, 0], stage=[0, 1]").ok);
}

TEST_CASE("a statement cannot run ahead of what it reads") {
  Outcome o = plan(", stage=[2, 0]");
  CHECK(!o.ok);
  CHECK(o.line == 5);
  CHECK(o.rendered.find("[pipeline-plan-invalid]") != std::string::npos);
  CHECK(o.rendered.find("statement 1 (stage 0) reads `A_s`, which statement 0 (stage 2) writes") != std::string::npos);
  CHECK(o.rendered.find("`A_s` written here") != std::string::npos);
}

TEST_CASE("plan lists need one entry per statement and order must be a permutation") {
  Outcome a = plan(", stage=[0, 1, 2]");
  CHECK(!a.ok);
  CHECK(a.rendered.find("`stage` has 3 entries but the loop body has 2 statements") != std::string::npos);
  Outcome b = plan(", order=[0, 0]");
  CHECK(!b.ok);
  CHECK(b.rendered.find("`order` must list each statement index 0..1 exactly once") != std::string::npos);
}

namespace {

// A loop of a running sum through global memory (statement 0 reads the row
// statement 2 wrote in the iteration before), then `A_s` read after it.
Outcome planCarried(const std::string& attrs, bool readAfter) {
  std::string text =
      "func @f[K](A: float16[K, 64], Y: float16[K, 64], Z: float16[1, 64]) {\n"
      "  kernel grid(1) threads(64) as (bx) {\n"
      "    alloc A_s: shared float16[1, 64]\n"
      "    alloc B_s: shared float16[1, 64]\n"
      "    for k in pipelined(1 : +K - 1, num_stages=2" + attrs + ") {\n"
      "      copy(Y[k - 1 : +1, 0 : +64], B_s)\n"
      "      copy(A[k : +1, 0 : +64], A_s)\n"
      "      copy(B_s, Y[k : +1, 0 : +64])\n"
      "    }\n" +
      std::string(readAfter ? "    copy(A_s, Z)\n" : "") +
      "  }\n"
      "}\n";
  return runPlanning(text);
}

}  // namespace

TEST_CASE("a statement cannot run ahead of what a later statement wrote in the iteration before") {
  Outcome o = planCarried(", stage=[0, 0, 1]", false);
  CHECK(!o.ok);
  CHECK(o.rendered.find("statement 0 (stage 0) reads `Y`, which statement 2 (stage 1) writes in the iteration before") !=
        std::string::npos);
  CHECK(planCarried(", stage=[1, 0, 1]", false).ok);
}

TEST_CASE("a tile read after the loop cannot be filled ahead") {
  Outcome o = planCarried(", stage=[1, 0, 1]", true);
  CHECK(!o.ok);
  CHECK(o.rendered.find("fills `A_s` ahead, but `A_s` is read after the loop") != std::string::npos);
  CHECK(o.rendered.find("`A_s` filled here") != std::string::npos);
  CHECK(planCarried(", stage=[1, 1, 1]", true).ok);
}

TEST_CASE("a TileLang plan maps onto the statements: -1 is a producer in stage 0, issued first") {
  Outcome o = plan(", order=[-1, 0], stage=[-1, 2]");
  CHECK(o.ok);
  CHECK(o.rendered.empty());
  CHECK(o.planned.find("num_stages=3, order=[0, 1], stage=[0, 2])") != std::string::npos);
  // One entry per group: the statements of a group take its stage and order.
  Outcome g = plan(", order=[0], stage=[1], group=[[0, 1]]");
  CHECK(g.ok);
  CHECK(g.rendered.empty());
  CHECK(g.planned.find("order=[0, 1], stage=[1, 1])") != std::string::npos);
  CHECK(g.planned.find("group=") == std::string::npos);
}

TEST_CASE("a TileLang plan that does not fit tlc's statements gives a note and the default plan") {
  Outcome a = plan(", order=[-1, 0, 1], stage=[-1, 0, 1], group=[[0], [1], [2]]");
  CHECK(a.ok);
  CHECK(a.line == 5);
  CHECK(a.rendered.find("note: this loop's TileLang pipeline plan does not fit tlc's: its `group` lists 3 "
                        "statements, but tlc's loop body has 2") != std::string::npos);
  CHECK(a.rendered.find("[pipeline-plan-ignored]") != std::string::npos);
  CHECK(a.planned.find("order=[0, 1], stage=[0, 2])") != std::string::npos);  // the default plan
  // Mapped, but the gemm (a producer, stage 0) would read `A_s` before the copy (stage 2) fills it.
  Outcome b = plan(", order=[1, -1], stage=[2, -1]");
  CHECK(b.ok);
  CHECK(b.rendered.find("statement 1 (stage 0) reads `A_s`, which statement 0 (stage 2) writes") != std::string::npos);
  CHECK(b.rendered.find("`A_s` written here") != std::string::npos);
  CHECK(b.planned.find("order=[0, 1], stage=[0, 2])") != std::string::npos);
}

TEST_CASE("a TileLang plan not of the form of tlc's pipelines gives a note and tlc's own plan") {
  // The gemm issued before the copy it is pipelined with: tlc issues its loads ahead first.
  Outcome o = plan(", order=[1, 0], stage=[-1, 2]");
  CHECK(o.ok);
  CHECK(o.rendered.find("tlc issues the stage-0 loads first, but statement 0 (stage 0) comes later in `order`") !=
        std::string::npos);
  CHECK(o.planned.find("order=[0, 1], stage=[0, 2])") != std::string::npos);
}
