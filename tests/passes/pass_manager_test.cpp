// The pass manager: order, verification between passes, user errors,
// --print-after-all output and the --time-passes table.
#include <doctest/doctest.h>

#include <sstream>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/passes/pass_registry.h"

using namespace tlc;
using namespace tlc::passes;

namespace {

struct Input {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  ir::Module module;

  explicit Input(const char* text, bool verify = true) {
    uint32_t file = sources.addBuffer("input.tir", text);
    ir::IRParseOptions options;
    options.verify = verify;
    auto m = ir::parseIRModule(sources, diags, file, options);
    REQUIRE_MESSAGE(m.has_value(), diags.renderAll());
    module = *m;
  }
};

const char* kText = "func @f(out: int32[4]) {\n  out[0] = 1 + 2\n}\n";

// A pass that records its name, to check the order.
Pass recorder(const std::string& name, std::vector<std::string>& log) {
  return Pass{name, "records that it ran", [name, &log](const ir::Module& m, PassContext&) {
                log.push_back(name);
                return m;
              }};
}

}  // namespace

TEST_CASE("passes run in order and print after each when asked") {
  Input in(kText);
  std::vector<std::string> log;
  PassPipeline p;
  p.add(recorder("first", log)).add(*findPass("simplify")).add(recorder("last", log));
  std::ostringstream printed;
  p.printAfterAll = true;
  p.printStream = &printed;
  PassContext ctx(in.diags);
  auto out = p.run(in.module, ctx);
  REQUIRE(out.has_value());
  CHECK(log == std::vector<std::string>{"first", "last"});
  std::string text = printed.str();
  CHECK(text.find("// -----// IR after first //----- //\nfunc @f(out: int32[4]) {\n  out[0] = 1 + 2\n}\n") == 0);
  CHECK(text.find("// -----// IR after simplify //----- //\nfunc @f(out: int32[4]) {\n  out[0] = 3\n}\n") !=
        std::string::npos);
  CHECK(text.find("// -----// IR after last //----- //") != std::string::npos);
  CHECK(ir::printModule(*out) == "func @f(out: int32[4]) {\n  out[0] = 3\n}\n");
}

TEST_CASE("the timing table lists every pass with its share") {
  Input in(kText);
  std::vector<std::string> log;
  PassPipeline p;
  p.add(recorder("alpha", log)).add(recorder("a-much-longer-pass-name", log));
  std::ostringstream table;
  p.timePasses = true;
  p.timingStream = &table;
  PassContext ctx(in.diags);
  REQUIRE(p.run(in.module, ctx).has_value());
  std::string text = table.str();
  CHECK(text.find("Pass execution timing report") != std::string::npos);
  CHECK(text.find("Wall (ms)") != std::string::npos);
  CHECK(text.find("  alpha ") != std::string::npos);
  CHECK(text.find("  a-much-longer-pass-name ") != std::string::npos);
  CHECK(text.find("  Total ") != std::string::npos);
  CHECK(text.find('%') != std::string::npos);
}

TEST_CASE("a user error reported by a pass stops the pipeline") {
  Input in(kText);
  std::vector<std::string> log;
  PassPipeline p;
  p.add(Pass{"reject", "reports an error", [](const ir::Module& m, PassContext& ctx) {
               ctx.diags.report(DiagKind::IrInvalidAttribute, m.funcs[0]->loc, "rejected");
               return m;
             }});
  p.add(recorder("after", log));
  PassContext ctx(in.diags);
  CHECK(!p.run(in.module, ctx).has_value());
  CHECK(log.empty());
  CHECK(in.diags.hasErrors());
}

TEST_CASE("an invalid input module is a user error; an invalid result is a bug naming the pass") {
  Input bad("func @f(out: int32[4]) {\n  out[0] = 1.0\n}\n", /*verify=*/false);
  PassPipeline p;
  p.add(*findPass("simplify"));
  PassContext ctx(bad.diags);
  CHECK(!p.run(bad.module, ctx).has_value());
  CHECK(bad.diags.hasKind(DiagKind::IrDTypeMismatch));

  Input good(kText);
  PassPipeline breaking;
  breaking.add(Pass{"break-dtypes", "stores a float into an int buffer", [](const ir::Module& m, PassContext&) {
                      auto* st = ir::as<ir::StoreStmt>(m.funcs[0]->body);
                      auto f = std::make_shared<ir::PrimFunc>(*m.funcs[0]);
                      f->body = std::make_shared<const ir::StoreStmt>(st->buffer, st->indices, ir::makeFloat(1.0),
                                                                      st->loc);
                      ir::Module out;
                      out.funcs.push_back(f);
                      return out;
                    }});
  PassContext ctx2(good.diags);
  try {
    (void)breaking.run(good.module, ctx2);
    FAIL("expected an internal error");
  } catch (const InternalError& e) {
    std::string what = e.what();
    CHECK(what.find("after pass `break-dtypes`") != std::string::npos);
    CHECK(what.find("[ir-dtype-mismatch]") != std::string::npos);
  }
}

TEST_CASE("the registry builds pipelines from names and options reach passes") {
  std::string error;
  auto p = pipelineFromNames("simplify, simplify", error);
  REQUIRE(p.has_value());
  CHECK(p->passes().size() == 2);
  CHECK(!pipelineFromNames("simplify,nope", error).has_value());
  CHECK(error.find("unknown pass `nope`") != std::string::npos);
  CHECK(error.find("simplify") != std::string::npos);
  CHECK(!pipelineFromNames("", error).has_value());
  for (const Pass& pass : allPasses()) {
    CHECK(!pass.name.empty());
    CHECK(!pass.summary.empty());
    CHECK(findPass(pass.name) == &pass);
  }
  SourceManager sm;
  DiagnosticEngine diags(sm);
  PassOptions options;
  options.target = "cuda:sm_90a";
  options.values["vector-width"] = "8";
  PassContext ctx(diags, options);
  CHECK(ctx.target() == "cuda:sm_90a");
  CHECK(ctx.option("vector-width") == "8");
  CHECK(ctx.option("missing", "default") == "default");
}
