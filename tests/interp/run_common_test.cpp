// The run plumbing shared by every target: arguments, oracle, comparison, summary.
#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "compiler/driver/run_common.h"
#include "ir_builders.h"

using namespace tlc;
using namespace tlc::driver;
using namespace tlc::testing;

namespace {

Module gemmModule() {
  GemmConfig cfg;
  Module m;
  m.funcs.push_back(std::make_shared<const PrimFunc>(makeTiledGemm(cfg)));
  return m;
}

struct Env {
  SourceManager sm;
  DiagnosticEngine diags{sm};
};

}  // namespace

TEST_CASE("--dim values parse as NAME=SIZE") {
  auto d = parseDimSetting("M=100");
  REQUIRE(d);
  CHECK(d->first == "M");
  CHECK(d->second == 100);
  CHECK_FALSE(parseDimSetting("M"));
  CHECK_FALSE(parseDimSetting("=3"));
  CHECK_FALSE(parseDimSetting("M=x"));
  CHECK_FALSE(parseDimSetting("M=-1"));
  CHECK_FALSE(parseDimSetting("M=12abc"));
}

TEST_CASE("arguments are shaped from the dims and seeded deterministically") {
  Env env;
  Module m = gemmModule();
  std::map<std::string, int64_t> dims = {{"M", 40}, {"N", 24}, {"K", 8}};
  auto a = makeArguments(*m.funcs[0], dims, 7, env.diags);
  auto b = makeArguments(*m.funcs[0], dims, 7, env.diags);
  auto c = makeArguments(*m.funcs[0], dims, 8, env.diags);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(a->tensors[0]->shape == std::vector<int64_t>{40, 8});
  CHECK(a->tensors[1]->shape == std::vector<int64_t>{8, 24});
  CHECK(a->tensors[2]->shape == std::vector<int64_t>{40, 24});
  CHECK(interp::compare(*a->tensors[0], *b->tensors[0], 0, 0).ok());
  CHECK_FALSE(interp::compare(*a->tensors[0], *c->tensors[0], 0, 0).ok());
  CHECK_FALSE(interp::compare(*a->tensors[0], *a->tensors[1], 0, 0).ok());  // different parameters differ
}

TEST_CASE("--fill values parse as NAME=LO:HI and refill a tensor in that range") {
  auto f = parseFillSetting("ids=0:32000");
  REQUIRE(f);
  CHECK(f->first == "ids");
  CHECK(f->second.first == 0);
  CHECK(f->second.second == 32000);
  auto g = parseFillSetting("x=-0.5:1e-3");
  REQUIRE(g);
  CHECK(g->second.first == -0.5);
  CHECK(g->second.second == 0.001);
  CHECK_FALSE(parseFillSetting("ids"));
  CHECK_FALSE(parseFillSetting("=0:1"));
  CHECK_FALSE(parseFillSetting("ids=0"));
  CHECK_FALSE(parseFillSetting("ids=3:3"));   // empty
  CHECK_FALSE(parseFillSetting("ids=5:1"));   // reversed
  CHECK_FALSE(parseFillSetting("ids=0:1x"));  // trailing text
  CHECK_FALSE(parseFillSetting("ids=0:inf"));

  Env env;
  Module m = gemmModule();
  auto a = makeArguments(*m.funcs[0], {{"M", 40}, {"N", 24}, {"K", 8}}, 3, env.diags);
  REQUIRE(a);
  REQUIRE(applyFills(*m.funcs[0], *a, {{"B", {2.0, 3.0}}}, 3, env.diags));
  const interp::HostTensor& B = *a->tensors[1];
  double lo = 10, hi = -10;
  for (int64_t i = 0; i < B.numel(); ++i) lo = std::min(lo, B.get(i)), hi = std::max(hi, B.get(i));
  CHECK(lo >= 2.0);
  CHECK(hi <= 3.0);
  CHECK(hi - lo > 0.5);  // spread over the range, not one value
  CHECK(a->tensors[0]->get(0) < 1.0);  // A keeps its contents in [-1, 1)

  // Integers: the whole numbers of the range, each of them, clamped to the dtype.
  interp::HostTensor ids(DType::Int32, {1000});
  interp::fillUniform(ids, 0, 5, 1);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < ids.numel(); ++i) seen.insert(ids.getInt(i));
  CHECK(seen == std::set<int64_t>{0, 1, 2, 3, 4});
  interp::HostTensor small(DType::Int8, {100});
  interp::fillUniform(small, 1000, 2000, 1);
  CHECK(small.getInt(7) == 127);
}

// expected-error: argument-mismatch
TEST_CASE("--fill naming no tensor parameter is an error that lists them") {
  Env env;
  Module m = gemmModule();
  auto a = makeArguments(*m.funcs[0], {{"M", 4}, {"N", 4}, {"K", 4}}, 0, env.diags);
  REQUIRE(a);
  CHECK_FALSE(applyFills(*m.funcs[0], *a, {{"Q", {0.0, 1.0}}}, 0, env.diags));
  REQUIRE(env.diags.hasKind(DiagKind::InterpArgumentMismatch));
  CHECK(env.diags.diagnostics()[0].message == "--fill Q=... names no tensor parameter of `gemm` (it has `A`, `B`, `C`)");
}

