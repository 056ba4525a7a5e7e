// The .tir parser's state, shared by ir_parser.cpp (module, functions and
// statements) and ir_parser_expr.cpp (the token layer, scopes and
// expressions). Internal to tlc_ir; the entry point is ir_parser.h.
//
// Error handling: a parse function that meets an error reports it and throws
// ParseAbort; parseModule catches it and resumes at the next `func`. Nesting
// is bounded by kMaxDepth so hostile input cannot overflow the stack.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/ir_lexer.h"
#include "compiler/support/diagnostics.h"

namespace tlc::ir::parser_detail {

// Thrown after an error has been reported; parsing resumes at the next `func`.
struct ParseAbort {};

// Nesting deeper than this (parentheses, blocks) is rejected rather than
// risking the stack on hostile input.
constexpr int kMaxDepth = 500;
// Operands in one left-associative chain (`a + b + ...`), as in .tl.
constexpr int kMaxChain = 1000;

struct Symbol {
  Var var;
  Buffer buffer;
  SourceLoc loc;
};

class IRParser {
 public:
  IRParser(SourceManager& sources, DiagnosticEngine& diags, uint32_t file);

  Module parseModule();

 private:
  SourceManager& sources_;
  DiagnosticEngine& diags_;
  uint32_t file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
  std::unordered_map<std::string, uint32_t> locFiles_;
  int depth_ = 0;
  // The height of each expression node built in the current function.
  std::unordered_map<const ExprNode*, int> heights_;
  // The value read by the last parseLetHead.
  Expr letValue_;

  // ---- tokens (describe, fail and expect* in ir_parser_expr.cpp)

  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  bool at(TokKind k) const { return cur().kind == k; }
  bool atPunct(std::string_view p) const { return cur().kind == TokKind::Punct && cur().text == p; }
  bool atWord(std::string_view w) const { return cur().kind == TokKind::Ident && cur().text == w; }
  Token take() {
    Token t = cur();
    if (!at(TokKind::End)) ++pos_;
    return t;
  }
  bool acceptPunct(std::string_view p) {
    if (!atPunct(p)) return false;
    ++pos_;
    return true;
  }
  bool acceptWord(std::string_view w) {
    if (!atWord(w)) return false;
    ++pos_;
    return true;
  }

  static std::string describe(const Token& t);
  [[noreturn]] void fail(DiagKind kind, SourceLoc loc, const std::string& msg);
  Token expectPunct(std::string_view p);
  Token expectWord(std::string_view w);
  Token expectName(const char* what);

  struct DepthGuard {
    IRParser& p;
    explicit DepthGuard(IRParser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth)
        p.fail(DiagKind::IrNestingTooDeep, p.cur().loc,
               "nesting is too deep (more than " + std::to_string(kMaxDepth) + " levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- scopes (ir_parser_expr.cpp)

  const Symbol* lookup(const std::string& name) const;
  void declare(const std::string& name, Symbol sym);
  void declareVar(const Var& v) { declare(v->name, Symbol{v, nullptr, v->loc}); }
  struct ScopeGuard {
    IRParser& p;
    explicit ScopeGuard(IRParser& parser) : p(parser) { p.scopes_.emplace_back(); }
    ~ScopeGuard() {
      if (!p.scopes_.empty()) p.scopes_.pop_back();
    }
  };

  // ---- declarations and functions (ir_parser.cpp)

  Var parseVarDecl(bool requireType = false);
  std::vector<Expr> parseShape();
  std::optional<MemScope> scopeNamed(std::string_view w);
  void parseOptLoc(SourceLoc& loc);
  int64_t parseSmallInt(const char* what);
  Func parseFunc();
  Param parseParam();

  // ---- statements (ir_parser.cpp)

  Stmt parseBlock();
  std::vector<Stmt> parseStmtsUntilBrace();
  Stmt parseStmt();
  Stmt parseKernel();
  Stmt parseAlloc();
  Stmt parseFor();
  Stmt parseIf();
  Var parseLetHead(SourceLoc& loc);
  Stmt parseLoopJump();
  Stmt parseEvaluate();
  Stmt parseCopy();
  Stmt parseVersion();     // ir_parser_async.cpp
  Stmt parseAsyncGroup();  // ir_parser_async.cpp
  BarrierRef parseBarrierRef();  // ir_parser_async.cpp
  Stmt parseBarrierStmt();       // ir_parser_async.cpp
  Stmt parseWarpSpecialize();    // ir_parser_async.cpp
  bool parseBoolValue();
  Stmt parseGemm();
  Stmt parseFill();
  Stmt parseReduce();
  Stmt parseAtomic();
  Stmt parseAnnotateLayout();
  Stmt parsePrint();
  Stmt parseStore();
  Buffer lookupBuffer(const Token& name);
  Region parseRegion();

  // ---- types, indices and expressions (ir_parser_expr.cpp)

  DType parseDType();
  std::vector<Expr> parseIndices(const Buffer& b, SourceLoc at);
  std::vector<Expr> parseExprList();
  Expr binary(BinaryOp op, Expr a, Expr b, SourceLoc opLoc);
  Expr bounded(Expr e);
  void chainLink(int& n, SourceLoc at);
  Expr parseExpr();
  Expr parseOr();
  Expr parseAnd();
  Expr parseNot();
  struct OpLevel {
    std::string_view spelling;
    BinaryOp op;
  };
  template <class Next>
  Expr parseLevel(std::initializer_list<OpLevel> ops, Next next);
  Expr parseCmp();
  Expr parseBitOr();
  Expr parseXor();
  Expr parseBitAnd();
  Expr parseShift();
  Expr parseAdd();
  Expr parseMul();
  Expr parseUnary();
  static bool specialFloat(std::string_view w);
  Expr parseSpecialFloat(const Token& t, bool negative, SourceLoc start);
  Expr parseNumber(const Token& t, bool negative, SourceLoc start);
  static bool intFits(int64_t value, uint64_t mag, bool negative, DType t);
  Expr parsePrimary();
  Expr parseCall(SourceLoc at);
};

}  // namespace tlc::ir::parser_detail
