// The parser's expressions: Python's precedence, from the conditional
// expression (lowest) down to atoms. Each binary level is a loop, so a long
// chain of operators does not recurse; prefix operators and brackets recurse
// under the depth guard.
//
// Locations: a node's loc spans its text from the first to the last token
// when both are on one line (otherwise the first token); a Call's loc is its
// callee's, as ast.h specifies.
#include "compiler/parser/parser_impl.h"

namespace tlc::parser_detail {

using namespace ast;

bool Parser::canStartExpr(TokenKind k) const {
  switch (k) {
    case TokenKind::Identifier: case TokenKind::Int: case TokenKind::Float: case TokenKind::String:
    case TokenKind::KwTrue: case TokenKind::KwFalse: case TokenKind::KwNone: case TokenKind::KwNot:
    case TokenKind::LParen: case TokenKind::LBracket: case TokenKind::LBrace: case TokenKind::Minus:
    case TokenKind::Plus: case TokenKind::Tilde:
      return true;
    default:
      return false;
  }
}

ExprPtr Parser::makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs, size_t start) {
  auto e = std::make_unique<Expr>(ExprKind::Binary, spanFrom(start));
  e->binaryOp = op;
  e->operands.push_back(std::move(lhs));
  e->operands.push_back(std::move(rhs));
  return e;
}

// exprlist = expr { "," expr } [ "," ]        (a Tuple when there is a comma)
ExprPtr Parser::parseExprList() {
  size_t start = pos_;
  ExprPtr first = parseExpr();
  if (!at(TokenKind::Comma)) return first;
  auto tuple = std::make_unique<Expr>(ExprKind::Tuple, first->loc);
  tuple->operands.push_back(std::move(first));
  while (accept(TokenKind::Comma)) {
    if (!canStartExpr(cur().kind)) break;
    if (tuple->operands.size() >= kMaxChain)
      fail(DiagKind::NestingTooDeep, cur().loc, "too many elements in one tuple");
    tuple->operands.push_back(parseExpr());
  }
  tuple->loc = spanFrom(start);
  return tuple;
}

// expr = disjunction [ "if" disjunction "else" expr ]
ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this, cur().loc);
  size_t start = pos_;
  ExprPtr then = parseOr();
  if (!at(TokenKind::KwIf)) return then;
  advance();
  ExprPtr cond = parseOr();
  if (!at(TokenKind::KwElse))
    fail(DiagKind::ExpectedToken, cur().loc,
         "expected `else` in the conditional expression `a if cond else b`, found " + describeToken(cur()));
  advance();
  ExprPtr otherwise = parseExpr();
  auto e = std::make_unique<Expr>(ExprKind::IfElse, spanFrom(start));
  e->operands.push_back(std::move(then));
  e->operands.push_back(std::move(cond));
  e->operands.push_back(std::move(otherwise));
  return e;
}

// disjunction = conjunction { "or" conjunction }
ExprPtr Parser::parseOr() {
  size_t start = pos_;
  ExprPtr lhs = parseAnd();
  for (int n = 0; at(TokenKind::KwOr); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    advance();
    lhs = makeBinary(BinaryOp::Or, std::move(lhs), parseAnd(), start);
  }
  return lhs;
}

// conjunction = inversion { "and" inversion }
ExprPtr Parser::parseAnd() {
  size_t start = pos_;
  ExprPtr lhs = parseNot();
  for (int n = 0; at(TokenKind::KwAnd); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    advance();
    lhs = makeBinary(BinaryOp::And, std::move(lhs), parseNot(), start);
  }
  return lhs;
}

// inversion = "not" inversion | comparison
ExprPtr Parser::parseNot() {
  if (!at(TokenKind::KwNot)) return parseComparison();
  DepthGuard guard(*this, cur().loc);
  size_t start = pos_;
  advance();
  ExprPtr operand = parseNot();
  auto e = std::make_unique<Expr>(ExprKind::Unary, spanFrom(start));
  e->unaryOp = UnaryOp::Not;
  e->operands.push_back(std::move(operand));
  return e;
}

