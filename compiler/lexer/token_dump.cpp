// The textual token dump used by `tlc emit --stage=tokens` and golden tests.
#include <cstdio>

#include "compiler/lexer/lexer.h"

namespace tlc {

static void appendEscaped(std::string& out, const std::string& text) {
  for (unsigned char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

std::string dumpTokens(const std::vector<Token>& tokens) {
  std::string out;
  out.reserve(tokens.size() * 24);
  for (const Token& t : tokens) {
    out += std::to_string(t.loc.line);
    out += ':';
    out += std::to_string(t.loc.col);
    out += ' ';
    out += tokenKindDumpName(t.kind);
    out += " '";
    appendEscaped(out, t.text);
    out += "'\n";
  }
  return out;
}

}  // namespace tlc
