#include "compiler/backends/c_names.h"

#include <cstdio>
#include <unordered_set>

namespace tlc::backend {
namespace {

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlnum(char c) { return isLetter(c) || isDigit(c); }

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// An identifier that needs no escaping: letters, digits and single `_`
// between them, starting with a letter.
bool isSimpleIdentifier(std::string_view s) {
  if (s.empty() || !isLetter(s[0]) || s.back() == '_') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (isAlnum(s[i])) continue;
    if (s[i] != '_' || s[i + 1] == '_') return false;
  }
  return true;
}

// Words that generated C, C++ or CUDA cannot use as a variable name, or
// that a header it includes may define as a macro or type.
const std::unordered_set<std::string_view>& reservedWords() {
  static const std::unordered_set<std::string_view> words = {
      // C (C89 to C23) keywords.
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "alignas",
      "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local", "true", "typeof",
      "typeof_unqual",
      // C++ (to C++23) keywords, alternative tokens and identifiers with a special meaning.
      "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t", "class", "compl",
      "concept", "const_cast", "consteval", "constinit", "co_await", "co_return", "co_yield", "decltype", "delete",
      "dynamic_cast", "explicit", "export", "final", "friend", "import", "module", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "operator", "or", "or_eq", "override", "private", "protected", "public",
      "reinterpret_cast", "requires", "static_cast", "template", "this", "throw", "try", "typeid", "typename",
      "using", "virtual", "wchar_t", "xor", "xor_eq",
      // Macros of the C headers that generated code includes (stddef.h,
      // stdint.h, math.h, stdio.h, string.h) or that programs commonly do,
      // and the ones compilers predefine outside strict modes.
      "NULL", "EOF", "errno", "assert", "offsetof", "stdin", "stdout", "stderr", "BUFSIZ", "FILENAME_MAX",
      "FOPEN_MAX", "TMP_MAX", "L_tmpnam", "L_ctermid", "P_tmpdir", "SEEK_SET", "SEEK_CUR", "SEEK_END", "INFINITY",
      "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "HUGE", "MAXFLOAT", "math_errhandling", "MATH_ERRNO",
      "MATH_ERREXCEPT", "EXIT_SUCCESS", "EXIT_FAILURE", "RAND_MAX", "MB_CUR_MAX", "CHAR_BIT", "complex",
      "imaginary", "noreturn", "setjmp", "va_arg", "va_start", "va_end", "va_copy", "va_list", "linux", "unix",
      "i386",
      // CUDA built-in variables and types.
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "half", "half2",
      // The generated header's own parameters.
      "stream"};
  return words;
}

// CUDA's vector types: char1 .. double4, uchar2, ulonglong4, ...
bool isCudaVectorType(std::string_view s) {
  if (s.size() < 2 || s.back() < '1' || s.back() > '4') return false;
  std::string_view base = s.substr(0, s.size() - 1);
  if (base.size() > 1 && base[0] == 'u') base.remove_prefix(1);
  for (std::string_view t : {"char", "short", "int", "long", "longlong", "float", "double"})
    if (base == t) return true;
  return false;
}

bool startsWithIgnoringCase(std::string_view s, std::string_view lowerPrefix) {
  if (s.size() < lowerPrefix.size()) return false;
  for (size_t i = 0; i < lowerPrefix.size(); ++i)
    if ((char)(s[i] | 0x20) != lowerPrefix[i]) return false;
  return true;
}

// Names of libraries that generated code uses: the tlc runtime and helpers
// (tlc*, TLC_*), CUDA (cuda*, CUDA_*, CUDART_*, CUstream, nv_bfloat16, ...),
// macro families of the standard headers (M_PI, FP_NAN, INT64_MAX, INT8_C)
// and POSIX's reserved `_t` type names (int64_t, size_t, cudaStream_t).
bool isReservedByRule(std::string_view s) {
  if (startsWithIgnoringCase(s, "tlc") || startsWithIgnoringCase(s, "cuda") || startsWith(s, "nv_")) return true;
  if (s.size() >= 3 && s[0] == 'C' && s[1] == 'U' && !isDigit(s[2]) && !(s[2] >= 'A' && s[2] <= 'Z')) return true;
  if (startsWith(s, "M_") || startsWith(s, "FP_")) return true;
  for (std::string_view suffix : {"_t", "_MAX", "_MIN", "_WIDTH", "_C"})
    if (endsWith(s, suffix)) return true;
  return isCudaVectorType(s);
}

void appendOctal(std::string& out, unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\%03o", (unsigned)c);
  out += buf;
}

}  // namespace

bool isPlainCName(std::string_view name) {
  return isSimpleIdentifier(name) && !reservedWords().count(name) && !isReservedByRule(name);
}

std::string cName(std::string_view name) {
  if (isPlainCName(name)) return std::string(name);
  if (isSimpleIdentifier(name)) return "tlc_" + std::string(name);
  std::string out = "tlcx";
  for (char c : name) {
    if (isAlnum(c)) {
      out += c;
      continue;
    }
    char buf[4];
    std::snprintf(buf, sizeof buf, "_%02X", (unsigned)(unsigned char)c);
    out += buf;
  }
  return out;
}

std::string cStringLiteral(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    unsigned char c = (unsigned char)ch;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f || c == '?') {
      appendOctal(out, c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string cCommentText(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = (unsigned char)text[i];
    // `\` and `?` as octal too: no line splice, no `??/`, even at the end of a `//` comment.
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '?') appendOctal(out, c);
    else if (c == '*' && i + 1 < text.size() && text[i + 1] == '/') out += "* ";
    else out += (char)c;
  }
  return out;
}

std::string cIdentifierFromFileName(std::string_view fileName) {
  std::string out;
  for (char c : fileName) {
    if (isAlnum(c)) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return cName(out.empty() ? "kernels" : out);
}

std::string lineDirective(int line, std::string_view fileName) {
  std::string name;
  for (char ch : fileName) {
    unsigned char c = (unsigned char)ch;
    if (c == '%' || c == '"' || c < 0x20 || c == 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", (unsigned)c);
      name += buf;
    } else {
      name += ch;
    }
  }
  return "#line " + std::to_string(line) + " " + cStringLiteral(name);
}

}  // namespace tlc::backend
