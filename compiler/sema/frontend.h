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
//
// Tuning (docs/tuning.md): `@T.tune(name=[values...], where=[conditions])`
// on a kernel declares candidate values of its integer and bool compile-time
// parameters and conditions that a candidate must meet. With `tuning` given,
// compileSource reports each kernel's space and whether the conditions hold
// for this compilation's bindings; `tuning->extraConditions` are conditions
// from the command line (`tlc tune --where`), checked on `tuning->kernel`.
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

// One tuned parameter of a kernel and its candidate values, spelled as a
// `-D` value ("64", "True").
struct TuneParam {
  std::string name;
  std::vector<std::string> values;
  SourceLoc loc;
};
// A condition of `where=` (or `--where`), evaluated with the bindings of the
// compilation that reported it.
struct TuneCondition {
  std::string text;
  SourceLoc loc;
  bool holds = true;
};
// A kernel's tuning space as this compilation sees it.
struct TuneSpace {
  std::string kernel;
  bool declared = false;  // the kernel has `@T.tune(...)`
  SourceLoc loc;          // of the decorator (or of the kernel when undeclared)
  std::vector<TuneParam> params;
  std::vector<TuneCondition> conditions;
  // Every compile-time parameter bound to an integer or bool, with its value
  // (the ones a space may list), in declaration order.
  std::vector<std::pair<std::string, std::string>> tunable;
  bool allHold() const {
    for (const TuneCondition& c : conditions)
      if (!c.holds) return false;
    return true;
  }
};
struct FrontendTuning {
  std::string kernel;                        // in: the kernel `extraConditions` apply to (empty: the first)
  std::vector<std::string> extraConditions;  // in: `--where` text, one condition each
  std::vector<TuneSpace> spaces;             // out: one per kernel lowered, in order
};

// With `onlyKernel` naming a kernel of the file, only that kernel is lowered:
// the others' compile-time parameters need no values, and defines that no
// lowered kernel takes are not errors (they may be the others').
// `target` ("cuda:sm_90a", "hip:gfx942", "cpu", "interp") is the target
// the module is compiled for, which `T.target(...)` tests (docs/language.md);
// empty: none, and `T.target(...)` is False.
std::optional<ir::Module> compileSource(SourceManager& sources, DiagnosticEngine& diags, uint32_t file,
                                        const std::vector<Define>& defines, FrontendTuning* tuning = nullptr,
                                        const std::string& onlyKernel = "", const std::string& target = "");

// The directories searched for `import`ed modules, in order.
std::vector<std::string> stdlibSearchPath(const SourceManager& sources, uint32_t importingFile);

}  // namespace tlc
