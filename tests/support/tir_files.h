// Data-driven tests over tile-IR files: each `*.tir` file of a directory
// under tests/, parsed, handed to the test's check (with the file, for its
// CHECK lines and directives, and the diagnostics the parse reported into).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "compiler/ir/ir_parser.h"
#include "tests/support/test_files.h"

namespace tlc::testing {

template <class Check>
void forEachTirFile(const std::string& dirUnderTests, Check check) {
  auto files = readTestFiles(std::filesystem::path(TLC_SOURCE_DIR) / "tests" / dirUnderTests, ".tir");
  REQUIRE(!files.empty());
  for (const TestFile& f : files) {
    INFO("file: " << f.name);
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto module = ir::parseIRModule(sources, diags, sources.addBuffer(f.name, f.text));
    REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
    check(f, *module, diags);
  }
}

}  // namespace tlc::testing
