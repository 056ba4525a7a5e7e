// warp-specialize-pipelines preserves meaning: every example with a
// pipelined loop is planned and run by the reference interpreter before and
// after the pass on the same seeded inputs, at sizes the tiles do not
// divide; the outputs must be bit-identical. The interpreter runs the two
// roles one at a time, switching where a wait cannot return yet, and a
// copy's bytes arrive only when a wait needs them: a read of a tile before
// the wait that completes its copy is an error, and so is a wait nothing
// can complete (a deadlock). The cases after the first plant the bugs a
// barrier protocol can have and check that each is reported.
#include "compiler/passes/expand_pipelines.h"
#include "tests/ir_roundtrip/example_runs.h"

using namespace tlc;
using namespace tlc::testing;

TEST_CASE("warp-specialized pipelines compute exactly what the planned loops compute") {
  int roles = 0;
  struct CountRoles : ir::IRVisitor {
    int& roles;
    explicit CountRoles(int& r) : roles(r) {}
    void visitWarpSpecialize(const ir::WarpSpecializeStmt* w) override {
      ++roles;
      IRVisitor::visitWarpSpecialize(w);
    }
  };
  int compared =
      compareExamplesAfter("warp-specialize-pipelines", [&](const ir::PrimFunc& f) { CountRoles(roles).visit(f.body); });
  // The gemms, attention and convolution examples pipeline their tiles.
  CHECK(compared >= 8);
  CHECK(roles >= 8);
}

namespace {

std::string runText(const std::string& text) { return runTirText(text); }

// A kernel of one block over A (64 float32) and `out`, with shared `S` and
// one barrier `full` of one arrival, around `body`.
std::string lone(const std::string& body) {
  return "func @f(A: float32[64], out: float32[64]) {\n"
         "  kernel grid(1) threads(64) as (b) {\n"
         "    alloc S: shared float32[64]\n"
         "    alloc full: barrier uint64[1] arrivals(1)\n" +
         body +
         "    copy(A, out)\n"
         "  }\n"
         "}\n";
}

// The pass's form of a 2-stage pipeline over A's 8 columns, written by hand
// so that each case can change one line of it.
struct Protocol {
  std::string emptyWait = "barrier_wait(empty[j_load % 2], (floordiv(j_load, 2) + 1) % 2)";
  std::string expect = "barrier_arrive(full[j_load % 2], expect_bytes=256)";
  std::string fullWait = "barrier_wait(full[j % 2], floordiv(j, 2) % 2)";
  std::string release = "barrier_arrive(empty[j % 2])";
  std::string arrivals = "1";

