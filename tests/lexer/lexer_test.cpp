// The lexer: tokens, literal values, layout (NEWLINE / INDENT / DEDENT),
// errors with recovery, and invariants that hold on any input.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/lexer/lexer.h"

using namespace tlc;

namespace {

struct Lexed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::vector<Token> tokens;
  explicit Lexed(const std::string& text) {
    uint32_t f = sm.addBuffer("t.tl", text);
    tokens = lex(sm, diags, f);
  }
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> k;
    for (const Token& t : tokens) k.push_back(t.kind);
    return k;
  }
  // The kinds as dump names, space separated: "NAME EQUAL INT NEWLINE EOF".
  std::string kindString() const {
    std::string s;
    for (const Token& t : tokens) s += (s.empty() ? "" : " ") + std::string(tokenKindDumpName(t.kind));
    return s;
  }
  std::vector<DiagKind> errorKinds() const {
    std::vector<DiagKind> k;
    for (const Diagnostic& d : diags.diagnostics()) k.push_back(d.kind);
    return k;
  }
};

}  // namespace

TEST_CASE("keywords are reserved, other words are names") {
  Lexed l("def macro for in if elif else with as and or not True False None pass return import from break "
          "continue\ndefine _x x1 While\n");
  CHECK(l.kindString() ==
        "DEF MACRO FOR IN IF ELIF ELSE WITH AS AND OR NOT TRUE FALSE NONE PASS RETURN IMPORT FROM BREAK CONTINUE "
        "NEWLINE NAME NAME NAME NAME NEWLINE EOF");
  CHECK(l.tokens[22].text == "define");
  CHECK_FALSE(l.diags.hasErrors());
}

TEST_CASE("every operator lexes as itself, longest match first") {
  const char* spellings[] = {"+",  "-",  "*",  "/",  "//", "%",  "**", "==", "!=",  "<",   "<=", ">",  ">=",
                             "&",  "|",  "^",  "~",  "<<", ">>", "=",  "+=", "-=",  "*=",  "/=", "//=", "%=",
                             "**=", "&=", "|=", "^=", "<<=", ">>=", "(", ")", "[", "]", "{", "}", ",", ":",
                             ".",  "->"};
  for (const char* s : spellings) {
    CAPTURE(s);
    // A closing bracket needs its opener before it (a stray one is dropped).
    std::string str = s;
    std::string prefix = str == ")" ? "(" : str == "]" ? "[" : str == "}" ? "{" : "a";
    Lexed l(prefix + " " + str + " b\n");
    REQUIRE(l.tokens.size() >= 3);
    CHECK(l.tokens[1].text == s);
    REQUIRE(tokenKindSpelling(l.tokens[1].kind) != nullptr);
    CHECK(std::string(tokenKindSpelling(l.tokens[1].kind)) == s);
  }
  Lexed l("a//=b**c<<=d\n");
  CHECK(l.kindString() == "NAME SLASHSLASHEQ NAME STARSTAR NAME LSHIFTEQ NAME NEWLINE EOF");
}

TEST_CASE("integer literals: decimal, hex, octal, binary, underscores") {
  Lexed l("0 7 1_000 0x1F 0xff_ff 0o17 0b1010 9223372036854775807\n");
  REQUIRE(l.tokens.size() == 10);
  int64_t expected[] = {0, 7, 1000, 31, 65535, 15, 10, INT64_MAX};
  for (int i = 0; i < 8; ++i) {
    CHECK(l.tokens[i].kind == TokenKind::Int);
    CHECK(l.tokens[i].intValue == expected[i]);
  }
  CHECK(l.tokens[2].text == "1_000");
  CHECK_FALSE(l.diags.hasErrors());
}

TEST_CASE("float literals") {
  Lexed l("1.5 1e-3 .5 2. 3E+2 1_0.2_5 0.0\n");
  double expected[] = {1.5, 1e-3, 0.5, 2.0, 300.0, 10.25, 0.0};
  for (int i = 0; i < 7; ++i) {
    CAPTURE(i);
    CHECK(l.tokens[i].kind == TokenKind::Float);
    CHECK(l.tokens[i].floatValue == expected[i]);
  }
  CHECK_FALSE(l.diags.hasErrors());
}

