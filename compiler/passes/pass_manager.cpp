#include "compiler/passes/pass_manager.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace tlc::passes {

PassPipeline& PassPipeline::add(Pass pass) {
  TLC_CHECK(pass.run != nullptr, "pass " + pass.name + " has no run function");
  passes_.push_back(std::move(pass));
  return *this;
}

namespace {

void printTimings(std::ostream& out, const std::vector<std::pair<std::string, double>>& rows) {
  double total = 0;
  size_t width = 4;
  for (const auto& [name, ms] : rows) {
    total += ms;
    width = std::max(width, name.size());
  }
  char line[256];
  out << "===-------------------------------------------------------------------------===\n";
  out << "                          Pass execution timing report\n";
  out << "===-------------------------------------------------------------------------===\n";
  std::snprintf(line, sizeof line, "  %-*s %12s %8s\n", int(width), "Pass", "Wall (ms)", "%");
  out << line;
  for (const auto& [name, ms] : rows) {
    std::snprintf(line, sizeof line, "  %-*s %12.3f %7.1f%%\n", int(width), name.c_str(), ms,
                  total > 0 ? 100.0 * ms / total : 0.0);
    out << line;
  }
  std::snprintf(line, sizeof line, "  %-*s %12.3f %7.1f%%\n", int(width), "Total", total, total > 0 ? 100.0 : 0.0);
  out << line;
}

}  // namespace

std::optional<ir::Module> PassPipeline::run(const ir::Module& module, PassContext& ctx) const {
  std::ostream& printOut = printStream ? *printStream : std::cerr;
  std::ostream& timeOut = timingStream ? *timingStream : std::cerr;
  if (!ir::verifyModule(module, ctx.diags)) return std::nullopt;

  std::vector<std::pair<std::string, double>> timings;
  ir::Module current = module;
  for (const Pass& pass : passes_) {
    int errorsBefore = ctx.diags.errorCount();
    auto start = std::chrono::steady_clock::now();
    ir::Module next = pass.run(current, ctx);
    auto stop = std::chrono::steady_clock::now();
    timings.emplace_back(pass.name, std::chrono::duration<double, std::milli>(stop - start).count());
    if (ctx.diags.errorCount() != errorsBefore) {
      if (timePasses) printTimings(timeOut, timings);
      return std::nullopt;
    }
    // Verify into a scratch engine: a failure here is the pass's bug, not the user's.
    SourceManager noSources;
    DiagnosticEngine scratch(noSources);
    if (!ir::verifyModule(next, scratch, ir::VerifyOptions{.lowered = true})) {
      std::string message = "the IR is invalid after pass `" + pass.name + "`:\n";
      for (const Diagnostic& d : scratch.diagnostics())
        message += "  " + d.message + " [" + diagKindInfo(d.kind).printed + "]\n";
      message += ir::printModule(next);
      TLC_ICE(message);
    }
    if (printAfterAll) printOut << "// -----// IR after " << pass.name << " //----- //\n" << ir::printModule(next);
    current = std::move(next);
  }
  if (timePasses) printTimings(timeOut, timings);
  return current;
}

}  // namespace tlc::passes
