// The .tir parser's token layer (expectations and their errors), scopes
// and expressions: precedence from `or` (lowest) down to primaries, literals
// with their suffixes, casts and calls. Each binary level is a loop, so a
// long chain of operators does not recurse; prefix operators and parentheses
// recurse under the depth guard, and every node's height is bounded by
// kMaxExprDepth (limits.h).
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "compiler/ir/ir_parser_internal.h"
#include "compiler/ir/limits.h"

namespace tlc::ir::parser_detail {

// ------------------------------------------------------------ tokens

std::string IRParser::describe(const Token& t) {
  switch (t.kind) {
    case TokKind::End: return "end of file";
    case TokKind::String: return "a string";
    default: return "`" + t.text + "`";
  }
}

void IRParser::fail(DiagKind kind, SourceLoc loc, const std::string& msg) {
  diags_.report(kind, loc, msg);
  throw ParseAbort{};
}

Token IRParser::expectPunct(std::string_view p) {
  if (!atPunct(p)) fail(DiagKind::IrSyntaxError, cur().loc, "expected `" + std::string(p) + "`, found " + describe(cur()));
  return take();
}

Token IRParser::expectWord(std::string_view w) {
  if (!atWord(w)) fail(DiagKind::IrSyntaxError, cur().loc, "expected `" + std::string(w) + "`, found " + describe(cur()));
  return take();
}

Token IRParser::expectName(const char* what) {
  if (!at(TokKind::Ident) || isReservedWord(cur().text))
    fail(DiagKind::IrSyntaxError, cur().loc, std::string("expected ") + what + ", found " + describe(cur()));
  return take();
}

// ------------------------------------------------------------ scopes

const Symbol* IRParser::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return &f->second;
  }
  return nullptr;
}

void IRParser::declare(const std::string& name, Symbol sym) {
  if (const Symbol* prev = lookup(name)) {
    diags_.report(DiagKind::IrRedefinition, sym.loc, "`" + name + "` is already declared in this scope; choose a fresh name")
        .note(prev->loc, "previous declaration of `" + name + "`");
    throw ParseAbort{};
  }
  scopes_.back()[name] = std::move(sym);
}

// ------------------------------------------------------------ types and indices

// dtype := IDENT naming a scalar type (int32, float16, ...)
DType IRParser::parseDType() {
  Token t = take();
  if (t.kind != TokKind::Ident) fail(DiagKind::IrSyntaxError, t.loc, "expected a dtype, found " + describe(t));
  auto d = tlc::parseDType(t.text);
  if (!d) fail(DiagKind::IrUnknownDType, t.loc, "unknown dtype `" + t.text + "`");
  return *d;
}

// '[' (expr (',' expr)*)? ']'   with one index per buffer dimension
std::vector<Expr> IRParser::parseIndices(const Buffer& b, SourceLoc at) {
  expectPunct("[");
  std::vector<Expr> idx;
  if (!atPunct("]")) idx = parseExprList();
  expectPunct("]");
  if (idx.size() != b->shape.size())
    fail(DiagKind::IrRankMismatch, at,
         "`" + b->name + "` has " + std::to_string(b->shape.size()) + " dimensions but " +
             std::to_string(idx.size()) + " indices are given");
  return idx;
}

// ------------------------------------------------------------ expressions

std::vector<Expr> IRParser::parseExprList() {
  std::vector<Expr> out;
  do out.push_back(parseExpr());
  while (acceptPunct(","));
  return out;
}

Expr IRParser::binary(BinaryOp op, Expr a, Expr b, SourceLoc opLoc) {
  if (a->dtype != b->dtype)
    fail(DiagKind::IrDTypeMismatch, opLoc,
         std::string("operands of `") + binaryOpSpelling(op) + "` have different dtypes (" +
             std::string(dtypeName(a->dtype)) + " and " + std::string(dtypeName(b->dtype)) +
             "); convert one with `cast<...>(...)`");
  SourceLoc loc = SourceLoc::span(a->loc, b->loc);
  return bounded(makeBinary(op, std::move(a), std::move(b), loc));
}