TEST_CASE("a dot after a number followed by a name is an attribute, not a float") {
  // `x[1].y` never happens with ints, but `1.e3` must still be a float.
  Lexed l("1.e3\n");
  CHECK(l.kindString() == "FLOAT NEWLINE EOF");
  CHECK(l.tokens[0].floatValue == 1000.0);
}

TEST_CASE("bad numbers are reported and still produce one token") {
  Lexed l("x = 12abc + 1__0 + 0x + 0123 + 99999999999999999999 + 1e999\n");
  int bad = 0;
  for (const Diagnostic& d : l.diags.diagnostics()) bad += d.kind == DiagKind::BadNumber;
  CHECK(bad == 6);
  CHECK(l.kindString() == "NAME EQUAL INT PLUS INT PLUS INT PLUS INT PLUS INT PLUS FLOAT NEWLINE EOF");
  CHECK(l.diags.diagnostics()[0].loc.col == 5);
  CHECK(l.diags.diagnostics()[0].loc.len == 5);
}

TEST_CASE("strings: both quotes, escapes, adjacent text, triple quotes") {
  Lexed l("'a\\tb' \"c\\\"d\" 'it\\'s' \"\\x41\\n\" '''two\nlines''' x\n");
  REQUIRE(l.tokens.size() >= 6);
  CHECK(l.tokens[0].stringValue == "a\tb");
  CHECK(l.tokens[1].stringValue == "c\"d");
  CHECK(l.tokens[2].stringValue == "it's");
  CHECK(l.tokens[3].stringValue == "A\n");
  CHECK(l.tokens[4].stringValue == "two\nlines");
  CHECK(l.tokens[5].kind == TokenKind::Identifier);
  CHECK(l.tokens[5].loc.line == 2);
  CHECK_FALSE(l.diags.hasErrors());
}

TEST_CASE("an f-string is a string with its braces as written; f alone is a name") {
  Lexed l("f\"n={n}\" F'x' f g\n");
  CHECK(l.kindString() == "STRING STRING NAME NAME NEWLINE EOF");
  CHECK(l.tokens[0].stringValue == "n={n}");
  CHECK(l.tokens[1].stringValue == "x");
  CHECK_FALSE(l.diags.hasErrors());
}

TEST_CASE("an unterminated string ends at its line and lexing continues") {
  Lexed l("a = 'abc\nb = 1\n");
  CHECK(l.errorKinds() == std::vector<DiagKind>{DiagKind::UnterminatedString});
  CHECK(l.kindString() == "NAME EQUAL STRING NEWLINE NAME EQUAL INT NEWLINE EOF");
  CHECK(l.diags.diagnostics()[0].loc.col == 5);
}

TEST_CASE("unknown escapes are reported") {
  Lexed l("s = 'a\\qb'\n");
  CHECK(l.errorKinds() == std::vector<DiagKind>{DiagKind::InvalidEscape});
  CHECK(l.diags.diagnostics()[0].loc.col == 7);
}

TEST_CASE("comments and blank lines produce no tokens") {
  Lexed l("# header\n\n   \nx = 1  # trailing\n    # indented comment\n\ny = 2\n");
  CHECK(l.kindString() == "NAME EQUAL INT NEWLINE NAME EQUAL INT NEWLINE EOF");
  CHECK(l.tokens[4].loc.line == 7);
}

TEST_CASE("indentation produces INDENT and DEDENT") {
  Lexed l("def f():\n    if a:\n        b\n    c\nd\n");
  CHECK(l.kindString() ==
        "DEF NAME LPAREN RPAREN COLON NEWLINE INDENT IF NAME COLON NEWLINE INDENT NAME NEWLINE DEDENT NAME "
        "NEWLINE DEDENT NAME NEWLINE EOF");
}

TEST_CASE("several blocks close at once and at end of file") {
  Lexed l("a:\n  b:\n    c:\n      d\ne\n  f:\n    g");
  CHECK(l.kindString() ==
        "NAME COLON NEWLINE INDENT NAME COLON NEWLINE INDENT NAME COLON NEWLINE INDENT NAME NEWLINE DEDENT DEDENT "
        "DEDENT NAME NEWLINE INDENT NAME COLON NEWLINE INDENT NAME NEWLINE DEDENT DEDENT EOF");
}

