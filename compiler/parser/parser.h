// The parser: tokens of one `.tl` file to its AST (compiler/parser/ast.h).
//
// Recursive descent; the grammar production handled by each parse function is
// written above it in parser.cpp, and docs/language.md gives the whole
// grammar in EBNF.
//
// Assumes: nothing about the input; it lexes the file itself.
// Guarantees: returns a Module (never null) holding every import and
// definition that parsed; every syntax error is reported with a registered
// kind (compiler/parser/parser_diagnostics.def) and parsing resumes at the
// next statement, so one run reports several errors. Parsing is linear in the
// number of tokens and always terminates; nesting deeper than a fixed limit
// is reported, not followed, so no input overflows the stack.
// A node in the AST is only produced when its syntax was complete: a
// statement with an error is left out of its block.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "compiler/lexer/token.h"
#include "compiler/parser/ast.h"
#include "compiler/support/diagnostics.h"
#include "compiler/support/source.h"

namespace tlc {

std::unique_ptr<ast::Module> parseModule(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file);

// Parses an already lexed token stream (which must end with Eof).
std::unique_ptr<ast::Module> parseTokens(const std::vector<Token>& tokens, DiagnosticEngine& diags, uint32_t file);

// Parses a file that holds one expression and nothing else (a condition
// given on the command line); null after reporting a syntax error.
ast::ExprPtr parseExpressionFile(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file);

}  // namespace tlc
