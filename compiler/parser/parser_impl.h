// The recursive-descent parser's state, shared by parser.cpp (module and
// statements) and parser_expr.cpp (expressions). Internal to tlc_parser.
//
// Error handling: a parse function that meets a syntax error reports it and
// throws ParseError; the statement loops catch it, skip to the end of the
// logical line (synchronize) and go on with the next statement. Nesting is
// bounded by kMaxDepth so hostile input cannot overflow the stack.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/lexer/token.h"
#include "compiler/parser/ast.h"
#include "compiler/support/diagnostics.h"

namespace tlc::parser_detail {

// Thrown after a diagnostic was reported; unwinds to the statement loop.
struct ParseError {};

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, DiagnosticEngine& diags, uint32_t file);

  std::unique_ptr<ast::Module> parseModule();
  // expr { NEWLINE } EOF; null after a syntax error.
  ast::ExprPtr parseWholeExpression();

  // ---- expressions (parser_expr.cpp)
  ast::ExprPtr parseExpr();
  ast::ExprPtr parseExprList();

 private:
  // Nesting of blocks, brackets and prefix operators beyond this is reported.
  static constexpr int kMaxDepth = 200;
  // Operands in one left-associative chain (`a + b + ...`, `a.b.c...`).
  static constexpr int kMaxChain = 1000;

  const std::vector<Token>& toks_;
  DiagnosticEngine& diags_;
  uint32_t file_;
  size_t pos_ = 0;
  int depth_ = 0;
  // Lines on which the lexer already reported an error: parse errors there
  // are consequences of it and are not reported again.
  std::vector<bool> lexErrorLines_;
  // The block whose statements may be definitions: the body of the
  // top-level `def` being parsed (null elsewhere).
  const ast::Block* nestedDefBlock_ = nullptr;

  // ---- tokens
  const Token& cur() const { return toks_[pos_]; }
  TokenKind peekKind(size_t ahead = 0) const {
    return pos_ + ahead < toks_.size() ? toks_[pos_ + ahead].kind : TokenKind::Eof;
  }
  bool at(TokenKind k) const { return cur().kind == k; }
  const Token& advance() {
    const Token& t = toks_[pos_];
    if (t.kind != TokenKind::Eof) ++pos_;
    return t;
  }
  bool accept(TokenKind k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  // Consumes a `k` or reports "expected <k> <context>, found <token>".
  const Token& expect(TokenKind k, std::string_view context);
  // As expect, building a context that needs formatting only on failure.
  template <class MakeContext>
  const Token& expectLazy(TokenKind k, MakeContext&& makeContext) {
    if (at(k)) return advance();
    return expect(k, makeContext());
  }
  // The location from token `start` to the last consumed token (one line).
  SourceLoc spanFrom(size_t start) const;

  // ---- errors
  // Reports unless the line already has a lexical error; null when dropped.
  Diagnostic* report(DiagKind kind, SourceLoc loc, std::string message);
  [[noreturn]] void fail(DiagKind kind, SourceLoc loc, std::string message);
  void synchronize();
  void skipIndentedBlock();
  void recoverIndentedBlock();

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, SourceLoc loc);
    ~DepthGuard() { --p.depth_; }
  };

  // ---- module and statements (parser.cpp)
  void parseImport(ast::Module& module);
  std::string parseDottedName(SourceLoc& loc);
  std::unique_ptr<ast::FuncDef> parseFuncDef(bool topLevel);
  void parseCompileParams(ast::FuncDef& fn);
  void parseParams(ast::FuncDef& fn);
  void parseBlock(ast::Block& out, const std::string& what);
  void parseStatements(ast::Block& out);
  void parseStatement(ast::Block& out);
  void parseGlobalAssign(ast::Module& module);
  void parseSimpleStatement(ast::Block& out);
  ast::StmtPtr parseFor();
  ast::StmtPtr parseWhile();
  ast::StmtPtr parseWith();
  ast::StmtPtr parseIf();
  void parseNameList(ast::Stmt& stmt, std::string_view context, TokenKind closer);
  void checkAssignTarget(const ast::Expr& target, bool allowTuple);
  void rejectUnsupportedStatement();

  // ---- expressions (parser_expr.cpp)
  bool canStartExpr(TokenKind k) const;
  ast::ExprPtr parseOr();
  ast::ExprPtr parseAnd();
  ast::ExprPtr parseNot();
  ast::ExprPtr parseComparison();
  bool acceptIdentityOp(ast::BinaryOp& op);
  ast::ExprPtr parseBitOr();
  ast::ExprPtr parseBitXor();
  ast::ExprPtr parseBitAnd();
  ast::ExprPtr parseShift();
  ast::ExprPtr parseArith();
  ast::ExprPtr parseTerm();
  ast::ExprPtr parseFactor();
  ast::ExprPtr parsePower();
  ast::ExprPtr parsePrimary();
  ast::ExprPtr parseAtom();
  ast::ExprPtr parseLambda();
  ast::ExprPtr parseParenthesized();
  ast::ExprPtr parseListDisplay();
  ast::ExprPtr parseDisplayElement();
  ast::ExprPtr parseDictDisplay();
  void parseCallArguments(ast::Expr& call);
  void parseSubscripts(ast::Expr& subscript);
  ast::ExprPtr parseSubscript();
  ast::ExprPtr makeBinary(ast::BinaryOp op, ast::ExprPtr lhs, ast::ExprPtr rhs, size_t start);
};

}  // namespace tlc::parser_detail
