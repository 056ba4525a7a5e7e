// The front end: `.tl` source text to tile IR.
//
// compileSource lexes, parses, checks and lowers one file. Compile-time
// parameters of each kernel (`def f[M, block_M=128, dtype=float16]`) are
// bound by `defines` (-D NAME=VALUE; the value is an integer, a float,
// True/False or a dtype name) or by their defaults; an integer parameter
// left unbound that appears in a tensor parameter's shape becomes a dynamic
// shape variable. `import name` loads stdlib/<name>.tl, searched in
// $TLC_STDLIB_PATH (colon-separated), next to the importing file, then in the
// source tree's stdlib/ and the install prefix's share/tlc/stdlib.
// Returns nullopt iff errors were reported; every error has a location.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"
#include "compiler/support/source.h"

namespace tlc {

struct Define {
  std::string name;
  std::string value;
};

std::optional<ir::Module> compileSource(SourceManager& sources, DiagnosticEngine& diags, uint32_t file,
                                        const std::vector<Define>& defines);

// The directories searched for `import`ed modules, in order.
std::vector<std::string> stdlibSearchPath(const SourceManager& sources, uint32_t importingFile);

}  // namespace tlc