// Records the height of a node just built from parsed operands and rejects
// it past kMaxExprDepth (limits.h).
Expr IRParser::bounded(Expr e) {
  int h = 1;
  for (const ExprNode* op : exprOperands(*e)) {
    auto it = heights_.find(op);
    h = std::max(h, (it == heights_.end() ? 1 : it->second) + 1);
  }
  if (h > kMaxExprDepth)
    fail(DiagKind::IrNestingTooDeep, e->loc,
         "expression is nested deeper than " + std::to_string(kMaxExprDepth) + " levels; bind parts of it with `let`");
  heights_[e.get()] = h;
  return e;
}

// Counts the operators of one chain against kMaxChain.
void IRParser::chainLink(int& n, SourceLoc at) {
  if (++n > kMaxChain)
    fail(DiagKind::IrNestingTooDeep, at,
         "more than " + std::to_string(kMaxChain) + " operators in one expression; bind parts of it with `let`");
}

// expr := or_expr
Expr IRParser::parseExpr() {
  DepthGuard depth(*this);
  return parseOr();
}

// or_expr := and_expr ('or' and_expr)*
Expr IRParser::parseOr() {
  Expr e = parseAnd();
  int n = 0;
  while (atWord("or")) {
    SourceLoc at = take().loc;
    chainLink(n, at);
    e = binary(BinaryOp::Or, e, parseAnd(), at);
  }
  return e;
}

// and_expr := not_expr ('and' not_expr)*
Expr IRParser::parseAnd() {
  Expr e = parseNot();
  int n = 0;
  while (atWord("and")) {
    SourceLoc at = take().loc;
    chainLink(n, at);
    e = binary(BinaryOp::And, e, parseNot(), at);
  }
  return e;
}

// not_expr := 'not' not_expr | cmp_expr
Expr IRParser::parseNot() {
  if (atWord("not")) {
    DepthGuard depth(*this);
    SourceLoc at = take().loc;
    Expr a = parseNot();
    return bounded(makeUnary(UnaryOp::Not, a, SourceLoc::span(at, a->loc)));
  }
  return parseCmp();
}

// One left-associative level: operand ((op) operand)*.
template <class Next>
Expr IRParser::parseLevel(std::initializer_list<OpLevel> ops, Next next) {
  Expr e = next();
  int n = 0;
  while (true) {
    const OpLevel* match = nullptr;
    for (const OpLevel& o : ops)
      if (atPunct(o.spelling)) match = &o;
    if (!match) return e;
    SourceLoc at = take().loc;
    chainLink(n, at);
    e = binary(match->op, e, next(), at);
  }
}

// cmp_expr := bitor_expr (('==' | '!=' | '<' | '<=' | '>' | '>=') bitor_expr)*
Expr IRParser::parseCmp() {
  return parseLevel({{"==", BinaryOp::Eq}, {"!=", BinaryOp::Ne}, {"<", BinaryOp::Lt}, {"<=", BinaryOp::Le},
                     {">", BinaryOp::Gt}, {">=", BinaryOp::Ge}},
                    [&] { return parseBitOr(); });
}

// bitor_expr := xor_expr ('|' xor_expr)*
Expr IRParser::parseBitOr() { return parseLevel({{"|", BinaryOp::BitOr}}, [&] { return parseXor(); }); }

// xor_expr := bitand_expr ('^' bitand_expr)*
Expr IRParser::parseXor() { return parseLevel({{"^", BinaryOp::BitXor}}, [&] { return parseBitAnd(); }); }

// bitand_expr := shift_expr ('&' shift_expr)*
Expr IRParser::parseBitAnd() { return parseLevel({{"&", BinaryOp::BitAnd}}, [&] { return parseShift(); }); }

// shift_expr := add_expr (('<<' | '>>') add_expr)*
Expr IRParser::parseShift() {
  return parseLevel({{"<<", BinaryOp::Shl}, {">>", BinaryOp::Shr}}, [&] { return parseAdd(); });
}

// add_expr := mul_expr (('+' | '-') mul_expr)*
Expr IRParser::parseAdd() {
  return parseLevel({{"+", BinaryOp::Add}, {"-", BinaryOp::Sub}}, [&] { return parseMul(); });
}

// mul_expr := unary_expr (('*' | '/' | '%') unary_expr)*
Expr IRParser::parseMul() {
  return parseLevel({{"*", BinaryOp::Mul}, {"/", BinaryOp::Div}, {"%", BinaryOp::FloorMod}},
                    [&] { return parseUnary(); });
}

