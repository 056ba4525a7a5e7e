// The interpreter on tile IR given as text: a module printed and parsed back
// computes exactly what the original computes, and errors point at .tir lines.
#include <doctest/doctest.h>

#include "compiler/driver/run_common.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "ir_builders.h"

using namespace tlc;
using namespace tlc::driver;
using namespace tlc::testing;

TEST_CASE("a printed and re-parsed gemm module computes bit-identical results") {
  for (bool tb : {false, true}) {
    GemmConfig cfg;
    cfg.transB = tb;
    cfg.inType = DType::Float16;
    Module original;
    original.funcs.push_back(std::make_shared<const PrimFunc>(makeTiledGemm(cfg)));
    std::string text = printModule(original);
    SourceManager sm;
    DiagnosticEngine diags(sm);
    uint32_t file = sm.addBuffer("gemm.tir", text);
    std::optional<Module> parsed = parseIRModule(sm, diags, file);
    INFO(diags.renderAll() << "\n" << text);
    REQUIRE(parsed);
    std::map<std::string, int64_t> dims = {{"M", 50}, {"N", 35}, {"K", 40}};
    auto a = makeArguments(*original.funcs[0], dims, 4, diags);
    auto b = makeArguments(*parsed->funcs[0], dims, 4, diags);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(runOracle(*original.funcs[0], *a, diags));
    REQUIRE(runOracle(*parsed->funcs[0], *b, diags));
    CHECK(interp::compare(*a->tensors[2], *b->tensors[2], 0, 0).ok());
  }
}

TEST_CASE("an out-of-bounds store in .tir text is reported at its .tir line") {
  // Print a kernel whose store overruns its buffer, parse it, run it.
  Buffer out = makeBuffer("out", DType::Float32, {i32(8)}, MemScope::Global);
  Var bx = makeVar("bx"), i = makeVar("i");
  PrimFunc f;
  f.name = "overrun";
  f.params = {tensorParam(out)};
  f.body = kernel({i32(1)}, {bx}, loop(i, i32(9), store(out, {vref(i)}, makeFloat(1.0))));
  Module m;
  m.funcs.push_back(std::make_shared<const PrimFunc>(f));
  std::string text = printModule(m);
  SourceManager sm;
  DiagnosticEngine diags(sm);
  uint32_t file = sm.addBuffer("overrun.tir", text);
  std::optional<Module> parsed = parseIRModule(sm, diags, file);
  INFO(diags.renderAll() << "\n" << text);
  REQUIRE(parsed);
  interp::HostTensor t(DType::Float32, {8});
  std::vector<interp::ArgValue> args = {interp::ArgValue::ofTensor(t)};
  CHECK_FALSE(interp::interpret(*parsed->funcs[0], args, diags));
  REQUIRE(diags.hasKind(DiagKind::InterpOutOfBounds));
  const Diagnostic& d = diags.diagnostics().back();
  CHECK(d.message == "index 8 is out of bounds for dimension 0 of `out` (size 8)");
  REQUIRE(d.loc.known());
  CHECK(d.loc.file == file);
  CHECK(std::string(sm.lineText(file, d.loc.line)).find("out[") != std::string::npos);
}
