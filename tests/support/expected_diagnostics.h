// Expected diagnostics written in negative tests' comments, on the line the
// diagnostic must point at:
//   # expected-error: <kind>
//   # expected-error: <kind>: <part of the message>
//   # expected-warning: <kind>[: <part of the message>]
//   # expected-note: <part of the message>
// Several may share a line; each runs to the next one or the end of the line.
// An expected note must be matched by a note (of any diagnostic) located on
// its line whose message contains the text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/support/diagnostics.h"

namespace tlc::testing {

struct ExpectedDiagnostic {
  uint32_t line = 0;
  std::string severity;   // "error", "warning" or "note"
  std::string kind;       // printed kind; empty for notes
  std::string substring;  // part of the message (may be empty)
  bool matched = false;
};

std::vector<ExpectedDiagnostic> parseExpectedDiagnostics(const std::string& text);

// Marks the expected notes matched by the notes of `diags` located in `file`.
void matchExpectedNotes(std::vector<ExpectedDiagnostic>& expected, const std::vector<Diagnostic>& diags, uint32_t file);

}  // namespace tlc::testing