// unary_expr := '-' NUMBER | '-' ('inf' | 'nan')suffix   (negative literals)
//             | '-' unary_expr | '~' unary_expr | primary
Expr IRParser::parseUnary() {
  if (atPunct("-") || atPunct("~")) {
    DepthGuard depth(*this);
    Token op = take();
    if (op.text == "-" && at(TokKind::Number)) return bounded(parseNumber(take(), true, op.loc));
    if (op.text == "-" && at(TokKind::Ident) && specialFloat(cur().text))
      return bounded(parseSpecialFloat(take(), true, op.loc));
    Expr a = parseUnary();
    return bounded(makeUnary(op.text == "-" ? UnaryOp::Neg : UnaryOp::BitNot, a, SourceLoc::span(op.loc, a->loc)));
  }
  return bounded(parsePrimary());
}

bool IRParser::specialFloat(std::string_view w) {
  return (w.substr(0, 3) == "inf" || w.substr(0, 3) == "nan") && floatSuffixDType(w.substr(3));
}

Expr IRParser::parseSpecialFloat(const Token& t, bool negative, SourceLoc start) {
  DType d = *floatSuffixDType(std::string_view(t.text).substr(3));
  double v = t.text.substr(0, 3) == "inf" ? std::numeric_limits<double>::infinity()
                                           : std::numeric_limits<double>::quiet_NaN();
  return makeFloat(negative ? -v : v, d, SourceLoc::span(start, t.loc));
}

// NUMBER := DIGITS ('.' DIGITS)? (('e'|'E') ('+'|'-')? DIGITS)? SUFFIX?
Expr IRParser::parseNumber(const Token& t, bool negative, SourceLoc start) {
  SourceLoc loc = SourceLoc::span(start, t.loc);
  const std::string& s = t.text;
  size_t j = 0;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  bool isFloatSyntax = false;
  if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
    isFloatSyntax = true;
    ++j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  }
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
      isFloatSyntax = true;
      j = k;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    }
  }
  std::string_view digits = std::string_view(s).substr(0, j), suffix = std::string_view(s).substr(j);
  auto floatType = floatSuffixDType(suffix);
  bool wantFloat = isFloatSyntax || (!suffix.empty() && floatType);
  if (wantFloat) {
    if (!floatType) fail(DiagKind::IrInvalidLiteral, loc, "unknown float literal suffix `" + std::string(suffix) + "`");
    double v = 0;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (res.ec != std::errc() || res.ptr != digits.data() + digits.size())
      fail(DiagKind::IrInvalidLiteral, loc, "float literal `" + s + "` is out of range");
    return makeFloat(negative ? -v : v, *floatType, loc);
  }
  auto intType = intSuffixDType(suffix);
  if (!intType) fail(DiagKind::IrInvalidLiteral, loc, "unknown integer literal suffix `" + std::string(suffix) + "`");
  uint64_t mag = 0;
  auto res = std::from_chars(digits.data(), digits.data() + digits.size(), mag);
  if (res.ec != std::errc() || res.ptr != digits.data() + digits.size())
    fail(DiagKind::IrInvalidLiteral, loc, "integer literal `" + s + "` does not fit in 64 bits");
  int64_t value = 0;
  if (negative) {
    if (mag > (uint64_t(1) << 63)) fail(DiagKind::IrInvalidLiteral, loc, "integer literal `-" + s + "` does not fit in 64 bits");
    value = static_cast<int64_t>(0 - mag);
  } else {
    value = static_cast<int64_t>(mag);
  }
  if (!intFits(value, mag, negative, *intType))
    fail(DiagKind::IrInvalidLiteral, loc,
         "integer literal `" + std::string(negative ? "-" : "") + s + "` does not fit in " +
             std::string(dtypeName(*intType)));
  return makeInt(value, *intType, loc);
}

bool IRParser::intFits(int64_t value, uint64_t mag, bool negative, DType t) {
  int bits = dtypeBits(t);
  if (!isSigned(t)) return !negative && (bits == 64 || mag < (uint64_t(1) << bits));
  if (bits == 64) return negative || mag <= uint64_t(std::numeric_limits<int64_t>::max());
  int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << (bits - 1)) - 1;
  return negative ? (mag <= uint64_t(-lo) && value >= lo) : mag <= uint64_t(hi);
}

