#include "compiler/ir/ir_lexer.h"

#include <cctype>

namespace tlc::ir {

namespace {

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }

constexpr std::string_view kKeywords[] = {
    "func", "bind", "kernel", "grid", "threads", "as", "alloc", "for", "in", "if", "else", "let", "evaluate",
    "copy", "gemm", "fill", "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax",
    "atomic_add", "atomic_max", "atomic_min", "cast", "select", "min", "max", "floordiv", "not", "and", "or",
    "true", "false", "loc", "serial", "parallel", "pipelined", "unroll", "vectorized", "global", "shared",
    "fragment", "local", "var", "inf", "nan", "tensor", "annotate_layout", "break", "continue", "print",
    "copy_async", "version", "commit_group", "wait_group", "barrier", "barrier_arrive", "barrier_wait",
    "warp_specialize"};

}  // namespace

std::string_view intLiteralSuffix(DType t) {
  switch (t) {
    case DType::Int8: return "i8";
    case DType::Int16: return "i16";
    case DType::Int32: return "";
    case DType::Int64: return "i64";
    case DType::UInt8: return "u8";
    case DType::UInt16: return "u16";
    case DType::UInt32: return "u32";
    case DType::UInt64: return "u64";
    default: return "";
  }
}

std::string_view floatLiteralSuffix(DType t) {
  switch (t) {
    case DType::Float16: return "f16";
    case DType::BFloat16: return "bf16";
    case DType::Float32: return "";
    case DType::Float64: return "f64";
    case DType::Float8E4M3: return "f8e4m3";
    case DType::Float8E5M2: return "f8e5m2";
    default: return "";
  }
}

std::optional<DType> intSuffixDType(std::string_view s) {
  if (s.empty() || s == "i32") return DType::Int32;
  for (DType t : {DType::Int8, DType::Int16, DType::Int64, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64})
    if (s == intLiteralSuffix(t)) return t;
  return std::nullopt;
}

std::optional<DType> floatSuffixDType(std::string_view s) {
  if (s.empty() || s == "f32") return DType::Float32;
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64, DType::Float8E4M3, DType::Float8E5M2})
    if (s == floatLiteralSuffix(t)) return t;
  return std::nullopt;
}

bool isReservedWord(std::string_view name) {
  for (std::string_view k : kKeywords)
    if (name == k) return true;
  if (parseDType(name)) return true;
  // inf and nan take float suffixes: inff16, nanbf16, ...
  for (std::string_view special : {"inf", "nan"})
    if (name.substr(0, 3) == special && floatSuffixDType(name.substr(3))) return true;
  return false;
}

bool isPlainIdentifier(std::string_view name) {
  if (name.empty() || !identStart(name[0])) return false;
  for (char c : name)
    if (!identChar(c)) return false;
  return true;
}

std::vector<Token> lexIR(std::string_view text, uint32_t file, DiagnosticEngine& diags) {
  std::vector<Token> out;
  size_t i = 0;
  uint32_t line = 1, col = 1;
  auto locAt = [&](uint32_t len) { return SourceLoc{file, line, col, len}; };
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < text.size(); ++k, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(1);
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') advance(1);
      continue;
    }
    if (identStart(c)) {
      size_t j = i + 1;
      while (j < text.size() && (identChar(text[j]) || (text[j] == '.' && j + 1 < text.size() && identStart(text[j + 1]))))
        ++j;
      out.push_back({TokKind::Ident, std::string(text.substr(i, j - i)), locAt(uint32_t(j - i))});
      advance(j - i);
      continue;
    }
    if (digit(c)) {
      size_t j = i;
      while (j < text.size() && digit(text[j])) ++j;
      if (j + 1 < text.size() && text[j] == '.' && digit(text[j + 1])) {
        ++j;
        while (j < text.size() && digit(text[j])) ++j;
      }
      if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
        if (k < text.size() && digit(text[k])) {
          j = k;
          while (j < text.size() && digit(text[j])) ++j;
        }
      }
      while (j < text.size() && identChar(text[j])) ++j;  // suffix, checked by the parser
      out.push_back({TokKind::Number, std::string(text.substr(i, j - i)), locAt(uint32_t(j - i))});
      advance(j - i);
      continue;
    }
    if (c == '"') {
      SourceLoc start = locAt(1);
      std::string value;
      size_t j = i + 1;
      bool closed = false;
      while (j < text.size() && text[j] != '\n') {
        char d = text[j];
        if (d == '"') {
          closed = true;
          ++j;
          break;
        }
        if (d == '\\' && j + 1 < text.size()) {
          char e = text[j + 1];
          if (e == 'n') value += '\n';
          else if (e == 't') value += '\t';
          else if (e == 'x' && j + 3 < text.size() && std::isxdigit(static_cast<unsigned char>(text[j + 2])) &&
                   std::isxdigit(static_cast<unsigned char>(text[j + 3]))) {
            value += static_cast<char>(std::stoi(std::string(text.substr(j + 2, 2)), nullptr, 16));
            j += 2;
          } else {
            value += e;
          }
          j += 2;
          continue;
        }
        value += d;
        ++j;
      }
      if (!closed) diags.report(DiagKind::IrUnterminatedString, start, "string literal is not terminated before the end of the line");
      start.len = uint32_t(j - i);
      out.push_back({TokKind::String, std::move(value), start});
      advance(j - i);
      continue;
    }
    static constexpr std::string_view twoChar[] = {"<=", ">=", "==", "!=", "<<", ">>", "->"};
    bool matched = false;
    for (std::string_view p : twoChar) {
      if (text.substr(i, 2) == p) {
        out.push_back({TokKind::Punct, std::string(p), locAt(2)});
        advance(2);
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (std::string_view("()[]{},:=+-*/%<>&|^~@").find(c) != std::string_view::npos) {
      out.push_back({TokKind::Punct, std::string(1, c), locAt(1)});
      advance(1);
      continue;
    }
    std::string shown = std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "\\x" + [&] {
      static const char* hex = "0123456789abcdef";
      unsigned char u = static_cast<unsigned char>(c);
      return std::string{hex[u >> 4], hex[u & 15]};
    }();
    diags.report(DiagKind::IrInvalidCharacter, locAt(1), "unexpected character `" + shown + "` in tile IR text");
    advance(1);
  }
  out.push_back({TokKind::End, "", SourceLoc{file, line, col, 0}});
  return out;
}

}  // namespace tlc::ir
