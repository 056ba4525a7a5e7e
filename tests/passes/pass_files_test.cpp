// Data-driven pass tests: every tests/passes/*.tir starts with
//   // RUN: <pass>[,<pass>...]
// names passes from the registry (compiler/passes/pass_registry.h). The file
// is parsed, the passes run (with verification after each), the result is
// printed and checked against the file's CHECK lines (tests/support/filecheck.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/pass_registry.h"
#include "tests/support/filecheck.h"
#include "tests/support/test_files.h"

using namespace tlc;

namespace fs = std::filesystem;

TEST_CASE("every tests/passes/*.tir file passes its RUN line and CHECK lines") {
  auto files = testing::readTestFiles(fs::path(TLC_SOURCE_DIR) / "tests" / "passes", ".tir");
  REQUIRE(!files.empty());
  for (const testing::TestFile& f : files) {
    INFO("file: " << f.name);
    const std::string& text = f.text;
    const std::string run = "// RUN: ";
    REQUIRE_MESSAGE(text.rfind(run, 0) == 0, "the first line must be `// RUN: <passes>`");
    std::string names = text.substr(run.size(), text.find('\n') - run.size());
    std::string error;
    auto pipeline = passes::pipelineFromNames(names, error);
    REQUIRE_MESSAGE(pipeline.has_value(), error);

    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer(f.name, text);
    auto module = ir::parseIRModule(sources, diags, file);
    REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
    passes::PassContext ctx(diags);
    auto result = pipeline->run(*module, ctx);
    REQUIRE_MESSAGE(result.has_value(), diags.renderAll());
    std::string printed = ir::printModule(*result);
    auto check = testing::fileCheck(printed, text);
    CHECK_MESSAGE(check.ok, check.message);
  }
}
