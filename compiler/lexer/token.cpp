// Names and spellings of token kinds, generated from token_kinds.def.
#include "compiler/lexer/token.h"

namespace tlc {

const char* tokenKindDumpName(TokenKind kind) {
  switch (kind) {
#define TOKEN(Name, Dump) \
  case TokenKind::Name:   \
    return Dump;
#define KEYWORD(Name, Dump, Spelling) \
  case TokenKind::Name:               \
    return Dump;
#define PUNCT(Name, Dump, Spelling) \
  case TokenKind::Name:             \
    return Dump;
#include "compiler/lexer/token_kinds.def"
  }
  return "?";
}

const char* tokenKindSpelling(TokenKind kind) {
  switch (kind) {
#define KEYWORD(Name, Dump, Spelling) \
  case TokenKind::Name:               \
    return Spelling;
#define PUNCT(Name, Dump, Spelling) \
  case TokenKind::Name:             \
    return Spelling;
#include "compiler/lexer/token_kinds.def"
    default:
      return nullptr;
  }
}

std::string describeTokenKind(TokenKind kind) {
  switch (kind) {
    case TokenKind::Eof: return "end of file";
    case TokenKind::Newline: return "end of line";
    case TokenKind::Indent: return "an indented block";
    case TokenKind::Dedent: return "the end of the block";
    case TokenKind::Identifier: return "a name";
    case TokenKind::Int: return "an integer";
    case TokenKind::Float: return "a float";
    case TokenKind::String: return "a string";
    default: return std::string("`") + tokenKindSpelling(kind) + "`";
  }
}

std::string describeToken(const Token& tok) {
  switch (tok.kind) {
    case TokenKind::Eof:
    case TokenKind::Newline:
    case TokenKind::Indent:
    case TokenKind::Dedent:
      return describeTokenKind(tok.kind);
    default: {
      // Keep messages short for long literals.
      std::string text = tok.text.size() > 24 ? tok.text.substr(0, 21) + "..." : tok.text;
      return "`" + text + "`";
    }
  }
}

TokenKind keywordKind(std::string_view word) {
  // Nineteen short compares; cheap next to the rest of lexing a name.
#define KEYWORD(Name, Dump, Spelling) \
  if (word == Spelling) return TokenKind::Name;
#include "compiler/lexer/token_kinds.def"
  return TokenKind::Identifier;
}

}  // namespace tlc
