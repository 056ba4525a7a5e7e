// Helpers shared by the tile-IR tests: parsing .tir text and checking that a
// module's printed text parses back to the same text.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "compiler/ir/ir.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/support/source.h"

namespace tlc::ir::testing {

struct Parsed {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::optional<Module> module;
};

inline std::unique_ptr<Parsed> parseText(const std::string& text, bool verify = true) {
  auto p = std::make_unique<Parsed>();
  uint32_t file = p->sources.addBuffer("test.tir", text);
  IRParseOptions options;
  options.verify = verify;
  p->module = parseIRModule(p->sources, p->diags, file, options);
  return p;
}

// Prints, parses, prints again; the two texts must be identical. Tests of
// the text's syntax that call placeholder callees (not intrinsics) parse
// without the verifier.
inline std::string checkRoundTrip(const Module& m, bool verify = true) {
  std::string first = printModule(m);
  auto parsed = parseText(first, verify);
  INFO("printed:\n" << first << "\ndiagnostics:\n" << parsed->diags.renderAll());
  REQUIRE(parsed->module.has_value());
  std::string second = printModule(*parsed->module);
  CHECK(second == first);
  return first;
}

inline Module moduleOf(std::shared_ptr<PrimFunc> f) {
  Module m;
  m.funcs.push_back(std::move(f));
  return m;
}

}  // namespace tlc::ir::testing