TEST_CASE("tabs are fine when a file uses only tabs") {
  Lexed l("a:\n\tb:\n\t\tc\n\td\n");
  CHECK_FALSE(l.diags.hasErrors());
  CHECK(l.kindString() ==
        "NAME COLON NEWLINE INDENT NAME COLON NEWLINE INDENT NAME NEWLINE DEDENT NAME NEWLINE DEDENT EOF");
}

TEST_CASE("mixing tabs and spaces is an error, within a line or across lines") {
  Lexed within("a:\n \tb\n");
  CHECK(within.errorKinds() == std::vector<DiagKind>{DiagKind::MixedTabsAndSpaces});
  Lexed across("a:\n    b\n    c:\n\t\td\n");
  REQUIRE(across.errorKinds() == std::vector<DiagKind>{DiagKind::MixedTabsAndSpaces});
  const Diagnostic& d = across.diags.diagnostics()[0];
  CHECK(d.loc.line == 4);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].loc.line == 2);
}

TEST_CASE("a dedent to an unknown column is inconsistent indentation, and the lexer recovers") {
  Lexed l("a:\n    b\n  c\n  d\ne\n");
  CHECK(l.errorKinds() == std::vector<DiagKind>{DiagKind::InconsistentDedent});
  CHECK(l.diags.diagnostics()[0].loc.line == 3);
  // `c` leaves the block of `b`; `d` at the same column needs no new INDENT
  // (the bad column is remembered as part of the outer block), and `e` is
  // not a second dedent.
  CHECK(l.kindString() == "NAME COLON NEWLINE INDENT NAME NEWLINE DEDENT NAME NEWLINE NAME NEWLINE NAME NEWLINE EOF");
}

TEST_CASE("newlines inside brackets do not end the line; indentation there is free") {
  Lexed l("f(a,\n      b,\n  c)\nx = [1,\n2]\n");
  CHECK(l.kindString() ==
        "NAME LPAREN NAME COMMA NAME COMMA NAME RPAREN NEWLINE NAME EQUAL LBRACKET INT COMMA INT RBRACKET NEWLINE "
        "EOF");
}

TEST_CASE("a trailing backslash continues the line") {
  Lexed l("x = a + \\\n        b\ny = 1\n");
  CHECK(l.kindString() == "NAME EQUAL NAME PLUS NAME NEWLINE NAME EQUAL INT NEWLINE EOF");
  CHECK_FALSE(l.diags.hasErrors());
  Lexed bad("x = a \\ b\n");
  CHECK(bad.errorKinds() == std::vector<DiagKind>{DiagKind::BadLineContinuation});
  CHECK(bad.kindString() == "NAME EQUAL NAME NAME NEWLINE EOF");
}

TEST_CASE("unclosed brackets are reported at the opening bracket") {
  Lexed atEof("x = f(a,\n  b\n");
  REQUIRE(atEof.errorKinds() == std::vector<DiagKind>{DiagKind::UnclosedBracket});
  CHECK(atEof.diags.diagnostics()[0].loc.col == 6);
  CHECK(atEof.tokens.back().kind == TokenKind::Eof);
}

TEST_CASE("a statement keyword on a new line closes a forgotten bracket") {
  Lexed l("def f(a:\n    pass\ndef g():\n    pass\n");
  CHECK(l.errorKinds() == std::vector<DiagKind>{DiagKind::UnclosedBracket});
  // The second definition lexes as if the first had been closed.
  CHECK(l.kindString() ==
        "DEF NAME LPAREN NAME COLON NEWLINE INDENT PASS NEWLINE DEDENT DEF NAME LPAREN RPAREN COLON NEWLINE INDENT "
        "PASS NEWLINE DEDENT EOF");
}

TEST_CASE("closing brackets that match nothing are reported and dropped") {
  Lexed stray("x = a)\n");
  CHECK(stray.errorKinds() == std::vector<DiagKind>{DiagKind::UnmatchedBracket});
  CHECK(stray.kindString() == "NAME EQUAL NAME NEWLINE EOF");
  Lexed wrong("x = f(a]\n");
  REQUIRE(wrong.errorKinds().size() >= 1);
  CHECK(wrong.errorKinds()[0] == DiagKind::UnmatchedBracket);
  CHECK(wrong.diags.diagnostics()[0].notes.size() == 1);
}