  std::string text() const {
    return "func @f(A: float32[64, 8], out: float32[64]) {\n"
           "  kernel grid(1) threads(64) as (b) {\n"
           "    alloc S: shared float32[64] versions(2)\n"
           "    alloc acc: fragment float32[64]\n"
           "    alloc full: barrier uint64[2] arrivals(" + arrivals + ")\n"
           "    alloc empty: barrier uint64[2] arrivals(1)\n"
           "    fill(acc, 0.0)\n"
           "    warp_specialize(producer_threads=128) {\n"
           "      for j_load in serial(0 : +8) {\n"
           "        " + emptyWait + "\n"
           "        " + expect + "\n"
           "        version(S) = j_load % 2 {\n"
           "          copy_async(A[0 : +64, j_load : +1], S, barrier=full[j_load % 2])\n"
           "        }\n"
           "      }\n"
           "    } consumer {\n"
           "      for j in serial(0 : +8) {\n"
           "        " + fullWait + "\n"
           "        version(S) = j % 2 {\n"
           "          for i in parallel(0 : +64) {\n"
           "            acc[i] = acc[i] + S[i]\n"
           "          }\n"
           "        }\n"
           "        " + release + "\n"
           "      }\n"
           "    }\n"
           "    copy(acc, out)\n"
           "  }\n"
           "}\n";
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the interpreter runs a correct warp-specialized pipeline") { CHECK(runText(Protocol{}.text()) == ""); }

TEST_CASE("a consumer that waits for the wrong phase is caught") {
  Protocol p;
  p.fullWait = "barrier_wait(full[j % 2], (floordiv(j, 2) + 1) % 2)";  // a fresh barrier: returns at once
  std::string e = runText(p.text());
  CHECK(has(e, "while an asynchronous copy to it is in flight"));
  CHECK(has(e, "[invalid-program]"));
}

TEST_CASE("a consumer that does not wait for the copies is caught") {
  Protocol p;
  p.fullWait = "evaluate 0";
  std::string e = runText(p.text());
  CHECK(has(e, "while an asynchronous copy to it is in flight"));
}

TEST_CASE("a producer that does not wait for a free stage is caught") {
  Protocol p;
  p.emptyWait = "evaluate 0";
  // Its third iteration announces stage 0's bytes again while the first
  // iteration's copy is still in flight.
  CHECK(has(runText(p.text()), "an arrival on `full[0]` beyond the 1 that complete its phase 0"));
  p.expect = "evaluate 0";
  CHECK(has(runText(p.text()), "while an earlier one to it is in flight"));
}

// expected-error: deadlock (at the wait, with a note for the other role's)
TEST_CASE("a short byte count, a missing release and a missing arrival deadlock") {
  Protocol shortCount;
  shortCount.expect = "barrier_arrive(full[j_load % 2], expect_bytes=512)";
  std::string e = runText(shortCount.text());
  CHECK(has(e, "[deadlock]"));
  CHECK(has(e, "256 announced bytes no copy delivered"));
  CHECK(has(e, "the producer role"));

  Protocol noRelease;
  noRelease.release = "evaluate 0";
  e = runText(noRelease.text());
  CHECK(has(e, "[deadlock]"));
  CHECK(has(e, "the producer role waits here for the phase of parity 0 of `empty[0]`, which has completed 0 phases"));
  CHECK(has(e, "deadlock: the consumer role waits for the phase of parity 1 of `full[0]`"));

  Protocol twoArrivals;
  twoArrivals.arrivals = "2";
  e = runText(twoArrivals.text());
  CHECK(has(e, "[deadlock]"));
  CHECK(has(e, "1 of 2 arrivals"));
}

TEST_CASE("more bytes than announced and an arrival beyond the count are errors") {
  Protocol overDelivered;
  overDelivered.expect = "barrier_arrive(full[j_load % 2], expect_bytes=128)";
  CHECK(has(runText(overDelivered.text()), "128 bytes of copies more than its arrivals announced"));

  std::string e = runText(
      lone("    barrier_arrive(full[0], expect_bytes=256)\n"
           "    copy_async(A, S, barrier=full[0])\n"
           "    barrier_arrive(full[0])\n"
           "    barrier_wait(full[0], 0)\n"));
  CHECK(has(e, "an arrival on `full[0]` beyond the 1 that complete its phase 0, which still awaits 256 bytes"));
}

TEST_CASE("a wait outside warp_specialize that nothing completes deadlocks") {
  std::string e = runText(
      lone("    copy_async(A, S, barrier=full[0])\n"
           "    barrier_wait(full[0], 0)\n"));
  CHECK(has(e, "[deadlock]"));
  CHECK(has(e, "this wait never returns"));
  CHECK(has(e, "0 of 1 arrivals"));
}

TEST_CASE("a copy on a barrier still in flight when its block ends is an error") {
  std::string e = runText(
      lone("    barrier_arrive(full[0], expect_bytes=256)\n"
           "    copy_async(A, S, barrier=full[0])\n"));
  CHECK(has(e, "never completed"));
}

TEST_CASE("the CPU target rejects warp-specialized pipelines with a located error") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module = compileExample(std::filesystem::path(TLC_SOURCE_DIR) / "examples/gemm/gemm.tl", sources, diags);
  auto specialized = runPassNames(module, "inline-loop-lets,pipeline-planning,warp-specialize-pipelines", diags);
  REQUIRE(specialized.has_value());
  CHECK(!passes::rejectAsyncStatements(*specialized, diags, "CPU"));
  std::string text = diags.renderAll();
  CHECK(has(text, "in `@gemm`: the CPU target compiles Pipelined loops itself"));
  CHECK(has(text, "[async-unsupported]"));
}
