// The `.tl` lexer: one left-to-right pass over the bytes of a file.
//
// Layout follows Python's tokenizer: at the start of each logical line
// outside brackets the indentation width is compared with a stack of open
// levels, producing Indent or Dedent tokens; blank and comment-only lines do
// not count; a newline inside brackets or after a trailing backslash does not
// end the logical line. A file indents with tabs or with spaces, never both.
//
// Recovery: every error is reported and lexing goes on. Bad characters are
// skipped; an unterminated string ends at the end of its line; a dedent to a
// width that matches no open level keeps the lines at that width in the
// enclosing block; a stray closing bracket is dropped; an unclosed bracket is
// closed when a line starting with `def` or `macro` in column 1 shows that a
// new definition has begun, so the rest of the file still lexes normally.
#include "compiler/lexer/lexer.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace tlc {
namespace {

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

int digitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// Characters that can begin a token or that the main loop handles itself.
bool isKnownStart(char c) {
  if (isIdentChar(c)) return true;
  switch (c) {
    case ' ': case '\t': case '\f': case '\r': case '\n': case '#': case '\\': case '\'': case '"':
    case '+': case '-': case '*': case '/': case '%': case '=': case '!': case '<': case '>':
    case '&': case '|': case '^': case '~': case '(': case ')': case '[': case ']': case '{':
    case '}': case ',': case ':': case '.': case '@':
      return true;
    default:
      return false;
  }
}

char closerOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }
char openerOf(char close) { return close == ')' ? '(' : close == ']' ? '[' : '{'; }

struct OpenBracket {
  char ch;
  SourceLoc loc;
};

// One open indentation level. `emitted` is false for a level pushed only to
// recover from an inconsistent dedent: it produced no Indent, so closing it
// produces no Dedent.
struct IndentLevel {
  uint32_t width;
  bool emitted;
};

class Lexer {
 public:
  Lexer(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file)
      : text_(sources.text(file)), diags_(diags), file_(file) {}

  std::vector<Token> run();

 private:
  std::string_view text_;
  DiagnosticEngine& diags_;
  uint32_t file_;

  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t lineStart_ = 0;

  std::vector<Token> tokens_;
  std::vector<OpenBracket> brackets_;
  std::vector<IndentLevel> indents_{{0, true}};
  char indentChar_ = 0;  // ' ' or '\t' once the first indented line is seen
  SourceLoc indentCharLoc_;
  bool atLineStart_ = true;
  bool lineHasTokens_ = false;
  SourceLoc lastTokenEnd_;

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool has(size_t ahead) const { return pos_ + ahead < text_.size(); }

  // The location of `offset` (on the current line) spanning `len` bytes.
  SourceLoc locAt(size_t offset, size_t len) const {
    return SourceLoc{file_, line_, static_cast<uint32_t>(offset - lineStart_ + 1), static_cast<uint32_t>(len)};
  }
  // Consumes the '\n' at pos_.
  void consumeNewlineChar() {
    ++pos_;
    ++line_;
    lineStart_ = pos_;
  }

  Token& emit(TokenKind kind, SourceLoc loc, std::string_view text) {
    Token& t = tokens_.emplace_back();
    t.kind = kind;
    t.loc = loc;
    t.text = std::string(text);
    if (kind != TokenKind::Newline && kind != TokenKind::Indent && kind != TokenKind::Dedent) {
      lineHasTokens_ = true;
      lastTokenEnd_ = locAt(pos_, 1);  // tokens are emitted once consumed
    }
    return t;
  }
  // A logical line's NEWLINE sits right after its last token (not after a
  // trailing comment), where "expected ... found end of line" should point.
  SourceLoc endOfLastToken() const { return lastTokenEnd_; }
  void emitNewline(SourceLoc loc) {
    emit(TokenKind::Newline, loc, "");
    lineHasTokens_ = false;
  }

  void handleIndentation();
  bool restartAfterUnclosedBracket();
  void lexBackslash();
  void lexToken();
  void lexName();
  void lexNumber();
  void lexString();
  void lexPunct();
  void openBracket(TokenKind kind, char ch, SourceLoc loc);
  void closeBracket(TokenKind kind, char ch, SourceLoc loc);
  void lexUnexpected();
  void finish();

