// Tokens of the `.tl` language.
//
// The lexer turns a file into a flat vector of tokens that always ends with
// Eof. Layout is explicit: Newline ends each logical line (never inside
// brackets), Indent/Dedent open and close blocks, so the parser never looks
// at whitespace. Every token carries the SourceLoc of its text (layout tokens
// point at where the layout change happens).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/support/source.h"

namespace tlc {

enum class TokenKind : uint8_t {
#define TOKEN(Name, Dump) Name,
#define KEYWORD(Name, Dump, Spelling) Name,
#define PUNCT(Name, Dump, Spelling) Name,
#include "compiler/lexer/token_kinds.def"
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceLoc loc;
  // The token's text exactly as written (empty for layout tokens and Eof).
  std::string text;
  // Int: the value. Float: the value. String: the contents with escapes
  // resolved (quotes removed).
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;

  bool is(TokenKind k) const { return kind == k; }
};

// The kind as dumps print it: "NAME", "LPAREN", "INDENT", ...
const char* tokenKindDumpName(TokenKind kind);
// The fixed spelling of a keyword or punctuation kind ("def", "->"), or
// nullptr for kinds whose text varies.
const char* tokenKindSpelling(TokenKind kind);
// For messages: "`:`", "`def`", "an identifier", "a newline", "end of file".
std::string describeTokenKind(TokenKind kind);
// For messages about a token found in the input: "`foo`", "`)`", "a newline".
std::string describeToken(const Token& tok);
// The keyword kind spelled `word`, or Identifier when it is not a keyword.
TokenKind keywordKind(std::string_view word);

}  // namespace tlc
