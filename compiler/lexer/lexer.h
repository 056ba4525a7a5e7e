// The lexer: `.tl` source text to tokens.
//
// Assumes: the file is registered with the SourceManager (any bytes; it need
// not be valid UTF-8 or valid `.tl`).
// Guarantees: the result ends with exactly one Eof token; every Indent is
// matched by a Dedent before Eof; Newline never appears inside brackets and
// never twice in a row; Indent/Dedent come only at the start of a logical
// line (after a Newline, or first in the file when its first line is indented).
// Every error is reported through the DiagnosticEngine with a registered
// kind (compiler/lexer/lexer_diagnostics.def) and the lexer continues, so
// one run reports every lexical error. Runs in time linear in the input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/lexer/token.h"
#include "compiler/support/diagnostics.h"
#include "compiler/support/source.h"

namespace tlc {

std::vector<Token> lex(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file);

// One token per line: `line:col KIND 'text'` (text escaped: \n, \t, \\, \', \xNN).
std::string dumpTokens(const std::vector<Token>& tokens);

}  // namespace tlc