// primary := NUMBER | 'true' | 'false' | ('inf' | 'nan')suffix | '(' expr ')'
//          | 'cast' '<' dtype '>' '(' expr ')' | 'select' '(' expr ',' expr ',' expr ')'
//          | ('min' | 'max' | 'floordiv') '(' expr ',' expr ')'
//          | '@' symbol ('<' dtype '>')? '(' (expr (',' expr)*)? ')'
//          | IDENT '[' (expr (',' expr)*)? ']' | IDENT
Expr IRParser::parsePrimary() {
  Token t = take();
  if (t.kind == TokKind::Number) return parseNumber(t, false, t.loc);
  if (t.kind == TokKind::Punct && t.text == "(") {
    Expr e = parseExpr();
    expectPunct(")");
    return e;
  }
  if (t.kind == TokKind::Punct && t.text == "@") return parseCall(t.loc);
  if (t.kind != TokKind::Ident) fail(DiagKind::IrSyntaxError, t.loc, "expected an expression, found " + describe(t));
  const std::string& w = t.text;
  if (w == "true" || w == "false") return makeBool(w == "true", t.loc);
  if (specialFloat(w)) return parseSpecialFloat(t, false, t.loc);
  if (w == "cast") {
    expectPunct("<");
    DType d = parseDType();
    expectPunct(">");
    expectPunct("(");
    Expr v = parseExpr();
    SourceLoc close = expectPunct(")").loc;
    // Built directly (not with makeCast) so that even a same-dtype cast round-trips.
    return std::make_shared<const Cast>(d, v, SourceLoc::span(t.loc, close));
  }
  if (w == "select") {
    expectPunct("(");
    Expr c = parseExpr();
    expectPunct(",");
    Expr a = parseExpr();
    expectPunct(",");
    Expr b = parseExpr();
    SourceLoc close = expectPunct(")").loc;
    if (c->dtype != DType::Bool)
      fail(DiagKind::IrOperandType, c->loc, "the condition of `select` must be bool, not " + std::string(dtypeName(c->dtype)));
    if (a->dtype != b->dtype)
      fail(DiagKind::IrDTypeMismatch, t.loc,
           "the arms of `select` have different dtypes (" + std::string(dtypeName(a->dtype)) + " and " +
               std::string(dtypeName(b->dtype)) + ")");
    return makeSelect(c, a, b, SourceLoc::span(t.loc, close));
  }
  if (w == "min" || w == "max" || w == "floordiv") {
    expectPunct("(");
    Expr a = parseExpr();
    expectPunct(",");
    Expr b = parseExpr();
    SourceLoc close = expectPunct(")").loc;
    BinaryOp op = w == "min" ? BinaryOp::Min : w == "max" ? BinaryOp::Max : BinaryOp::FloorDiv;
    Expr e = binary(op, a, b, t.loc);
    return std::make_shared<const Binary>(op, as<Binary>(e)->a, as<Binary>(e)->b, e->dtype, SourceLoc::span(t.loc, close));
  }
  if (isReservedWord(w)) fail(DiagKind::IrSyntaxError, t.loc, "expected an expression, found " + describe(t));
  const Symbol* s = lookup(w);
  if (!s) fail(DiagKind::IrUnboundName, t.loc, "`" + w + "` is not declared");
  if (s->buffer) {
    if (!atPunct("["))
      fail(DiagKind::IrSyntaxError, t.loc, "`" + w + "` is a buffer; read an element with `" + w + "[...]`");
    std::vector<Expr> idx = parseIndices(s->buffer, t.loc);
    return makeLoad(s->buffer, std::move(idx), SourceLoc::span(t.loc, toks_[pos_ - 1].loc));
  }
  return makeVarRef(s->var, t.loc);
}

Expr IRParser::parseCall(SourceLoc at) {
  Token name = take();
  if (name.kind != TokKind::Ident && name.kind != TokKind::String)
    fail(DiagKind::IrSyntaxError, name.loc, "expected a callee name after `@`, found " + describe(name));
  std::optional<DType> type;
  if (acceptPunct("<")) {
    type = parseDType();
    expectPunct(">");
  }
  expectPunct("(");
  std::vector<Expr> args;
  if (!atPunct(")")) args = parseExprList();
  SourceLoc close = expectPunct(")").loc;
  if (!type) {
    if (args.empty())
      fail(DiagKind::IrSyntaxError, close, "a call without arguments needs its result dtype: `@" + name.text + "<dtype>()`");
    type = args[0]->dtype;
  }
  return makeCall(name.text, std::move(args), *type, SourceLoc::span(at, close));
}

}  // namespace tlc::ir::parser_detail
