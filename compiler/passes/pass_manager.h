// Passes over the tile IR and the pipeline that runs them.
//
// A Pass is a named function from a module to a module. A PassPipeline runs
// passes in order and verifies the module before the first pass and after
// every pass:
//  - an invalid input module is a user error (a .tir file, say): its
//    diagnostics are reported and run() returns nullopt;
//  - a pass that reports an error through the context stops the pipeline and
//    run() returns nullopt;
//  - a module that fails verification after a pass is a compiler bug: run()
//    throws an InternalError naming the pass, with the verifier's messages.
// printAfterAll prints `// -----// IR after <name> //----- //` and the module
// after each pass; timePasses prints a table of wall time per pass.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::passes {

// What passes may read: the target and free-form options (`-O key=value`).
struct PassOptions {
  std::string target = "cpu";  // "cpu", "cuda:sm_90a", "hip:gfx942", "interp"
  std::map<std::string, std::string> values;
};

class PassContext {
 public:
  explicit PassContext(DiagnosticEngine& diags, PassOptions options = {})
      : diags(diags), options(std::move(options)) {}

  DiagnosticEngine& diags;
  PassOptions options;

  const std::string& target() const { return options.target; }
  // The option's value, or `fallback` when it is not set.
  std::string option(const std::string& key, const std::string& fallback = "") const {
    auto it = options.values.find(key);
    return it == options.values.end() ? fallback : it->second;
  }
};

struct Pass {
  std::string name;     // kebab-case, as given to `// RUN:` lines and --print-after-all headers
  std::string summary;  // one line: what the pass does
  std::function<ir::Module(const ir::Module&, PassContext&)> run;
};

class PassPipeline {
 public:
  PassPipeline& add(Pass pass);
  const std::vector<Pass>& passes() const { return passes_; }

  bool printAfterAll = false;
  bool timePasses = false;
  std::ostream* printStream = nullptr;   // default: std::cerr
  std::ostream* timingStream = nullptr;  // default: std::cerr

  std::optional<ir::Module> run(const ir::Module& module, PassContext& ctx) const;

 private:
  std::vector<Pass> passes_;
};

}  // namespace tlc::passes
