// Golden tests: tests/lexer/golden/<name>.tl lexes to <name>.tokens (the
// token dump, then the rendered diagnostics if any). TLC_UPDATE_GOLDEN=1
// rewrites the expected files.
#include <doctest/doctest.h>

#include "compiler/lexer/lexer.h"
#include "tests/lexer/golden.h"

using namespace tlc;

TEST_CASE("lexer golden files") {
  auto inputs = testing::goldenInputs(std::filesystem::path(TLC_SOURCE_DIR) / "tests/lexer/golden");
  REQUIRE(inputs.size() >= 4);
  for (const auto& input : inputs) {
    CAPTURE(input.string());
    SourceManager sm;
    DiagnosticEngine diags(sm);
    uint32_t file = testing::addInput(sm, input);
    std::string actual = dumpTokens(lex(sm, diags, file));
    if (!diags.diagnostics().empty()) actual += "--- diagnostics\n" + diags.renderAll();
    std::filesystem::path golden = input;
    golden.replace_extension(".tokens");
    std::string diff = testing::compareGolden(golden, actual);
    if (!diff.empty()) FAIL_CHECK(diff);
  }
}
