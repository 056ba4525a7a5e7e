#include "compiler/support/diagnostics.h"

#include <algorithm>

namespace tlc {

const std::vector<DiagKindInfo>& allDiagKinds() {
  static const std::vector<DiagKindInfo> kinds = {
#define DIAG(Name, Sev, Printed) {DiagKind::Name, Severity::Sev, Printed},
#include "compiler/support/diagnostic_kinds.def"
#undef DIAG
  };
  return kinds;
}

const DiagKindInfo& diagKindInfo(DiagKind kind) { return allDiagKinds()[static_cast<size_t>(kind)]; }

Diagnostic& DiagnosticEngine::report(DiagKind kind, SourceLoc loc, std::string message) {
  const DiagKindInfo& info = diagKindInfo(kind);
  if (info.severity == Severity::Error) ++errorCount_;
  if (info.severity == Severity::Error && errorCount_ > kMaxErrors) {
    // Keep a scratch slot so callers can still attach notes.
    static thread_local Diagnostic overflow;
    overflow = Diagnostic{kind, info.severity, loc, std::move(message), {}};
    return overflow;
  }
  diags_.push_back(Diagnostic{kind, info.severity, loc, std::move(message), {}});
  return diags_.back();
}

bool DiagnosticEngine::hasKind(DiagKind kind) const {
  return std::any_of(diags_.begin(), diags_.end(), [&](const Diagnostic& d) { return d.kind == kind; });
}

static const char* severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

static void renderSnippet(std::string& out, const SourceManager& sm, SourceLoc loc) {
  if (!loc.known()) return;
  std::string_view line = sm.lineText(loc.file, loc.line);
  if (line.empty() && loc.col > 1) return;
  std::string num = std::to_string(loc.line);
  std::string pad(num.size(), ' ');
  out += " " + num + " | ";
  out += line;
  out += "\n " + pad + " | ";
  // Reproduce tabs so the caret lines up under the same column.
  for (uint32_t i = 1; i < loc.col && i - 1 < line.size(); ++i) out += line[i - 1] == '\t' ? '\t' : ' ';
  out += '^';
  uint32_t len = loc.len;
  if (loc.col - 1 + len > line.size()) len = line.size() >= loc.col ? line.size() - (loc.col - 1) : 1;
  for (uint32_t i = 1; i < len; ++i) out += '~';
  out += '\n';
}

std::string DiagnosticEngine::render(const Diagnostic& d, bool color) const {
  const char* bold = color ? "\033[1m" : "";
  const char* red = color ? "\033[1;31m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  out += bold + sources_.describe(d.loc) + ": " + reset + red + severityName(d.severity) + ":" + reset + " " +
         d.message + " [" + diagKindInfo(d.kind).printed + "]\n";
  renderSnippet(out, sources_, d.loc);
  for (const DiagNote& n : d.notes) {
    out += bold + sources_.describe(n.loc) + ": " + reset + "note: " + n.message + "\n";
    renderSnippet(out, sources_, n.loc);
  }
  return out;
}

std::string DiagnosticEngine::renderAll(bool color) const {
  std::string out;
  for (const Diagnostic& d : diags_) out += render(d, color);
  if (errorCount_ > kMaxErrors)
    out += std::to_string(errorCount_ - kMaxErrors) + " more errors not shown\n";
  return out;
}

InternalError::InternalError(const std::string& message, const char* file, int line)
    : std::runtime_error(message), where_(std::string(file) + ":" + std::to_string(line)) {}

void internalError(const std::string& message, const char* file, int line) {
  throw InternalError(message, file, line);
}

}  // namespace tlc
