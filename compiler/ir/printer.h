// The textual form of the tile IR (.tir), documented with its grammar in
// docs/tile-ir.md.
//
// Guarantees: the text of any module built by the factories in ir.h parses
// back (ir_parser.h) to a module that prints identically. Every binding site
// of a variable or buffer gets a name unique within its function; clashes
// (including a name bound twice, or a reserved word) are renamed
// deterministically: x, x_1, x_2, ... Explicit dtypes appear wherever the
// syntax does not imply them (literal suffixes, cast<...>, declarations).
// Malformed IR (e.g. a variable used out of scope) still prints, so a
// verifier failure can show the offending module.
#pragma once

#include <string>

#include "compiler/ir/ir.h"

namespace tlc {
class SourceManager;
}

namespace tlc::ir {

struct PrintOptions {
  // When set, statements and functions with a known location get a
  // `loc("file":line:col)` suffix naming files through this manager. Off by
  // default so that round trips are exact.
  const SourceManager* locations = nullptr;
};

std::string printModule(const Module& m);
std::string printModule(const Module& m, const PrintOptions& options);
std::string printFunc(const PrimFunc& f, const PrintOptions& options = {});
std::string printStmt(const Stmt& s);
std::string printExpr(const Expr& e);

}  // namespace tlc::ir
