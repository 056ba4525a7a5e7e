// Golden tests: tests/parser/golden/<name>.tl parses to <name>.ast (the AST
// dump, then the rendered diagnostics if any). TLC_UPDATE_GOLDEN=1 rewrites
// the expected files.
#include <doctest/doctest.h>

#include "compiler/parser/ast_dump.h"
#include "compiler/parser/parser.h"
#include "tests/lexer/golden.h"

using namespace tlc;

TEST_CASE("parser golden files") {
  auto inputs = testing::goldenInputs(std::filesystem::path(TLC_SOURCE_DIR) / "tests/parser/golden");
  REQUIRE(inputs.size() >= 4);
  for (const auto& input : inputs) {
    CAPTURE(input.string());
    SourceManager sm;
    DiagnosticEngine diags(sm);
    uint32_t file = testing::addInput(sm, input);
    std::string actual = dumpAst(*parseModule(sm, diags, file));
    if (!diags.diagnostics().empty()) actual += "--- diagnostics\n" + diags.renderAll();
    std::filesystem::path golden = input;
    golden.replace_extension(".ast");
    std::string diff = testing::compareGolden(golden, actual);
    if (!diff.empty()) FAIL_CHECK(diff);
  }
}