  // Scans digits of `base` with single underscores between them, appending
  // the digits to `digits`. Returns false if an underscore is misplaced.
  bool scanDigits(int base, std::string& digits, bool afterPrefix);
};

std::vector<Token> Lexer::run() {
  tokens_.reserve(text_.size() / 2 + 8);  // about one token per 2.3 bytes in kernels
  while (true) {
    if (atLineStart_) {
      atLineStart_ = false;
      if (!brackets_.empty()) restartAfterUnclosedBracket();
      if (brackets_.empty()) handleIndentation();
    }
    while (!atEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f' || text_[pos_] == '\r'))
      ++pos_;
    if (atEnd()) break;
    char c = text_[pos_];
    if (c == '#') {
      while (!atEnd() && text_[pos_] != '\n') ++pos_;
      continue;
    }
    if (c == '\n') {
      if (brackets_.empty() && lineHasTokens_) emitNewline(endOfLastToken());
      consumeNewlineChar();
      atLineStart_ = true;
      continue;
    }
    if (c == '\\') {
      lexBackslash();
      continue;
    }
    lexToken();
  }
  finish();
  return std::move(tokens_);
}

// indentation = { " " } | { "\t" }   (before the first token of a logical line)
void Lexer::handleIndentation() {
  size_t start = pos_;
  uint32_t width = 0;
  while (!atEnd()) {
    char c = text_[pos_];
    if (c == ' ')
      width += 1;
    else if (c == '\t')
      width = (width / 8 + 1) * 8;
    else if (c != '\f')
      break;
    ++pos_;
  }
  // Blank and comment-only lines do not take part in layout.
  if (atEnd()) return;
  char next = text_[pos_];
  if (next == '\n' || next == '#') return;
  if (next == '\r' && (peek(1) == '\n' || !has(1))) return;

  bool sawSpace = false, sawTab = false;
  for (size_t i = start; i < pos_; ++i) {
    if (text_[i] == ' ') sawSpace = true;
    if (text_[i] == '\t') sawTab = true;
  }
  if (sawSpace || sawTab) {
    SourceLoc here = locAt(start, pos_ - start);
    if (indentChar_ == 0 && !(sawSpace && sawTab)) {
      indentChar_ = sawTab ? '\t' : ' ';
      indentCharLoc_ = here;
    } else if (sawSpace && sawTab) {
      diags_.report(DiagKind::MixedTabsAndSpaces, here,
                    "this line's indentation mixes tabs and spaces; indent with one or the other");
    } else if ((sawTab ? '\t' : ' ') != indentChar_) {
      const char* mine = sawTab ? "tabs" : "spaces";
      const char* theirs = indentChar_ == '\t' ? "tabs" : "spaces";
      diags_.report(DiagKind::MixedTabsAndSpaces, here,
                    std::string("this line is indented with ") + mine + ", but earlier lines use " + theirs)
          .note(indentCharLoc_, std::string("first line indented with ") + theirs);
    }
  }

  if (width > indents_.back().width) {
    indents_.push_back({width, true});
    emit(TokenKind::Indent, SourceLoc{file_, line_, 1, static_cast<uint32_t>(pos_ - start)}, "");
    lineHasTokens_ = false;
    return;
  }
  if (width == indents_.back().width) return;
  while (indents_.size() > 1 && indents_.back().width > width) {
    if (indents_.back().emitted) emit(TokenKind::Dedent, locAt(pos_, 0), "");
    indents_.pop_back();
  }
  lineHasTokens_ = false;
  if (indents_.back().width < width) {
    diags_.report(DiagKind::InconsistentDedent, locAt(pos_, 1),
                  "inconsistent indentation: this line is indented by " + std::to_string(width) +
                      ", which matches no enclosing block (the enclosing block is indented by " +
                      std::to_string(indents_.back().width) + ")");
    indents_.push_back({width, false});
  }
}

// Called at the start of a physical line while brackets are open. A line
// that starts with a keyword that can only begin a statement (`def`, `for`,
// `return`, ...; not `if`/`else`, which may continue a conditional
// expression) means a bracket was left open: report it, close everything, and
// start a fresh logical line.
bool Lexer::restartAfterUnclosedBracket() {
  size_t p = pos_;
  while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
  size_t wordEnd = p;
  while (wordEnd < text_.size() && isIdentChar(text_[wordEnd])) ++wordEnd;
  switch (keywordKind(text_.substr(p, wordEnd - p))) {
    case TokenKind::KwDef: case TokenKind::KwMacro: case TokenKind::KwFor: case TokenKind::KwWhile: case TokenKind::KwWith:
    case TokenKind::KwElif: case TokenKind::KwPass: case TokenKind::KwReturn: case TokenKind::KwImport:
    case TokenKind::KwFrom: case TokenKind::KwBreak: case TokenKind::KwContinue:
      break;
    default:
      return false;
  }
  const OpenBracket& open = brackets_.back();
  diags_.report(DiagKind::UnclosedBracket, open.loc,
                std::string("`") + open.ch + "` is never closed; add `" + closerOf(open.ch) + "`");
  brackets_.clear();
  if (lineHasTokens_) emitNewline(endOfLastToken());
  return true;
}

// A backslash continues the logical line when it is the last character on it.
void Lexer::lexBackslash() {
  SourceLoc at = locAt(pos_, 1);
  ++pos_;
  if (peek() == '\n' || (peek() == '\r' && peek(1) == '\n')) {
    if (peek() == '\r') ++pos_;
    consumeNewlineChar();
    return;
  }
  // Recover: whitespace and a comment after the backslash are skipped and the
  // line still continues.
  size_t p = pos_;
  while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\r')) ++p;
  if (p >= text_.size()) {
    diags_.report(DiagKind::BadLineContinuation, at, "`\\` at the end of the file continues nothing; remove it");
    pos_ = p;
    return;
  }
  diags_.report(DiagKind::BadLineContinuation, at,
                "`\\` continues a line only as its last character; remove what follows it or the `\\`");
  if (text_[p] == '\n' || text_[p] == '#') {
    while (p < text_.size() && text_[p] != '\n') ++p;
    pos_ = p;
    if (!atEnd()) consumeNewlineChar();
  }
}

void Lexer::lexToken() {
  char c = text_[pos_];
  // Python's f-string (an `assert`'s message in TileLang scripts): its text,
  // with `{...}` kept as written.
  if ((c == 'f' || c == 'F') && (peek(1) == '"' || peek(1) == '\'')) {
    ++pos_;
    return lexString();
  }
  if (isIdentStart(c)) return lexName();
  if (isDigit(c) || (c == '.' && isDigit(peek(1)))) return lexNumber();
  if (c == '"' || c == '\'') return lexString();
  if (isKnownStart(c) && c != '!') return lexPunct();
  if (c == '!' && peek(1) == '=') return lexPunct();
  lexUnexpected();
}

// NAME = ( letter | "_" ) { letter | digit | "_" ) ; keywords are reserved.
void Lexer::lexName() {
  size_t start = pos_;
  while (!atEnd() && isIdentChar(text_[pos_])) ++pos_;
  std::string_view word = text_.substr(start, pos_ - start);
  emit(keywordKind(word), locAt(start, pos_ - start), word);
}

bool Lexer::scanDigits(int base, std::string& digits, bool afterPrefix) {
  bool ok = true;
  bool prevDigit = afterPrefix;  // `0x_ff` is allowed, as in Python
  while (!atEnd()) {
    char c = text_[pos_];
    if (c == '_') {
      if (!prevDigit || digitValue(peek(1)) >= base) ok = false;
      prevDigit = false;
      ++pos_;
      continue;
    }
    if (digitValue(c) >= base) break;
    digits += c;
    prevDigit = true;
    ++pos_;
  }
  return ok;
}

// INT   = decimal | "0x" hexdigits | "0o" octdigits | "0b" bindigits  (with single "_" between digits)
// FLOAT = digits "." [ digits ] [ exponent ] | "." digits [ exponent ] | digits exponent
void Lexer::lexNumber() {
  size_t start = pos_;
  std::string problem;
  std::string digits;
  bool isFloat = false;
  int base = 10;
  char p1 = peek(1);
  if (text_[pos_] == '0' && (p1 == 'x' || p1 == 'X' || p1 == 'o' || p1 == 'O' || p1 == 'b' || p1 == 'B')) {
    base = (p1 == 'x' || p1 == 'X') ? 16 : (p1 == 'o' || p1 == 'O') ? 8 : 2;
    pos_ += 2;
    if (!scanDigits(base, digits, true)) problem = "`_` in a number must sit between two digits";
    if (digits.empty() && problem.empty()) problem = "this number prefix needs digits after it";
  } else {
    if (!scanDigits(10, digits, false)) problem = "`_` in a number must sit between two digits";
    if (peek() == '.' && !(has(1) && isIdentStart(peek(1)) && peek(1) != 'e' && peek(1) != 'E')) {
      isFloat = true;
      digits += '.';
      ++pos_;
      if (peek() == '_') problem = "`_` in a number must sit between two digits";
      if (!scanDigits(10, digits, false)) problem = "`_` in a number must sit between two digits";
    }
    char e = peek();
    if ((e == 'e' || e == 'E') &&
        (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
      isFloat = true;
      digits += 'e';
      ++pos_;
      if (peek() == '+' || peek() == '-') digits += text_[pos_++];
      if (!scanDigits(10, digits, false)) problem = "`_` in a number must sit between two digits";
    }
  }
  // A name glued to a number (`12abc`, `1.5f`) is one bad token, not two.
  if (!atEnd() && (isIdentChar(text_[pos_]) || text_[pos_] == '.')) {
    size_t suffixStart = pos_;
    while (!atEnd() && (isIdentChar(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    if (problem.empty())
      problem = "invalid suffix `" + std::string(text_.substr(suffixStart, pos_ - suffixStart)) + "` on a number";
  }
  std::string_view spelling = text_.substr(start, pos_ - start);
  SourceLoc loc = locAt(start, pos_ - start);
  Token& tok = emit(isFloat ? TokenKind::Float : TokenKind::Int, loc, spelling);
  if (problem.empty() && isFloat) {
    errno = 0;
    double v = std::strtod(digits.c_str(), nullptr);
    if (std::isinf(v))
      problem = "float literal is too large";
    else
      tok.floatValue = v;
  } else if (problem.empty()) {
    if (base == 10 && digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)
      problem = "leading zeros are not allowed in a decimal integer (write `0o` for octal)";
    uint64_t value = 0;
    for (char d : digits) {
      uint64_t dv = static_cast<uint64_t>(digitValue(d));
      if (value > (static_cast<uint64_t>(INT64_MAX) - dv) / static_cast<uint64_t>(base)) {
        problem = "integer literal does not fit in 64 bits";
        value = 0;
        break;
      }
      value = value * static_cast<uint64_t>(base) + dv;
    }
    if (problem.empty()) tok.intValue = static_cast<int64_t>(value);
  }
  if (!problem.empty()) diags_.report(DiagKind::BadNumber, loc, "bad number `" + std::string(spelling.substr(0, 40)) +
                                                                    (spelling.size() > 40 ? "...`: " : "`: ") + problem);
}

// STRING = "'" { char | escape } "'" | '"' { char | escape } '"'
//        | "'''" ... "'''" | '"""' ... '"""'   (triple-quoted strings may span lines)
// escape = "\" ( "n" | "t" | "r" | "0" | "\" | "'" | '"' | newline | "x" hex hex )
void Lexer::lexString() {
  size_t start = pos_;
  char quote = text_[pos_];
  bool triple = peek(1) == quote && peek(2) == quote;
  SourceLoc startLoc = locAt(start, 1);
  uint32_t startLine = line_;
  pos_ += triple ? 3 : 1;
  std::string value;
  bool closed = false;
  while (!atEnd()) {
    char c = text_[pos_];
    if (c == '\n' && !triple) break;
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      pos_ += triple ? 3 : 1;
      closed = true;
      break;
    }
    if (c == '\n') {
      value += '\n';
      consumeNewlineChar();
      continue;
    }
    if (c == '\\' && has(1)) {
      char e = text_[pos_ + 1];
      switch (e) {
        case 'n': value += '\n'; pos_ += 2; continue;
        case 't': value += '\t'; pos_ += 2; continue;
        case 'r': value += '\r'; pos_ += 2; continue;
        case '0': value += '\0'; pos_ += 2; continue;
        case '\\': case '\'': case '"': value += e; pos_ += 2; continue;
        case '\n': ++pos_; consumeNewlineChar(); continue;
        case 'x':
          if (digitValue(peek(2)) < 16 && digitValue(peek(3)) < 16) {
            value += static_cast<char>(digitValue(peek(2)) * 16 + digitValue(peek(3)));
            pos_ += 4;
            continue;
          }
          break;
        default:
          break;
      }
      size_t escLen = e == '\r' || e == '\n' ? 1 : 2;
      diags_.report(DiagKind::InvalidEscape, locAt(pos_, escLen),
                    e == 'x' ? std::string("`\\x` needs two hex digits")
                             : "unknown escape sequence `\\" + std::string(1, e) +
                                   "`; write `\\\\` for a backslash");
      value += e;
      pos_ += escLen;
      continue;
    }
    value += c;
    ++pos_;
  }
  // The token's location is on its first line; a multi-line string
  // underlines to the end of that line.
  size_t firstLineEnd = startLine == line_ ? pos_ : text_.find('\n', start);
  startLoc.len = static_cast<uint32_t>(firstLineEnd - start);
  if (!closed)
    diags_.report(DiagKind::UnterminatedString, startLoc,
                  std::string("string is never closed; end it with ") + (triple ? "`" + std::string(3, quote) + "`" : "`" + std::string(1, quote) + "`") +
                      (triple ? "" : " on the same line"));
  Token& tok = emit(TokenKind::String, startLoc, text_.substr(start, pos_ - start));
  tok.stringValue = std::move(value);
}

void Lexer::lexPunct() {
  size_t start = pos_;
  char c = text_[pos_];
  char n1 = peek(1), n2 = peek(2);
  TokenKind kind;
  size_t len = 1;
  auto pick = [&](TokenKind k, size_t l) {
    kind = k;
    len = l;
  };
  switch (c) {
    case '+': n1 == '=' ? pick(TokenKind::PlusEq, 2) : pick(TokenKind::Plus, 1); break;
    case '-':
      n1 == '=' ? pick(TokenKind::MinusEq, 2) : n1 == '>' ? pick(TokenKind::Arrow, 2) : pick(TokenKind::Minus, 1);
      break;
    case '*':
      if (n1 == '*')
        n2 == '=' ? pick(TokenKind::StarStarEq, 3) : pick(TokenKind::StarStar, 2);
      else
        n1 == '=' ? pick(TokenKind::StarEq, 2) : pick(TokenKind::Star, 1);
      break;
    case '/':
      if (n1 == '/')
        n2 == '=' ? pick(TokenKind::SlashSlashEq, 3) : pick(TokenKind::SlashSlash, 2);
      else
        n1 == '=' ? pick(TokenKind::SlashEq, 2) : pick(TokenKind::Slash, 1);
      break;
    case '%': n1 == '=' ? pick(TokenKind::PercentEq, 2) : pick(TokenKind::Percent, 1); break;
    case '=': n1 == '=' ? pick(TokenKind::EqEq, 2) : pick(TokenKind::Equal, 1); break;
    case '!': pick(TokenKind::NotEq, 2); break;
    case '<':
      if (n1 == '<')
        n2 == '=' ? pick(TokenKind::LessLessEq, 3) : pick(TokenKind::LessLess, 2);
      else
        n1 == '=' ? pick(TokenKind::LessEq, 2) : pick(TokenKind::Less, 1);
      break;
    case '>':
      if (n1 == '>')
        n2 == '=' ? pick(TokenKind::GreaterGreaterEq, 3) : pick(TokenKind::GreaterGreater, 2);
      else
        n1 == '=' ? pick(TokenKind::GreaterEq, 2) : pick(TokenKind::Greater, 1);
      break;
    case '&': n1 == '=' ? pick(TokenKind::AmpEq, 2) : pick(TokenKind::Amp, 1); break;
    case '|': n1 == '=' ? pick(TokenKind::PipeEq, 2) : pick(TokenKind::Pipe, 1); break;
    case '^': n1 == '=' ? pick(TokenKind::CaretEq, 2) : pick(TokenKind::Caret, 1); break;
    case '~': pick(TokenKind::Tilde, 1); break;
    case ',': pick(TokenKind::Comma, 1); break;
    case ':': pick(TokenKind::Colon, 1); break;
    case '.': pick(TokenKind::Dot, 1); break;
    case '@': pick(TokenKind::At, 1); break;
    case '(': pick(TokenKind::LParen, 1); break;
    case ')': pick(TokenKind::RParen, 1); break;
    case '[': pick(TokenKind::LBracket, 1); break;
    case ']': pick(TokenKind::RBracket, 1); break;
    case '{': pick(TokenKind::LBrace, 1); break;
    case '}': pick(TokenKind::RBrace, 1); break;
    default: TLC_ICE(std::string("lexPunct called on `") + c + "`");
  }
  pos_ += len;
  SourceLoc loc = locAt(start, len);
  if (c == '(' || c == '[' || c == '{') return openBracket(kind, c, loc);
  if (c == ')' || c == ']' || c == '}') return closeBracket(kind, c, loc);
  emit(kind, loc, text_.substr(start, len));
}

void Lexer::openBracket(TokenKind kind, char ch, SourceLoc loc) {
  brackets_.push_back({ch, loc});
  emit(kind, loc, std::string(1, ch));
}

void Lexer::closeBracket(TokenKind kind, char ch, SourceLoc loc) {
  char open = openerOf(ch);
  if (brackets_.empty()) {
    diags_.report(DiagKind::UnmatchedBracket, loc,
                  std::string("unmatched `") + ch + "`: no `" + open + "` is open here; remove it");
    return;
  }
  if (brackets_.back().ch == open) {
    brackets_.pop_back();
    emit(kind, loc, std::string(1, ch));
    return;
  }
  const OpenBracket innermost = brackets_.back();
  diags_.report(DiagKind::UnmatchedBracket, loc,
                std::string("`") + ch + "` does not match the open `" + innermost.ch + "`; close it with `" +
                    closerOf(innermost.ch) + "` first")
      .note(innermost.loc, std::string("`") + innermost.ch + "` opened here");
  // If a matching bracket is open further out, the inner ones were left
  // unclosed: close them too. Otherwise take it for a typo of the innermost
  // bracket's closer (`(a + 1]`) and close that one.
  for (size_t i = brackets_.size(); i-- > 0;) {
    if (brackets_[i].ch == open) {
      brackets_.resize(i);
      emit(kind, loc, std::string(1, ch));
      return;
    }
  }
  brackets_.pop_back();
  TokenKind intended = innermost.ch == '(' ? TokenKind::RParen : innermost.ch == '[' ? TokenKind::RBracket
                                                                                       : TokenKind::RBrace;
  emit(intended, loc, std::string(1, ch));
}

void Lexer::lexUnexpected() {
  size_t start = pos_;
  unsigned char first = static_cast<unsigned char>(text_[pos_]);
  // Skip a run of bad bytes (a whole UTF-8 sequence, for instance) at once.
  while (!atEnd() && !isKnownStart(text_[pos_])) ++pos_;
  if (pos_ == start) ++pos_;  // a lone `!`
  std::string what;
  if (first >= 0x80) {
    what = "non-ASCII character; names and operators are ASCII (text may go in comments and strings)";
  } else if (first < 0x20 || first == 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", first);
    what = std::string("control character ") + buf;
  } else if (first == '!') {
    what = "character `!`; write `not x` for negation or `!=` for inequality";
  } else {
    what = std::string("character `") + static_cast<char>(first) + "`";
  }
  diags_.report(DiagKind::UnexpectedCharacter, locAt(start, pos_ - start), "unexpected " + what);
}

void Lexer::finish() {
  if (!brackets_.empty()) {
    const OpenBracket& open = brackets_.back();
    diags_.report(DiagKind::UnclosedBracket, open.loc,
                  std::string("`") + open.ch + "` is never closed; add `" + closerOf(open.ch) + "`");
    brackets_.clear();
  }
  SourceLoc end = locAt(pos_, 0);
  if (lineHasTokens_) emitNewline(end);
  while (indents_.size() > 1) {
    if (indents_.back().emitted) emit(TokenKind::Dedent, end, "");
    indents_.pop_back();
  }
  emit(TokenKind::Eof, end, "");
}

}  // namespace

std::vector<Token> lex(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file) {
  return Lexer(sources, diags, file).run();
}

}  // namespace tlc