TEST_CASE("unexpected characters are skipped as one run") {
  Lexed l("x = a $$ b ? c\n y = 'é'\n");
  CHECK(l.errorKinds().size() >= 2);
  CHECK(l.errorKinds()[0] == DiagKind::UnexpectedCharacter);
  CHECK(l.diags.diagnostics()[0].loc.col == 7);
  CHECK(l.diags.diagnostics()[0].loc.len == 2);
  Lexed utf("x = é + 1\n");
  CHECK(utf.errorKinds() == std::vector<DiagKind>{DiagKind::UnexpectedCharacter});
  CHECK(utf.kindString() == "NAME EQUAL PLUS INT NEWLINE EOF");
  Lexed nul(std::string("a\0b\n", 4));
  CHECK(nul.errorKinds() == std::vector<DiagKind>{DiagKind::UnexpectedCharacter});
}

TEST_CASE("CRLF line endings behave like LF") {
  Lexed l("a:\r\n    b\r\n\r\nc\r\n");
  CHECK_FALSE(l.diags.hasErrors());
  CHECK(l.kindString() == "NAME COLON NEWLINE INDENT NAME NEWLINE DEDENT NAME NEWLINE EOF");
}

TEST_CASE("token locations carry line, column and length") {
  Lexed l("def gemm(A):\n    T.copy(A, B)\n");
  const Token& gemm = l.tokens[1];
  CHECK(gemm.loc.line == 1);
  CHECK(gemm.loc.col == 5);
  CHECK(gemm.loc.len == 4);
  const Token& copy = l.tokens[10];
  CHECK(copy.text == "copy");
  CHECK(copy.loc.line == 2);
  CHECK(copy.loc.col == 7);
  CHECK(copy.loc.len == 4);
}

TEST_CASE("dumpTokens prints one token per line") {
  Lexed l("x = 'a\\n'\n");
  CHECK(dumpTokens(l.tokens) ==
        "1:1 NAME 'x'\n1:3 EQUAL '='\n1:5 STRING '\\'a\\\\n\\''\n1:10 NEWLINE ''\n2:1 EOF ''\n");
}

TEST_CASE("an empty file is just EOF") {
  CHECK(Lexed("").kindString() == "EOF");
  CHECK(Lexed("\n\n# c\n").kindString() == "EOF");
}

// Random inputs drawn from the characters that matter to layout and
// literals: the lexer must terminate, keep its invariants and never throw.
TEST_CASE("invariants hold on random input") {
  const std::string alphabet = "  \t\n\n()[]{}:,.=+-*/#'\"\\abcdefxT019_e\r!$";
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    size_t len = rng() % 120;
    for (size_t i = 0; i < len; ++i) text += alphabet[rng() % alphabet.size()];
    CAPTURE(text);
    Lexed l(text);
    REQUIRE(!l.tokens.empty());
    CHECK(l.tokens.back().kind == TokenKind::Eof);
    int depth = 0;
    bool ok = true;
    for (size_t i = 0; i < l.tokens.size(); ++i) {
      TokenKind k = l.tokens[i].kind;
      if (k == TokenKind::Eof && i + 1 != l.tokens.size()) ok = false;
      if (k == TokenKind::Indent) ++depth;
      if (k == TokenKind::Dedent && --depth < 0) ok = false;
      if (k == TokenKind::Newline && i > 0 && l.tokens[i - 1].kind == TokenKind::Newline) ok = false;
      if (l.tokens[i].loc.line == 0 || l.tokens[i].loc.col == 0) ok = false;
    }
    CHECK(ok);
    CHECK(depth == 0);
  }
}

TEST_CASE("lexing is linear: a large file lexes quickly") {
  std::string unit = "    for i, j in T.Parallel(block_M, block_N):\n        C[i, j] = A[i, j] * 2.0 + 0x1f  # c\n";
  std::string text = "def f():\n";
  while (text.size() < 4'000'000) text += unit;
  Lexed l(text);
  CHECK_FALSE(l.diags.hasErrors());
  CHECK(l.tokens.size() > 900'000);
}
