// Every example compiles with its defaults and with explicit -D bindings.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "tests/sema/sema_test_util.h"

using namespace tlc;
using namespace tlc::test;

static std::vector<std::string> exampleFiles() {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::recursive_directory_iterator(std::string(TLC_SOURCE_DIR) + "/examples"))
    if (e.path().extension() == ".tl") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("the examples exist") {
  auto files = exampleFiles();
  CHECK(files.size() >= 5);
  for (const char* name : {"elementwise_add/add.tl", "gemm/gemm.tl", "softmax/softmax.tl", "rmsnorm/rmsnorm.tl",
                           "row_reduce/row_sum.tl"})
    CHECK(std::filesystem::exists(std::string(TLC_SOURCE_DIR) + "/examples/" + name));
}

TEST_CASE("every example compiles without -D") {
  for (const std::string& f : exampleFiles()) {
    CAPTURE(f);
    Compiled c = compileFile(f);
    INFO(c.rendered());
    REQUIRE(c.module.has_value());
    CHECK(c.diags->diagnostics().empty());
    REQUIRE(c.module->funcs.size() >= 1);
    // Unbound M/N/K become shape variables.
    CHECK(!c.func().shapeVars.empty());
  }
}

TEST_CASE("every example compiles with odd sizes bound by -D") {
  for (const std::string& f : exampleFiles()) {
    CAPTURE(f);
    std::vector<Define> defines;
    std::string text;
    {
      std::ifstream in(f);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (const char* p : {"M", "N", "K"})
      if (text.find(std::string("[") + p + ",") != std::string::npos ||
          text.find(std::string(" ") + p + ",") != std::string::npos)
        defines.push_back({p, "257"});
    Compiled c = compileFile(f, defines);
    INFO(c.rendered());
    REQUIRE(c.module.has_value());
    for (const ir::Binding& b : c.func().bindings)
      if (b.name == "M" || b.name == "K") CHECK(b.value == "257");
  }
}

TEST_CASE("gemm with every size bound has no shape variables and folded grid") {
  Compiled c = compileFile(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl",
                           {{"M", "257"}, {"N", "257"}, {"K", "257"}, {"block_M", "64"}});
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  const ir::PrimFunc& f = c.func();
  CHECK(f.shapeVars.empty());
  auto kernels = collect<ir::KernelStmt>(f.body);
  REQUIRE(kernels.size() == 1);
  int64_t gx = 0, gy = 0;
  REQUIRE(ir::constInt(kernels[0]->grid[0], &gx));
  REQUIRE(ir::constInt(kernels[0]->grid[1], &gy));
  CHECK(gx == 3);  // ceildiv(257, 128)
  CHECK(gy == 5);  // ceildiv(257, 64)
  auto loops = collect<ir::ForStmt>(f.body);
  REQUIRE(loops.size() == 1);
  CHECK(loops[0]->forKind == ir::ForKind::Pipelined);
  CHECK(loops[0]->numStages == 3);
  int64_t trips = 0;
  REQUIRE(ir::constInt(loops[0]->extent, &trips));
  CHECK(trips == 9);  // ceildiv(257, 32)
}

TEST_CASE("the IR of every example verifies and round-trips through the .tir text") {
  for (const std::string& f : exampleFiles()) {
    for (bool bound : {false, true}) {
      CAPTURE(f);
      CAPTURE(bound);
      std::vector<Define> defines;
      if (bound) {
        // The example's first dynamic dimension, bound by -D.
        Compiled probe = compileFile(f, {});
        REQUIRE(probe.module.has_value());
        const auto& dims = probe.module->funcs[0]->shapeVars;
        if (dims.empty()) continue;
        defines = {{dims[0]->name, "257"}};
      }
      Compiled c = compileFile(f, defines);
      INFO(c.rendered());
      REQUIRE(c.module.has_value());
      DiagnosticEngine verify(*c.sources);
      CHECK_MESSAGE(ir::verifyModule(*c.module, verify), verify.renderAll());
      std::string text = ir::printModule(*c.module);
      uint32_t tir = c.sources->addBuffer("example.tir", text);
      DiagnosticEngine parseDiags(*c.sources);
      auto reparsed = ir::parseIRModule(*c.sources, parseDiags, tir);
      INFO(parseDiags.renderAll());
      REQUIRE(reparsed.has_value());
      CHECK(ir::printModule(*reparsed) == text);
    }
  }
}