static bool comparisonOp(TokenKind k, BinaryOp& op) {
  switch (k) {
    case TokenKind::EqEq: op = BinaryOp::Eq; return true;
    case TokenKind::NotEq: op = BinaryOp::Ne; return true;
    case TokenKind::Less: op = BinaryOp::Lt; return true;
    case TokenKind::LessEq: op = BinaryOp::Le; return true;
    case TokenKind::Greater: op = BinaryOp::Gt; return true;
    case TokenKind::GreaterEq: op = BinaryOp::Ge; return true;
    default: return false;
  }
}

// `is` and `is not` (names, not keywords) compare like `==` and `!=`: the
// type checker folds a comparison with `None` (`if scale is None:`).
bool Parser::acceptIdentityOp(BinaryOp& op) {
  if (!at(TokenKind::Identifier) || cur().text != "is") return false;
  advance();
  op = accept(TokenKind::KwNot) ? BinaryOp::Ne : BinaryOp::Eq;
  return true;
}

// comparison = bitor [ comp_op bitor ]
// comp_op    = "==" | "!=" | "<" | "<=" | ">" | ">=" | "is" | "is" "not"
// (Python's chains `a < b < c` are reported: write `a < b and b < c`.)
ExprPtr Parser::parseComparison() {
  size_t start = pos_;
  ExprPtr lhs = parseBitOr();
  BinaryOp op;
  if (comparisonOp(cur().kind, op)) advance();
  else if (!acceptIdentityOp(op)) return lhs;
  lhs = makeBinary(op, std::move(lhs), parseBitOr(), start);
  if (comparisonOp(cur().kind, op))
    fail(DiagKind::UnsupportedSyntax, cur().loc,
         "chained comparisons are not supported; write `a < b and b < c` instead of `a < b < c`");
  return lhs;
}

// bitor = bitxor { "|" bitxor }
ExprPtr Parser::parseBitOr() {
  size_t start = pos_;
  ExprPtr lhs = parseBitXor();
  for (int n = 0; at(TokenKind::Pipe); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    advance();
    lhs = makeBinary(BinaryOp::BitOr, std::move(lhs), parseBitXor(), start);
  }
  return lhs;
}

// bitxor = bitand { "^" bitand }
ExprPtr Parser::parseBitXor() {
  size_t start = pos_;
  ExprPtr lhs = parseBitAnd();
  for (int n = 0; at(TokenKind::Caret); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    advance();
    lhs = makeBinary(BinaryOp::BitXor, std::move(lhs), parseBitAnd(), start);
  }
  return lhs;
}

// bitand = shift { "&" shift }
ExprPtr Parser::parseBitAnd() {
  size_t start = pos_;
  ExprPtr lhs = parseShift();
  for (int n = 0; at(TokenKind::Amp); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    advance();
    lhs = makeBinary(BinaryOp::BitAnd, std::move(lhs), parseShift(), start);
  }
  return lhs;
}

// shift = arith { ( "<<" | ">>" ) arith }
ExprPtr Parser::parseShift() {
  size_t start = pos_;
  ExprPtr lhs = parseArith();
  for (int n = 0; at(TokenKind::LessLess) || at(TokenKind::GreaterGreater); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    BinaryOp op = advance().kind == TokenKind::LessLess ? BinaryOp::Shl : BinaryOp::Shr;
    lhs = makeBinary(op, std::move(lhs), parseArith(), start);
  }
  return lhs;
}

// arith = term { ( "+" | "-" ) term }
ExprPtr Parser::parseArith() {
  size_t start = pos_;
  ExprPtr lhs = parseTerm();
  for (int n = 0; at(TokenKind::Plus) || at(TokenKind::Minus); ++n) {
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    BinaryOp op = advance().kind == TokenKind::Plus ? BinaryOp::Add : BinaryOp::Sub;
    lhs = makeBinary(op, std::move(lhs), parseTerm(), start);
  }
  return lhs;
}

