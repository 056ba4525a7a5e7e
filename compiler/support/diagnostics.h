// Registered diagnostics.
//
// A diagnostic has a registered kind (diagnostic_kinds.def), a severity, a
// location and a message; it may carry notes pointing at related lines. It
// prints as
//   file:line:col: error: message [kind]
//     12 |     T.gemm(A_s, B_s, C_f)
//        |     ^~~~~~
//   file:line:col: note: ...
// Messages start lowercase, name code in backticks, say what happened and
// what to do. User errors are reported through DiagnosticEngine; a bug in the
// compiler itself is an InternalError (see TLC_ICE), which the driver reports
// with its own exit code.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/support/source.h"

namespace tlc {

enum class Severity { Error, Warning, Note };

enum class DiagKind {
#define DIAG(Name, Sev, Printed) Name,
#include "compiler/support/diagnostic_kinds.def"
#undef DIAG
};

struct DiagKindInfo {
  DiagKind kind;
  Severity severity;
  const char* printed;  // e.g. "undefined-name"
};
const DiagKindInfo& diagKindInfo(DiagKind kind);
const std::vector<DiagKindInfo>& allDiagKinds();

struct DiagNote {
  SourceLoc loc;
  std::string message;
};

struct Diagnostic {
  DiagKind kind;
  Severity severity;
  SourceLoc loc;
  std::string message;
  std::vector<DiagNote> notes;

  Diagnostic& note(SourceLoc at, std::string msg) {
    notes.push_back({at, std::move(msg)});
    return *this;
  }
};

class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources) : sources_(sources) {}
  const SourceManager& sources() const { return sources_; }

  // Records a diagnostic of a registered kind; the returned reference stays
  // valid until the next report() and can take notes.
  Diagnostic& report(DiagKind kind, SourceLoc loc, std::string message);

  bool hasErrors() const { return errorCount_ > 0; }
  int errorCount() const { return errorCount_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  bool hasKind(DiagKind kind) const;

  // Renders one diagnostic (with source line, underline and notes).
  std::string render(const Diagnostic& d, bool color = false) const;
  // Renders everything reported so far, in order.
  std::string renderAll(bool color = false) const;
  void clear() {
    diags_.clear();
    errorCount_ = 0;
  }
  // Stop collecting errors after this many (the rest are counted, not stored).
  static constexpr int kMaxErrors = 50;

 private:
  const SourceManager& sources_;
  std::vector<Diagnostic> diags_;
  int errorCount_ = 0;
};

// A bug in tlc, not in the user's program.
class InternalError : public std::runtime_error {
 public:
  InternalError(const std::string& message, const char* file, int line);
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

[[noreturn]] void internalError(const std::string& message, const char* file, int line);

}  // namespace tlc

// Reports a compiler bug with the compiler's own source line.
#define TLC_ICE(msg) ::tlc::internalError((msg), __FILE__, __LINE__)
// Checks an internal invariant (always on: an invariant broken in release is still a bug).
#define TLC_CHECK(cond, msg)                                           \
  do {                                                                 \
    if (!(cond)) ::tlc::internalError(std::string("check failed: ") + \
                                          #cond + ": " + (msg),       \
                                      __FILE__, __LINE__);             \
  } while (0)
