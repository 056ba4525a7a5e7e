// Running one pass on tile IR written as text, for the pass tests: parse,
// apply, verify, print, and check the text's CHECK lines (filecheck.h)
// against the output.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "tests/support/filecheck.h"

namespace tlc::testing {

using ModulePass = std::function<ir::Module(const ir::Module&)>;

// Parses `text` (which must parse), applies `pass`, verifies the result and
// returns it printed.
inline std::string runPassOnText(const std::string& text, const ModulePass& pass) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("test.tir", text);
  auto module = ir::parseIRModule(sources, diags, file);
  REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
  ir::Module out = pass(*module);
  CHECK_MESSAGE(ir::verifyModule(out, diags), diags.renderAll());
  return ir::printModule(out);
}

// runPassOnText, then the CHECK lines of `text` against its output.
inline void checkPassText(const std::string& text, const ModulePass& pass) {
  std::string printed = runPassOnText(text, pass);
  INFO(printed);
  auto check = fileCheck(printed, text);
  CHECK_MESSAGE(check.ok, check.message);
}

}  // namespace tlc::testing