// term = factor { ( "*" | "/" | "//" | "%" ) factor }
ExprPtr Parser::parseTerm() {
  size_t start = pos_;
  ExprPtr lhs = parseFactor();
  for (int n = 0;; ++n) {
    BinaryOp op;
    switch (cur().kind) {
      case TokenKind::Star: op = BinaryOp::Mul; break;
      case TokenKind::Slash: op = BinaryOp::Div; break;
      case TokenKind::SlashSlash: op = BinaryOp::FloorDiv; break;
      case TokenKind::Percent: op = BinaryOp::Mod; break;
      default: return lhs;
    }
    if (n >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many operators in one expression");
    advance();
    lhs = makeBinary(op, std::move(lhs), parseFactor(), start);
  }
}

// factor = ( "-" | "+" | "~" ) factor | power
ExprPtr Parser::parseFactor() {
  UnaryOp op;
  switch (cur().kind) {
    case TokenKind::Minus: op = UnaryOp::Neg; break;
    case TokenKind::Plus: op = UnaryOp::Pos; break;
    case TokenKind::Tilde: op = UnaryOp::Invert; break;
    default: return parsePower();
  }
  DepthGuard guard(*this, cur().loc);
  size_t start = pos_;
  advance();
  ExprPtr operand = parseFactor();
  auto e = std::make_unique<Expr>(ExprKind::Unary, spanFrom(start));
  e->unaryOp = op;
  e->operands.push_back(std::move(operand));
  return e;
}

// power = primary [ "**" factor ]            (right-associative: 2 ** -1, a ** b ** c)
ExprPtr Parser::parsePower() {
  size_t start = pos_;
  ExprPtr base = parsePrimary();
  if (!at(TokenKind::StarStar)) return base;
  DepthGuard guard(*this, cur().loc);
  advance();
  ExprPtr exponent = parseFactor();
  return makeBinary(BinaryOp::Pow, std::move(base), std::move(exponent), start);
}

// primary = atom { "(" [ arguments ] ")" | "[" subscripts "]" | "." NAME }
ExprPtr Parser::parsePrimary() {
  size_t start = pos_;
  ExprPtr e = parseAtom();
  for (int n = 0;; ++n) {
    if ((at(TokenKind::LParen) || at(TokenKind::LBracket) || at(TokenKind::Dot)) && n >= kMaxChain)
      fail(DiagKind::NestingTooDeep, cur().loc, "too many calls, subscripts or attributes in one chain");
    if (at(TokenKind::LParen)) {
      DepthGuard guard(*this, cur().loc);
      SourceLoc calleeLoc = e->loc;
      auto call = std::make_unique<Expr>(ExprKind::Call, calleeLoc);
      call->operands.push_back(std::move(e));
      parseCallArguments(*call);
      e = std::move(call);
    } else if (at(TokenKind::LBracket)) {
      DepthGuard guard(*this, cur().loc);
      auto sub = std::make_unique<Expr>(ExprKind::Subscript, e->loc);
      sub->operands.push_back(std::move(e));
      parseSubscripts(*sub);
      sub->loc = spanFrom(start);
      e = std::move(sub);
    } else if (at(TokenKind::Dot)) {
      advance();
      // `macro` is a keyword of the language but not of Python: `T.macro` is an attribute.
      const Token& name = at(TokenKind::KwMacro) ? advance() : expect(TokenKind::Identifier, "after `.`");
      auto attr = std::make_unique<Expr>(ExprKind::Attribute, spanFrom(start));
      attr->name = name.text;
      attr->operands.push_back(std::move(e));
      e = std::move(attr);
    } else {
      return e;
    }
  }
}

// arguments = argument { "," argument } [ "," ]
// argument  = expr | NAME "=" expr           (keywords after all positional arguments)
void Parser::parseCallArguments(Expr& call) {
  expect(TokenKind::LParen, "");
  while (!at(TokenKind::RParen)) {
    if (call.operands.size() + call.keywords.size() > kMaxChain)
      fail(DiagKind::NestingTooDeep, cur().loc, "too many arguments in one call");
    if (at(TokenKind::Identifier) && peekKind(1) == TokenKind::Equal) {
      const Token& name = advance();
      advance();
      Keyword kw;
      kw.name = name.text;
      kw.loc = name.loc;
      kw.value = parseExpr();
      // A repeated keyword is reported and dropped; the first one stays.
      bool duplicate = false;
      for (const Keyword& k : call.keywords) {
        if (k.name == name.text) {
          if (Diagnostic* d = report(DiagKind::DuplicateKeywordArgument, name.loc,
                                     "keyword argument `" + name.text + "` is given twice"))
            d->note(k.loc, "`" + name.text + "` is first given here");
          duplicate = true;
          break;
        }
      }
      if (!duplicate) call.keywords.push_back(std::move(kw));
    } else {
      if (at(TokenKind::Star) || at(TokenKind::StarStar))
        fail(DiagKind::UnsupportedSyntax, cur().loc, "argument unpacking (`*args`, `**kwargs`) is not supported");
      size_t argStart = pos_;
      ExprPtr arg = parseExpr();
      if (!call.keywords.empty())
        fail(DiagKind::PositionalAfterKeyword, spanFrom(argStart),
             "positional argument after keyword argument `" + call.keywords.back().name +
                 "`; put positional arguments first");
      call.operands.push_back(std::move(arg));
    }
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RParen, "to close the call's arguments");
}

// subscripts = subscript { "," subscript } [ "," ]
void Parser::parseSubscripts(Expr& sub) {
  expect(TokenKind::LBracket, "");
  if (at(TokenKind::RBracket))
    fail(DiagKind::ExpectedExpression, cur().loc, "expected an index inside `[]`");
  while (!at(TokenKind::RBracket)) {
    if (sub.operands.size() > kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many indices");
    sub.operands.push_back(parseSubscript());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RBracket, "to close the subscript");
}

// subscript = expr | [ expr ] ":" [ expr ]
ExprPtr Parser::parseSubscript() {
  size_t start = pos_;
  ExprPtr lo;
  if (!at(TokenKind::Colon)) {
    lo = parseExpr();
    if (!at(TokenKind::Colon)) return lo;
  }
  advance();
  ExprPtr hi;
  if (!at(TokenKind::Comma) && !at(TokenKind::RBracket) && !at(TokenKind::Colon)) hi = parseExpr();
  if (at(TokenKind::Colon))
    fail(DiagKind::UnsupportedSyntax, cur().loc, "slices with a step (`a:b:c`) are not supported");
  auto slice = std::make_unique<Expr>(ExprKind::Slice, spanFrom(start));
  slice->operands.push_back(std::move(lo));
  slice->operands.push_back(std::move(hi));
  return slice;
}

// lambda = "lambda" [ NAME { "," NAME } ] ":" expr
// (kept for TileLang's index-map layouts, `T.Fragment(shape, forward_thread_fn=lambda i: i)`,
// which sema accepts inside `T.annotate_layout` and ignores; anywhere else it is an error there)
ExprPtr Parser::parseLambda() {
  size_t start = pos_;
  SourceLoc loc = advance().loc;
  auto e = std::make_unique<Expr>(ExprKind::Lambda, loc);
  while (!at(TokenKind::Colon)) {
    const Token& name = expect(TokenKind::Identifier, "as a parameter of `lambda`");
    auto param = std::make_unique<Expr>(ExprKind::Name, name.loc);
    param->name = name.text;
    e->operands.push_back(std::move(param));
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::Colon, "after the parameters of `lambda`");
  e->operands.push_back(parseExpr());
  e->loc = spanFrom(start);
  return e;
}

// atom = NAME | INT | FLOAT | STRING { STRING } | "True" | "False" | "None"
//      | "(" [ exprlist ] ")" | "[" [ exprlist ] "]"
ExprPtr Parser::parseAtom() {
  const Token& t = cur();
  switch (t.kind) {
    case TokenKind::Identifier: {
      if (t.text == "lambda" && (peekKind(1) == TokenKind::Identifier || peekKind(1) == TokenKind::Colon))
        return parseLambda();
      advance();
      auto e = std::make_unique<Expr>(ExprKind::Name, t.loc);
      e->name = t.text;
      return e;
    }
    case TokenKind::Int: {
      advance();
      auto e = std::make_unique<Expr>(ExprKind::Int, t.loc);
      e->intValue = t.intValue;
      return e;
    }
    case TokenKind::Float: {
      advance();
      auto e = std::make_unique<Expr>(ExprKind::Float, t.loc);
      e->floatValue = t.floatValue;
      return e;
    }
    case TokenKind::String: {
      size_t start = pos_;
      auto e = std::make_unique<Expr>(ExprKind::String, t.loc);
      while (at(TokenKind::String)) e->name += advance().stringValue;  // "a" "b" is "ab"
      e->loc = spanFrom(start);
      return e;
    }
    case TokenKind::KwTrue:
    case TokenKind::KwFalse: {
      advance();
      auto e = std::make_unique<Expr>(ExprKind::Bool, t.loc);
      e->boolValue = t.kind == TokenKind::KwTrue;
      return e;
    }
    case TokenKind::KwNone:
      advance();
      return std::make_unique<Expr>(ExprKind::None, t.loc);
    case TokenKind::LParen:
      return parseParenthesized();
    case TokenKind::LBracket:
      return parseListDisplay();
    case TokenKind::LBrace:
      return parseDictDisplay();
    default:
      break;
  }
  std::string found = describeToken(t);
  if (t.kind == TokenKind::Newline) found = "the end of the line";
  fail(DiagKind::ExpectedExpression, t.loc, "expected an expression, found " + found);
}

// "(" ")" is the empty tuple; "(" expr ")" is just expr; "(" expr "," ... ")" is a tuple.
ExprPtr Parser::parseParenthesized() {
  DepthGuard guard(*this, cur().loc);
  size_t start = pos_;
  advance();
  if (accept(TokenKind::RParen)) return std::make_unique<Expr>(ExprKind::Tuple, spanFrom(start));
  ExprPtr inner = parseExpr();
  if (accept(TokenKind::RParen)) return inner;
  auto tuple = std::make_unique<Expr>(ExprKind::Tuple, inner->loc);
  tuple->operands.push_back(std::move(inner));
  while (accept(TokenKind::Comma)) {
    if (at(TokenKind::RParen)) break;
    if (tuple->operands.size() >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many elements in one tuple");
    tuple->operands.push_back(parseExpr());
  }
  expect(TokenKind::RParen, "to close the parenthesis");
  tuple->loc = spanFrom(start);
  return tuple;
}

// An element of a list display: an expression, or `*t` (t's elements in its place).
ExprPtr Parser::parseDisplayElement() {
  if (!at(TokenKind::Star)) return parseExpr();
  SourceLoc loc = cur().loc;
  advance();
  auto e = std::make_unique<Expr>(ExprKind::Unary, loc);
  e->unaryOp = UnaryOp::Star;
  e->operands.push_back(parseExpr());
  return e;
}

// A list display `[a, b]` is a tuple (TileLang code writes shapes either way).
ExprPtr Parser::parseListDisplay() {
  DepthGuard guard(*this, cur().loc);
  size_t start = pos_;
  advance();
  auto tuple = std::make_unique<Expr>(ExprKind::Tuple, toks_[start].loc);
  while (!at(TokenKind::RBracket)) {
    if (tuple->operands.size() >= kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many elements in one list");
    tuple->operands.push_back(parseDisplayElement());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RBracket, "to close the list");
  tuple->loc = spanFrom(start);
  return tuple;
}

// dict_display = "{" [ expr ":" expr { "," expr ":" expr } [ "," ] ] "}"
// (set displays `{a, b}` are not part of the language)
ExprPtr Parser::parseDictDisplay() {
  DepthGuard guard(*this, cur().loc);
  size_t start = pos_;
  advance();
  auto dict = std::make_unique<Expr>(ExprKind::Dict, toks_[start].loc);
  while (!at(TokenKind::RBrace)) {
    if (dict->operands.size() >= 2 * kMaxChain) fail(DiagKind::NestingTooDeep, cur().loc, "too many entries in one dict");
    dict->operands.push_back(parseExpr());
    if (!at(TokenKind::Colon))
      fail(DiagKind::UnsupportedSyntax, cur().loc, "set displays (`{a, b}`) are not supported; a dict needs `key: value`");
    advance();
    dict->operands.push_back(parseExpr());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RBrace, "to close the dict");
  dict->loc = spanFrom(start);
  return dict;
}

}  // namespace tlc::parser_detail
