// Parser of the tile IR's textual form (.tir; syntax in docs/tile-ir.md).
//
// Assumes nothing about its input: any text gives either a module or located
// diagnostics (kinds in ir_diagnostics.def, printed names "ir-..."), never a
// crash. Guarantees: every node carries the SourceLoc of its text in the .tir
// file (or the location written in a `loc(...)` suffix), so errors found by
// later passes point at .tir lines; names resolve lexically (a name may not
// be redeclared while visible); and, unless disabled, the parsed module has
// passed verifyModule (verifier.h). Returns nullopt iff errors were reported.
#pragma once

#include <optional>

#include "compiler/ir/ir.h"
#include "compiler/ir/verifier.h"
#include "compiler/support/diagnostics.h"

namespace tlc::ir {

struct IRParseOptions {
  // Run the verifier on the parsed module (tests of the verifier turn it off).
  bool verify = true;
  // How to verify: text printed from a target's lowering holds its intrinsics.
  VerifyOptions verifyOptions;
};

std::optional<Module> parseIRModule(SourceManager& sources, DiagnosticEngine& diags, uint32_t file);
std::optional<Module> parseIRModule(SourceManager& sources, DiagnosticEngine& diags, uint32_t file,
                                    const IRParseOptions& options);

}  // namespace tlc::ir
