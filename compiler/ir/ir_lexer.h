// Tokens of the tile IR's textual form (.tir), shared by the printer (which
// must avoid reserved words and choose literal suffixes the lexer reads back)
// and the parser. The syntax is documented in docs/tile-ir.md.
//
// The lexer never fails: an unexpected character or an unterminated string is
// reported (ir-invalid-character, ir-unterminated-string) and skipped, and the
// token list always ends with an End token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/support/diagnostics.h"

namespace tlc::ir {

enum class TokKind {
  Ident,   // names and keywords: [A-Za-z_][A-Za-z0-9_.]* (dots allowed after the first character)
  Number,  // 12, 12i64, 1.5, 1.5e-3f16 (suffix kept in the text)
  String,  // "..." with \" \\ \n \t \xNN escapes; `text` holds the decoded value
  Punct,   // ( ) [ ] { } , : = + - * / % < > <= >= == != & | ^ ~ << >> @
  End,
};

struct Token {
  TokKind kind;
  std::string text;
  SourceLoc loc;
};

std::vector<Token> lexIR(std::string_view text, uint32_t file, DiagnosticEngine& diags);

// True for words the syntax reserves (keywords, dtype and scope names, and
// inf/nan literals); the printer renames variables that would collide.
bool isReservedWord(std::string_view name);
// True if `name` is a plain identifier the lexer reads back as one token.
bool isPlainIdentifier(std::string_view name);

// Literal suffixes: "" is int32 / float32.
std::string_view intLiteralSuffix(DType t);    // "i64", "u8", ...; "" for int32
std::string_view floatLiteralSuffix(DType t);  // "f16", "bf16", ...; "" for float32
std::optional<DType> intSuffixDType(std::string_view suffix);
std::optional<DType> floatSuffixDType(std::string_view suffix);

}  // namespace tlc::ir