// expected-error: missing-dim-value
// expected-error: unknown-dim
TEST_CASE("a missing or unknown --dim is a located error") {
  Env env;
  Module m = gemmModule();
  CHECK_FALSE(makeArguments(*m.funcs[0], {{"M", 4}, {"N", 4}}, 0, env.diags));
  REQUIRE(env.diags.hasKind(DiagKind::RunMissingDim));
  CHECK(env.diags.diagnostics()[0].message ==
        "dynamic dimension `K` of `gemm` needs a size: pass --dim K=<size>, or bind it at compile time with -D K=<value>");
  env.diags.clear();
  CHECK_FALSE(makeArguments(*m.funcs[0], {{"M", 4}, {"N", 4}, {"K", 4}, {"Q", 1}}, 0, env.diags));
  CHECK(env.diags.hasKind(DiagKind::RunUnknownDim));
  env.diags.clear();
  // Absurd sizes are reported, not attempted.
  CHECK_FALSE(makeArguments(*m.funcs[0], {{"M", int64_t{1} << 40}, {"N", int64_t{1} << 40}, {"K", 4}}, 0, env.diags));
  REQUIRE(env.diags.hasErrors());
  CHECK(env.diags.diagnostics()[0].message.find("GiB limit for host tensors") != std::string::npos);
}

// expected-error: unknown-kernel
TEST_CASE("kernel selection by name") {
  Env env;
  Module m = gemmModule();
  CHECK(selectKernel(m, "", env.diags) == m.funcs[0].get());
  CHECK(selectKernel(m, "gemm", env.diags) == m.funcs[0].get());
  CHECK(selectKernel(m, "softmax", env.diags) == nullptr);
  REQUIRE(env.diags.hasKind(DiagKind::RunUnknownKernel));
  CHECK(env.diags.diagnostics()[0].message == "there is no kernel named `softmax`; the program defines `gemm`");
}

TEST_CASE("tolerances follow the dtype and grow with the reduction length") {
  CHECK(toleranceFor(DType::Int32, 1000).atol == 0);
  CHECK(toleranceFor(DType::Float32, 1).rtol == 1e-4);
  CHECK(toleranceFor(DType::Float16, 1).rtol == 1e-2);
  CHECK(toleranceFor(DType::Float32, 1024).atol > toleranceFor(DType::Float32, 64).atol);
  CHECK(writtenParams(*gemmModule().funcs[0]) == std::vector<bool>{false, false, true});
}

TEST_CASE("a kernel that rounds computed values to 16 bits compares its wider results at that precision") {
  // Tiles copied unchanged from 16-bit inputs round nothing; a float32
  // accumulator copied into a float16 tile, or a value stored into a
  // bfloat16 buffer, does.
  GemmConfig plain;
  plain.inType = DType::Float16;
  CHECK_FALSE(narrowingRound(makeTiledGemm(plain)));
  GemmConfig narrowed = plain;
  narrowed.outType = DType::Float16;  // C_f (float32) copied into C (float16)
  CHECK(narrowingRound(makeTiledGemm(narrowed)) == DType::Float16);
  Buffer X = makeBuffer("X", DType::Float32, {i32(8)}, MemScope::Global);
  Buffer Y = makeBuffer("Y", DType::BFloat16, {i32(8)}, MemScope::Shared);
  Var i = makeVar("i");
  PrimFunc f;
  f.name = "round";
  f.params = {tensorParam(X)};
  f.body = seq({alloc(Y), loop(i, i32(8), store(Y, {vref(i)}, makeCast(DType::BFloat16, makeLoad(X, {vref(i)}))),
                                ForKind::Parallel)});
  CHECK(narrowingRound(f) == DType::BFloat16);
}

TEST_CASE("tlc run --target=interp prints a summary of every tensor") {
  Env env;
  Module m = gemmModule();
  std::ostringstream out;
  RunSettings s;
  s.dims = {{"M", 64}, {"N", 64}, {"K", 64}};
  s.out = &out;
  CHECK(runWithInterpreter(m, s, env.diags) == 0);
  std::string text = out.str();
  INFO(text);
  CHECK(text.find("kernel `gemm` on interp (seed 0), dims K=64 M=64 N=64") != std::string::npos);
  CHECK(text.find("checksum") != std::string::npos);
  CHECK(text.find("  C      out   [64, 64]") != std::string::npos);
  CHECK(text.find("  A      in    [64, 64]") != std::string::npos);
}

TEST_CASE("--check passes for a target that agrees and fails for one that does not") {
  Env env;
  Module m = gemmModule();
  RunSettings s;
  s.dims = {{"M", 33}, {"N", 20}, {"K", 70}};
  s.check = true;
  std::ostringstream good;
  s.out = &good;
  auto agree = [](const PrimFunc& f, RunArgs& a, const RunSettings&, DiagnosticEngine& d) { return runOracle(f, a, d); };
  CHECK(runTarget(m, s, env.diags, "fake", agree) == 0);
  CHECK(good.str().find("check: PASS") != std::string::npos);
  std::ostringstream bad;
  s.out = &bad;
  auto wrong = [](const PrimFunc& f, RunArgs& a, const RunSettings&, DiagnosticEngine& d) {
    bool ok = runOracle(f, a, d);
    a.tensors[2]->set(5 * 20 + 7, a.tensors[2]->get(5 * 20 + 7) + 0.5);
    return ok;
  };
  CHECK(runTarget(m, s, env.diags, "fake", wrong) == 1);
  INFO(bad.str());
  CHECK(bad.str().find("check: FAIL") != std::string::npos);
  CHECK(bad.str().find("`C`: 1 of 660 elements differ") != std::string::npos);
  CHECK(bad.str().find("first at [5, 7]") != std::string::npos);
}
