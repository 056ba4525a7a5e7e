// The parser's top level and statements. Expressions are in parser_expr.cpp.
//
// Each parse function has the EBNF production it recognizes written above
// it; docs/language.md collects them into the language's grammar. Layout
// tokens come from the lexer: NEWLINE ends a simple statement, INDENT and
// DEDENT delimit a block.
#include "compiler/parser/parser.h"

#include <optional>

#include "compiler/lexer/lexer.h"
#include "compiler/parser/parser_impl.h"

namespace tlc {
namespace parser_detail {

using namespace ast;

Parser::Parser(const std::vector<Token>& tokens, DiagnosticEngine& diags, uint32_t file)
    : toks_(tokens), diags_(diags), file_(file) {
  TLC_CHECK(!toks_.empty() && toks_.back().kind == TokenKind::Eof, "token stream must end with Eof");
  for (const Diagnostic& d : diags_.diagnostics()) {
    if (d.loc.file != file_ || d.severity != Severity::Error) continue;
    if (lexErrorLines_.size() <= d.loc.line) lexErrorLines_.resize(d.loc.line + 1, false);
    lexErrorLines_[d.loc.line] = true;
  }
}

// ------------------------------------------------------------------ helpers

const Token& Parser::expect(TokenKind k, std::string_view context) {
  if (at(k)) return advance();
  fail(DiagKind::ExpectedToken, cur().loc,
       "expected " + describeTokenKind(k) + " " + std::string(context) + ", found " + describeToken(cur()));
}

SourceLoc Parser::spanFrom(size_t start) const {
  if (pos_ == 0 || start >= pos_) return toks_[start].loc;
  return SourceLoc::span(toks_[start].loc, toks_[pos_ - 1].loc);
}

Diagnostic* Parser::report(DiagKind kind, SourceLoc loc, std::string message) {
  if (loc.line < lexErrorLines_.size() && lexErrorLines_[loc.line]) return nullptr;
  return &diags_.report(kind, loc, std::move(message));
}

void Parser::fail(DiagKind kind, SourceLoc loc, std::string message) {
  report(kind, loc, std::move(message));
  throw ParseError{};
}

Parser::DepthGuard::DepthGuard(Parser& parser, SourceLoc loc) : p(parser) {
  if (++p.depth_ > kMaxDepth) {
    --p.depth_;
    p.fail(DiagKind::NestingTooDeep, loc,
           "nesting is too deep (more than " + std::to_string(kMaxDepth) + " levels); split the expression or block");
  }
}

// Skips the rest of a logical line after an error: up to and including its
// NEWLINE, or up to (not including) the DEDENT or EOF that ends the block.
void Parser::synchronize() {
  while (!at(TokenKind::Eof) && !at(TokenKind::Dedent) && !at(TokenKind::Newline) && !at(TokenKind::Indent))
    advance();
  accept(TokenKind::Newline);
}

// Skips an INDENT ... DEDENT region without parsing it.
void Parser::skipIndentedBlock() {
  int level = 0;
  do {
    if (at(TokenKind::Indent)) ++level;
    if (at(TokenKind::Dedent)) --level;
    advance();
  } while (level > 0 && !at(TokenKind::Eof));
}

// After an error in a compound statement's header, its indented body still
// follows: parse it (to report the errors inside) and drop it.
void Parser::recoverIndentedBlock() {
  if (!at(TokenKind::Indent)) return;
  if (depth_ + 1 >= kMaxDepth) return skipIndentedBlock();
  ++depth_;
  advance();
  Block discarded;
  parseStatements(discarded);
  accept(TokenKind::Dedent);
  --depth_;
}

// ------------------------------------------------------------------ module

// module = { import_stmt | funcdef | global_assign | NEWLINE } EOF
// global_assign = NAME { "," NAME } "=" exprlist NEWLINE
std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>();
  module->file = file_;
  while (!at(TokenKind::Eof)) {
    size_t before = pos_;
    if (at(TokenKind::Newline) || at(TokenKind::Dedent)) {
      // A DEDENT here closes an indented first line, already reported.
      advance();
      continue;
    }
    if (at(TokenKind::Indent)) {
      report(DiagKind::UnexpectedIndent, cur().loc,
             "unexpected indentation: definitions and imports start in column 1");
      advance();
      continue;
    }
    try {
      if (at(TokenKind::KwImport) || at(TokenKind::KwFrom)) {
        parseImport(*module);
      } else if (at(TokenKind::KwDef) || at(TokenKind::KwMacro) || at(TokenKind::At)) {
        module->funcs.push_back(parseFuncDef(true));
      } else if (at(TokenKind::Identifier) && (peekKind(1) == TokenKind::Equal || peekKind(1) == TokenKind::Comma)) {
        parseGlobalAssign(*module);
      } else {
        fail(DiagKind::UnexpectedToken, cur().loc,
             "expected `def`, `macro`, `import` or `NAME = value` at the top level, found " + describeToken(cur()) +
                 "; other statements go inside a `def`");
      }
    } catch (const ParseError&) {
      synchronize();
      recoverIndentedBlock();
    }
    if (pos_ == before) advance();
  }
  return module;
}

// dotted_name = NAME { "." NAME }
std::string Parser::parseDottedName(SourceLoc& loc) {
  size_t start = pos_;
  std::string name = expect(TokenKind::Identifier, "as the module name").text;
  while (accept(TokenKind::Dot)) name += "." + expect(TokenKind::Identifier, "after `.` in the module name").text;
  loc = spanFrom(start);
  return name;
}

// import_stmt = "import" dotted_name [ "as" NAME ] NEWLINE
//             | "from" dotted_name "import" ( import_names | "(" import_names ")" | "*" ) NEWLINE
// import_names = NAME { "," NAME } [ "," ]
void Parser::parseImport(Module& module) {
  Import imp;
  if (accept(TokenKind::KwImport)) {
    imp.module = parseDottedName(imp.loc);
    if (accept(TokenKind::KwAs)) imp.alias = expect(TokenKind::Identifier, "after `as`").text;
  } else {
    expect(TokenKind::KwFrom, "");
    imp.module = parseDottedName(imp.loc);
    expectLazy(TokenKind::KwImport, [&] { return "after `from " + imp.module + "`"; });
    // `*` is kept as the one name; the type checker accepts it from TileLang's modules only.
    if (at(TokenKind::Star)) {
      imp.names.push_back(advance().text);
    } else {
      bool paren = accept(TokenKind::LParen);
      do {
        if (paren && at(TokenKind::RParen)) break;
        imp.names.push_back(expect(TokenKind::Identifier, "in the import list").text);
      } while (accept(TokenKind::Comma));
      if (paren) expect(TokenKind::RParen, "to close the import list");
    }
  }
  expect(TokenKind::Newline, "after the import");
  module.imports.push_back(std::move(imp));
}

// funcdef   = { decorator } ( "def" | "macro" ) NAME [ "[" compile_params "]" ] "(" [ params ] ")" [ "->" expr ] ":" block
// decorator = "@" primary NEWLINE
// A top-level definition's body may hold definitions itself (a kernel factory
// holding its `@T.prim_func` and macros); deeper ones are rejected.
std::unique_ptr<FuncDef> Parser::parseFuncDef(bool topLevel) {
  auto fn = std::make_unique<FuncDef>();
  while (at(TokenKind::At)) {
    advance();
    fn->decorators.push_back(parsePrimary());
    expect(TokenKind::Newline, "after the decorator");
    while (accept(TokenKind::Newline)) {
    }
  }
  if (!at(TokenKind::KwDef) && !at(TokenKind::KwMacro))
    fail(DiagKind::ExpectedToken, cur().loc, "expected `def` after the decorator, found " + describeToken(cur()));
  const Token& kw = advance();
  fn->isMacro = kw.kind == TokenKind::KwMacro;
  std::string what = fn->isMacro ? "`macro`" : "`def`";
  const Token& name = expectLazy(TokenKind::Identifier, [&] { return "after " + what; });
  fn->name = name.text;
  fn->loc = name.loc;
  if (at(TokenKind::LBracket)) parseCompileParams(*fn);
  expectLazy(TokenKind::LParen, [&] { return "after the name of `" + fn->name + "`"; });
  parseParams(*fn);
  // A return annotation (`-> torch.Tensor` on a TileLang factory) documents
  // the Python function; it is parsed and dropped.
  if (accept(TokenKind::Arrow)) parseExpr();
  expectLazy(TokenKind::Colon, [&] { return "after the parameters of `" + fn->name + "`"; });
  const Block* savedDefBlock = nestedDefBlock_;
  nestedDefBlock_ = topLevel ? &fn->body : nullptr;
  try {
    parseBlock(fn->body, "the body of `" + fn->name + "`");
  } catch (const ParseError&) {
    nestedDefBlock_ = savedDefBlock;
    throw;
  }
  nestedDefBlock_ = savedDefBlock;
  return fn;
}

// compile_params = "[" [ compile_param { "," compile_param } [ "," ] ] "]"
// compile_param  = NAME [ "=" expr ]
void Parser::parseCompileParams(FuncDef& fn) {
  expect(TokenKind::LBracket, "");
  while (!at(TokenKind::RBracket)) {
    const Token& name = expect(TokenKind::Identifier, "as a compile-time parameter name");
    CompileParam p;
    p.name = name.text;
    p.loc = name.loc;
    if (accept(TokenKind::Equal)) p.defaultValue = parseExpr();
    fn.compileParams.push_back(std::move(p));
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RBracket, "to close the compile-time parameters");
}

// params = param { "," param } [ "," ]
// param  = NAME [ ":" expr ] [ "=" expr ]
// (sema requires the annotation of a kernel's parameter; a kernel factory's
// parameters are compile-time parameters with optional defaults)
void Parser::parseParams(FuncDef& fn) {
  while (!at(TokenKind::RParen)) {
    if (at(TokenKind::Star) || at(TokenKind::StarStar))
      fail(DiagKind::UnsupportedSyntax, cur().loc, "`*args` and `**kwargs` parameters are not supported");
    const Token& name = expect(TokenKind::Identifier, "as a parameter name");
    Param p;
    p.name = name.text;
    p.loc = name.loc;
    if (accept(TokenKind::Colon)) p.annotation = parseExpr();
    if (accept(TokenKind::Equal)) p.defaultValue = parseExpr();
    fn.params.push_back(std::move(p));
    if (!accept(TokenKind::Comma)) break;
  }
  expectLazy(TokenKind::RParen, [&] { return "to close the parameters of `" + fn.name + "`"; });
}

// ------------------------------------------------------------------ blocks

// block = NEWLINE INDENT statement { statement } DEDENT
//       | simple_stmt                       (a one-line body: `if c: pass`)
void Parser::parseBlock(Block& out, const std::string& what) {
  DepthGuard guard(*this, cur().loc);
  if (!accept(TokenKind::Newline)) {
    if (at(TokenKind::KwFor) || at(TokenKind::KwIf) || at(TokenKind::KwWith) || at(TokenKind::KwDef) ||
        at(TokenKind::KwMacro) || at(TokenKind::At))
      fail(DiagKind::UnexpectedToken, cur().loc,
           "a " + describeToken(cur()) + " statement must start on its own line");
    parseSimpleStatement(out);
    return;
  }
  if (!at(TokenKind::Indent)) {
    report(DiagKind::ExpectedIndentedBlock, cur().loc,
           "expected an indented block for " + what + ", found " + describeToken(cur()) +
               " (write `pass` for an empty body)");
    return;
  }
  advance();
  parseStatements(out);
  accept(TokenKind::Dedent);  // the lexer closes every block, even at EOF
}

// statements = statement { statement }      (until the DEDENT closing the block)
void Parser::parseStatements(Block& out) {
  while (!at(TokenKind::Dedent) && !at(TokenKind::Eof)) {
    size_t before = pos_;
    if (at(TokenKind::Indent)) {
      report(DiagKind::UnexpectedIndent, cur().loc,
             "unexpected indentation: this line is indented deeper than the statement before it");
      recoverIndentedBlock();
    } else if (at(TokenKind::Newline)) {
      advance();
    } else {
      try {
        parseStatement(out);
      } catch (const ParseError&) {
        synchronize();
        recoverIndentedBlock();
        // The branches of an `if` whose header failed are skipped with it.
        while (at(TokenKind::KwElif) || at(TokenKind::KwElse)) {
          synchronize();
          recoverIndentedBlock();
        }
      }
    }
    if (pos_ == before) advance();
  }
}

// statement = for_stmt | with_stmt | if_stmt | simple_stmt
void Parser::parseStatement(Block& out) {
  switch (cur().kind) {
    case TokenKind::KwFor: out.push_back(parseFor()); return;
    case TokenKind::KwWhile: out.push_back(parseWhile()); return;
    case TokenKind::KwWith: out.push_back(parseWith()); return;
    case TokenKind::KwIf: out.push_back(parseIf()); return;
    case TokenKind::KwElif:
    case TokenKind::KwElse:
      fail(DiagKind::UnexpectedToken, cur().loc,
           describeToken(cur()) + " without a matching `if` (check the indentation of this line)");
    case TokenKind::KwDef:
    case TokenKind::KwMacro:
    case TokenKind::At: {
      if (&out != nestedDefBlock_)
        fail(DiagKind::UnsupportedSyntax, cur().loc,
             "nested definitions are only allowed directly in the body of a top-level `def` (a kernel factory); "
             "define " + describeToken(cur()) + " there or at the top level");
      auto stmt = std::make_unique<Stmt>(StmtKind::Def, cur().loc);
      stmt->def = parseFuncDef(false);
      stmt->loc = stmt->def->loc;
      out.push_back(std::move(stmt));
      return;
    }
    case TokenKind::KwImport:
    case TokenKind::KwFrom:
      fail(DiagKind::UnsupportedSyntax, cur().loc, "imports go at the top level of the file");
    default: parseSimpleStatement(out); return;
  }
}

// Python statements outside the language get a message that says so.
void Parser::rejectUnsupportedStatement() {
  if (!at(TokenKind::Identifier)) return;
  TokenKind next = peekKind(1);
  bool looksLikeStatement = next == TokenKind::Identifier || next == TokenKind::Newline ||
                            next == TokenKind::Colon || next == TokenKind::Int || next == TokenKind::LParen ||
                            next == TokenKind::KwTrue || next == TokenKind::KwNot;
  if (!looksLikeStatement) return;
  const std::string& word = cur().text;
  const char* message = nullptr;
  if (word == "class" || word == "lambda" || word == "try" || word == "raise" ||
           word == "global" || word == "nonlocal" || word == "del" || word == "yield")
    if (next != TokenKind::LParen) message = "this Python statement is not part of the tile language";
  if (message) fail(DiagKind::UnsupportedSyntax, cur().loc, message);
}

// A module-level assignment: names (one, or a tuple of them) bound to a value.
void Parser::parseGlobalAssign(Module& module) {
  size_t first = module.globals.size();
  parseSimpleStatement(module.globals);
  for (size_t i = first; i < module.globals.size(); ++i) {
    const Stmt& s = *module.globals[i];
    bool names = s.kind == StmtKind::Assign && s.target;
    if (names && s.target->kind == ExprKind::Tuple)
      for (const ExprPtr& e : s.target->operands) names &= e && e->kind == ExprKind::Name;
    else if (names)
      names = s.target->kind == ExprKind::Name;
    if (!names) {
      SourceLoc loc = s.loc;
      module.globals.resize(first);
      fail(DiagKind::UnexpectedToken, loc,
           "at the top level a statement assigns names (`N = 1024`, `M = T.dynamic(\"m\")`); other statements go "
           "inside a `def`");
    }
  }
}

// simple_stmt = ( "pass" | "break" | "continue" | "return" [ exprlist ] | assert_stmt | expr_stmt ) NEWLINE
// assert_stmt = "assert" expr [ "," expr ]     ("assert" is a name, not a keyword)
// expr_stmt   = exprlist "=" exprlist { "=" exprlist }   (targets: NAME, subscript, or a tuple of them;
//                                                         chained targets: NAMEs)
//             | target aug_op expr             (aug_op: += -= *= /= //= %= **= &= |= ^= <<= >>=)
//             | exprlist                       (a call evaluated for its effect)
void Parser::parseSimpleStatement(Block& out) {
  size_t start = pos_;
  StmtPtr stmt;
  if (accept(TokenKind::KwPass)) {
    stmt = std::make_unique<Stmt>(StmtKind::Pass, spanFrom(start));
  } else if (accept(TokenKind::KwBreak)) {
    stmt = std::make_unique<Stmt>(StmtKind::Break, spanFrom(start));
  } else if (accept(TokenKind::KwContinue)) {
    stmt = std::make_unique<Stmt>(StmtKind::Continue, spanFrom(start));
  } else if (accept(TokenKind::KwReturn)) {
    stmt = std::make_unique<Stmt>(StmtKind::Return, toks_[start].loc);
    if (canStartExpr(cur().kind)) stmt->value = parseExprList();
    stmt->loc = spanFrom(start);
  } else if (at(TokenKind::Identifier) && cur().text == "assert" && canStartExpr(peekKind(1)) &&
             peekKind(1) != TokenKind::LParen) {
    advance();
    stmt = std::make_unique<Stmt>(StmtKind::Assert, toks_[start].loc);
    stmt->value = parseExpr();
    if (accept(TokenKind::Comma)) stmt->target = parseExpr();
    stmt->loc = spanFrom(start);
  } else {
    rejectUnsupportedStatement();
    ExprPtr lhs = parseExprList();
    std::optional<BinaryOp> augOp;
    switch (cur().kind) {
      case TokenKind::PlusEq: augOp = BinaryOp::Add; break;
      case TokenKind::MinusEq: augOp = BinaryOp::Sub; break;
      case TokenKind::StarEq: augOp = BinaryOp::Mul; break;
      case TokenKind::SlashEq: augOp = BinaryOp::Div; break;
      case TokenKind::SlashSlashEq: augOp = BinaryOp::FloorDiv; break;
      case TokenKind::PercentEq: augOp = BinaryOp::Mod; break;
      case TokenKind::StarStarEq: augOp = BinaryOp::Pow; break;
      case TokenKind::AmpEq: augOp = BinaryOp::BitAnd; break;
      case TokenKind::PipeEq: augOp = BinaryOp::BitOr; break;
      case TokenKind::CaretEq: augOp = BinaryOp::BitXor; break;
      case TokenKind::LessLessEq: augOp = BinaryOp::Shl; break;
      case TokenKind::GreaterGreaterEq: augOp = BinaryOp::Shr; break;
      default: break;
    }
    if (accept(TokenKind::Equal)) {
      checkAssignTarget(*lhs, true);
      ExprPtr rhs = parseExprList();
      // `a = b = e` binds every name to the one value: `a = e` then `b = a`.
      std::vector<ExprPtr> chained;
      while (at(TokenKind::Equal)) {
        if (lhs->kind != ExprKind::Name || rhs->kind != ExprKind::Name)
          fail(DiagKind::UnsupportedSyntax, cur().loc,
               "chained assignment (`a = b = c`) binds names only; assign each element separately");
        advance();
        chained.push_back(std::move(rhs));
        rhs = parseExprList();
      }
      stmt = std::make_unique<Stmt>(StmtKind::Assign, spanFrom(start));
      stmt->target = std::move(lhs);
      stmt->value = std::move(rhs);
      for (ExprPtr& name : chained) {
        SourceLoc loc = stmt->loc;
        auto source = std::make_unique<Expr>(ExprKind::Name, stmt->target->loc);
        source->name = stmt->target->name;
        out.push_back(std::move(stmt));
        stmt = std::make_unique<Stmt>(StmtKind::Assign, loc);
        stmt->target = std::move(name);
        stmt->value = std::move(source);
      }
    } else if (augOp) {
      advance();
      checkAssignTarget(*lhs, false);
      ExprPtr rhs = parseExpr();
      stmt = std::make_unique<Stmt>(StmtKind::AugAssign, spanFrom(start));
      stmt->augOp = *augOp;
      stmt->target = std::move(lhs);
      stmt->value = std::move(rhs);
    } else if (at(TokenKind::Colon) && lhs->kind == ExprKind::Name) {
      fail(DiagKind::UnsupportedSyntax, cur().loc,
           "variable annotations (`x: type = ...`) are not supported; write `x = T.alloc_var(type)` "
           "or a plain assignment");
    } else {
      // A bare string is a docstring or a comment: it has no effect.
      if (lhs->kind == ExprKind::String) {
        expect(TokenKind::Newline, "after the statement");
        return;
      }
      stmt = std::make_unique<Stmt>(StmtKind::Expr, spanFrom(start));
      stmt->value = std::move(lhs);
    }
  }
  if (!at(TokenKind::Newline))
    fail(DiagKind::ExpectedToken, cur().loc,
         "expected end of line after the statement, found " + describeToken(cur()));
  advance();
  out.push_back(std::move(stmt));
}

// target = NAME | primary "[" subscripts "]" ; a tuple of targets only on the left of "="
void Parser::checkAssignTarget(const Expr& target, bool allowTuple) {
  switch (target.kind) {
    case ExprKind::Name:
    case ExprKind::Subscript:
      return;
    case ExprKind::Tuple:
      if (allowTuple) {
        for (const ExprPtr& e : target.operands) checkAssignTarget(*e, false);
        return;
      }
      fail(DiagKind::InvalidAssignTarget, target.loc,
           "cannot assign to a tuple here; augmented assignment takes a single name or element");
    case ExprKind::Attribute:
      fail(DiagKind::InvalidAssignTarget, target.loc,
           "cannot assign to an attribute; assign to a name or to an element `buf[i]`");
    case ExprKind::Call:
      fail(DiagKind::InvalidAssignTarget, target.loc,
           "cannot assign to a function call; assign to a name or to an element `buf[i]`");
    default:
      fail(DiagKind::InvalidAssignTarget, target.loc,
           "cannot assign to this expression; assign to a name or to an element `buf[i]`");
  }
}

// name_list = NAME { "," NAME } [ "," ]      (ended by `closer`)
void Parser::parseNameList(Stmt& stmt, std::string_view context, TokenKind closer) {
  do {
    if (at(closer) && !stmt.names.empty()) break;
    const Token& name = expect(TokenKind::Identifier, context);
    stmt.names.push_back(name.text);
    stmt.nameLocs.push_back(name.loc);
  } while (accept(TokenKind::Comma));
}

// for_stmt    = "for" for_targets "in" expr ":" block
// for_targets = name_list | "(" name_list ")"
StmtPtr Parser::parseFor() {
  size_t start = pos_;
  advance();
  auto stmt = std::make_unique<Stmt>(StmtKind::For, toks_[start].loc);
  if (accept(TokenKind::LParen)) {
    parseNameList(*stmt, "as a loop variable", TokenKind::RParen);
    expect(TokenKind::RParen, "to close the loop variables");
  } else {
    parseNameList(*stmt, "as a loop variable after `for`", TokenKind::KwIn);
  }
  expect(TokenKind::KwIn, "after the loop variables");
  stmt->value = parseExpr();
  expect(TokenKind::Colon, "after the `for` header");
  stmt->loc = spanFrom(start);
  parseBlock(stmt->body, "the `for` loop");
  return stmt;
}

// while_stmt = "while" expr ":" block     (no `else` branch)
StmtPtr Parser::parseWhile() {
  size_t start = pos_;
  advance();
  auto stmt = std::make_unique<Stmt>(StmtKind::While, toks_[start].loc);
  stmt->value = parseExpr();
  expect(TokenKind::Colon, "after the `while` condition");
  stmt->loc = spanFrom(start);
  parseBlock(stmt->body, "the `while` loop");
  if (at(TokenKind::KwElse))
    fail(DiagKind::UnsupportedSyntax, cur().loc,
         "a `while` loop has no `else` branch in the tile language; test the condition after the loop instead");
  return stmt;
}

// with_stmt = "with" expr [ "as" ( NAME | "(" name_list ")" ) ] ":" block
StmtPtr Parser::parseWith() {
  size_t start = pos_;
  advance();
  auto stmt = std::make_unique<Stmt>(StmtKind::With, toks_[start].loc);
  stmt->value = parseExpr();
  if (accept(TokenKind::KwAs)) {
    if (accept(TokenKind::LParen)) {
      parseNameList(*stmt, "in the `as (...)` list", TokenKind::RParen);
      expect(TokenKind::RParen, "to close the `as (...)` list");
    } else {
      const Token& name = expect(TokenKind::Identifier, "after `as`");
      stmt->names.push_back(name.text);
      stmt->nameLocs.push_back(name.loc);
      if (at(TokenKind::Comma))
        fail(DiagKind::UnsupportedSyntax, cur().loc,
             "several names after `as` go in parentheses: `as (bx, by)`");
    }
  }
  expect(TokenKind::Colon, "after the `with` header");
  stmt->loc = spanFrom(start);
  parseBlock(stmt->body, "the `with` statement");
  return stmt;
}

// if_stmt = "if" expr ":" block { "elif" expr ":" block } [ "else" ":" block ]
// (an `elif` is kept as an If nested in the else branch)
StmtPtr Parser::parseIf() {
  size_t start = pos_;
  const Token& kw = advance();
  std::string what = kw.kind == TokenKind::KwIf ? "`if`" : "`elif`";
  auto stmt = std::make_unique<Stmt>(StmtKind::If, kw.loc);
  stmt->value = parseExpr();
  expectLazy(TokenKind::Colon, [&] { return "after the " + what + " condition"; });
  stmt->loc = spanFrom(start);
  parseBlock(stmt->body, "the " + what + " branch");
  if (at(TokenKind::KwElif)) {
    DepthGuard guard(*this, cur().loc);
    stmt->orelse.push_back(parseIf());
  } else if (at(TokenKind::KwElse)) {
    advance();
    expect(TokenKind::Colon, "after `else`");
    parseBlock(stmt->orelse, "the `else` branch");
  }
  return stmt;
}

// whole_expression = expr { NEWLINE } EOF
ExprPtr Parser::parseWholeExpression() {
  try {
    ExprPtr e = parseExpr();
    while (accept(TokenKind::Newline)) {
    }
    if (!at(TokenKind::Eof))
      fail(DiagKind::UnexpectedToken, cur().loc, "expected the end of the condition, found " + describeToken(cur()));
    return e;
  } catch (const ParseError&) {
    return nullptr;
  }
}

}  // namespace parser_detail

std::unique_ptr<ast::Module> parseTokens(const std::vector<Token>& tokens, DiagnosticEngine& diags, uint32_t file) {
  return parser_detail::Parser(tokens, diags, file).parseModule();
}

ast::ExprPtr parseExpressionFile(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file) {
  std::vector<Token> tokens = lex(sources, diags, file);
  return parser_detail::Parser(tokens, diags, file).parseWholeExpression();
}

std::unique_ptr<ast::Module> parseModule(const SourceManager& sources, DiagnosticEngine& diags, uint32_t file) {
  std::vector<Token> tokens = lex(sources, diags, file);
  return parseTokens(tokens, diags, file);
}

}  // namespace tlc
