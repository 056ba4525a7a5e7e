// The .tir parser's top level: the module, functions, declarations and
// statements. The token layer, scopes and expressions are in
// ir_parser_expr.cpp; the shared state is ir_parser_internal.h.
//
// Each parse function has the grammar production it recognizes written above
// it; docs/tile-ir.md describes the syntax.
#include "compiler/ir/ir_parser.h"

#include <charconv>
#include <filesystem>
#include <limits>
#include <set>

#include "compiler/ir/im2col.h"
#include "compiler/ir/ir_parser_internal.h"
#include "compiler/ir/verifier.h"

namespace tlc::ir {

namespace parser_detail {

IRParser::IRParser(SourceManager& sources, DiagnosticEngine& diags, uint32_t file)
    : sources_(sources), diags_(diags), file_(file) {
  toks_ = lexIR(sources.text(file), file, diags);
}

// module := func*
Module IRParser::parseModule() {
  Module m;
  while (!at(TokKind::End)) {
    try {
      if (!atWord("func")) fail(DiagKind::IrSyntaxError, cur().loc, "expected `func`, found " + describe(cur()));
      m.funcs.push_back(parseFunc());
    } catch (const ParseAbort&) {
      scopes_.clear();
      depth_ = 0;
      do take();
      while (!at(TokKind::End) && !atWord("func"));
    }
  }
  return m;
}

// ------------------------------------------------------------ declarations

// vardecl := IDENT (':' dtype)?      (int32 when the dtype is omitted)
Var IRParser::parseVarDecl(bool requireType) {
  Token name = expectName("a variable name");
  DType t = DType::Int32;
  if (acceptPunct(":")) t = parseDType();
  else if (requireType) fail(DiagKind::IrSyntaxError, cur().loc, "expected `:` and the dtype of `" + name.text + "`");
  return makeVar(name.text, t, name.loc);
}

// shape := '[' (expr (',' expr)*)? ']'
std::vector<Expr> IRParser::parseShape() {
  expectPunct("[");
  std::vector<Expr> dims;
  if (!atPunct("]")) dims = parseExprList();
  expectPunct("]");
  for (const Expr& d : dims)
    if (!isInteger(d->dtype))
      fail(DiagKind::IrOperandType, d->loc, "a dimension must be an integer, not " + std::string(dtypeName(d->dtype)));
  return dims;
}

std::optional<MemScope> IRParser::scopeNamed(std::string_view w) {
  for (MemScope s :
       {MemScope::Global, MemScope::Shared, MemScope::Fragment, MemScope::Local, MemScope::Var, MemScope::Barrier})
    if (w == memScopeName(s)) return s;
  return std::nullopt;
}

// loc-suffix := 'loc' '(' STRING ':' NUMBER ':' NUMBER ')'
void IRParser::parseOptLoc(SourceLoc& loc) {
  if (!atWord("loc") || !(peek().kind == TokKind::Punct && peek().text == "(")) return;
  take();
  take();
  Token file = take();
  if (file.kind != TokKind::String) fail(DiagKind::IrSyntaxError, file.loc, "expected a file name string in `loc(...)`");
  expectPunct(":");
  int64_t line = parseSmallInt("a line number");
  expectPunct(":");
  int64_t col = parseSmallInt("a column number");
  expectPunct(")");
  auto it = locFiles_.find(file.text);
  if (it == locFiles_.end()) {
    // Only a regular file is read (for the source lines of diagnostics): a
    // device or a directory named in the text must not block or fail here.
    std::error_code ec;
    std::string error;
    uint32_t id = std::filesystem::is_regular_file(file.text, ec) ? sources_.addFile(file.text, error) : 0;
    if (id == 0) id = sources_.addBuffer(file.text, "");
    it = locFiles_.emplace(file.text, id).first;
  }
  loc = SourceLoc{it->second, static_cast<uint32_t>(line), static_cast<uint32_t>(col), 1};
}

// An unsuffixed non-negative integer literal (threads, attributes, locations).
int64_t IRParser::parseSmallInt(const char* what) {
  bool neg = acceptPunct("-");
  Token t = take();
  int64_t v = 0;
  auto res = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (t.kind != TokKind::Number || res.ec != std::errc() || res.ptr != t.text.data() + t.text.size())
    fail(t.kind == TokKind::Number ? DiagKind::IrInvalidLiteral : DiagKind::IrSyntaxError, t.loc,
         std::string("expected ") + what + ", found " + describe(t));
  return neg ? -v : v;
}

// ------------------------------------------------------------ functions

// func := 'func' '@' symbol ('[' vardecl (',' vardecl)* ']')? '(' (param (',' param)*)? ')'
//         ('bind' '(' binding (',' binding)* ')')? loc-suffix? block
Func IRParser::parseFunc() {
  heights_.clear();
  ScopeGuard scope(*this);
  auto f = std::make_shared<PrimFunc>();
  f->loc = expectWord("func").loc;
  expectPunct("@");
  Token name = take();
  if (name.kind != TokKind::Ident && name.kind != TokKind::String)
    fail(DiagKind::IrSyntaxError, name.loc, "expected a function name after `@`, found " + describe(name));
  if (name.text.find('\0') != std::string::npos)
    fail(DiagKind::IrInvalidCharacter, name.loc,
         "a function name cannot contain a NUL character: the runtime looks kernels up by C string");
  f->name = name.text;
  if (acceptPunct("[")) {
    do {
      Var v = parseVarDecl();
      declareVar(v);
      f->shapeVars.push_back(v);
    } while (acceptPunct(","));
    expectPunct("]");
  }
  expectPunct("(");
  if (!atPunct(")")) {
    do f->params.push_back(parseParam());
    while (acceptPunct(","));
  }
  expectPunct(")");
  if (acceptWord("bind")) {
    expectPunct("(");
    do {
      Token key = take();
      if (key.kind != TokKind::Ident && key.kind != TokKind::String)
        fail(DiagKind::IrSyntaxError, key.loc, "expected a binding name, found " + describe(key));
      expectPunct("=");
      Token value = take();
      if (value.kind != TokKind::String)
        fail(DiagKind::IrSyntaxError, value.loc, "expected the bound value as a string, found " + describe(value));
      f->bindings.push_back({key.text, value.text});
    } while (acceptPunct(","));
    expectPunct(")");
  }
  parseOptLoc(f->loc);
  f->body = parseBlock();
  return f;
}

// param := IDENT ':' scope? dtype shape     (a tensor; scope defaults to global)
//        | IDENT ':' dtype                  (a scalar)
Param IRParser::parseParam() {
  Token name = expectName("a parameter name");
  expectPunct(":");
  Param p;
  p.name = name.text;
  p.loc = name.loc;
  std::optional<MemScope> scope;
  if (at(TokKind::Ident)) scope = scopeNamed(cur().text);
  if (scope) take();
  DType t = parseDType();
  if (scope || atPunct("[")) {
    p.buffer = makeBuffer(name.text, t, parseShape(), scope.value_or(MemScope::Global), name.loc);
    declare(name.text, Symbol{nullptr, p.buffer, name.loc});
  } else {
    p.scalar = makeVar(name.text, t, name.loc);
    declareVar(p.scalar);
  }
  return p;
}

// ------------------------------------------------------------ statements

// block := '{' stmt* '}'
Stmt IRParser::parseBlock() {
  DepthGuard depth(*this);
  SourceLoc loc = expectPunct("{").loc;
  ScopeGuard scope(*this);
  std::vector<Stmt> body = parseStmtsUntilBrace();
  expectPunct("}");
  return makeSeq(std::move(body), loc);
}

// A flat let (one without braces) takes the rest of the block as its body;
// a long run of them is read in a loop and nested at the end, so it costs
// no parser recursion.
std::vector<Stmt> IRParser::parseStmtsUntilBrace() {
  struct FlatLet {
    Var var;
    Expr value;
    SourceLoc loc;
    std::vector<Stmt> before;
  };
  std::vector<FlatLet> lets;
  std::vector<Stmt> out;
  size_t scopes = scopes_.size();
  while (!atPunct("}")) {
    if (at(TokKind::End)) fail(DiagKind::IrSyntaxError, cur().loc, "expected `}` before the end of the file");
    if (!atWord("let")) {
      out.push_back(parseStmt());
      continue;
    }
    SourceLoc loc = take().loc;
    Var v = parseLetHead(loc);
    if (atPunct("{")) {
      ScopeGuard scope(*this);
      declareVar(v);
      Stmt body = parseBlock();
      out.push_back(std::make_shared<const LetStmt>(v, letValue_, body, loc));
      continue;
    }
    scopes_.emplace_back();
    declareVar(v);
    lets.push_back(FlatLet{v, letValue_, loc, std::move(out)});
    out.clear();
  }
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    Stmt let = std::make_shared<const LetStmt>(it->var, it->value, makeSeq(std::move(out), it->loc), it->loc);
    out = std::move(it->before);
    out.push_back(std::move(let));
  }
  scopes_.resize(scopes);
  return out;
}

// stmt := kernel | alloc | for | if | let | evaluate | copy | gemm | fill | reduce | atomic
//         | annotate | print | break | continue | store | version | commit_group | wait_group
//         (the last three: ir_parser_async.cpp)
Stmt IRParser::parseStmt() {
  DepthGuard depth(*this);
  const Token& t = cur();
  if (t.kind != TokKind::Ident) fail(DiagKind::IrSyntaxError, t.loc, "expected a statement, found " + describe(t));
  const std::string& w = t.text;
  if (w == "kernel") return parseKernel();
  if (w == "alloc") return parseAlloc();
  if (w == "for") return parseFor();
  if (w == "if") return parseIf();
  if (w == "evaluate") return parseEvaluate();
  if (w == "copy") return parseCopy();
  if (w == "gemm") return parseGemm();
  if (w == "fill") return parseFill();
  if (w.rfind("reduce_", 0) == 0) return parseReduce();
  if (w.rfind("atomic_", 0) == 0) return parseAtomic();
  if (w == "annotate_layout") return parseAnnotateLayout();
  if (w == "print") return parsePrint();
  if (w == "break" || w == "continue") return parseLoopJump();
  if (w == "copy_async") return parseCopy();
  if (w == "version") return parseVersion();
  if (w == "commit_group" || w == "wait_group") return parseAsyncGroup();
  if (w == "barrier_arrive" || w == "barrier_wait") return parseBarrierStmt();
  if (w == "warp_specialize") return parseWarpSpecialize();
  if (!isReservedWord(w) && peek().kind == TokKind::Punct && peek().text == "[") return parseStore();
  fail(DiagKind::IrSyntaxError, t.loc, "expected a statement, found " + describe(t));
}

// kernel := 'kernel' 'grid' '(' expr (',' expr)* ')' 'threads' '(' NUMBER ')'
//           'as' '(' vardecl (',' vardecl)* ')' loc-suffix? block
Stmt IRParser::parseKernel() {
  SourceLoc loc = take().loc;
  expectWord("grid");
  expectPunct("(");
  std::vector<Expr> grid = parseExprList();
  expectPunct(")");
  expectWord("threads");
  expectPunct("(");
  int64_t threads = parseSmallInt("the number of threads");
  expectPunct(")");
  int64_t swizzle = 0;
  if (acceptWord("swizzle")) {
    expectPunct("(");
    swizzle = parseSmallInt("the swizzle panel size");
    expectPunct(")");
  }
  expectWord("as");
  expectPunct("(");
  ScopeGuard scope(*this);
  std::vector<Var> vars;
  do {
    vars.push_back(parseVarDecl());
    declareVar(vars.back());
  } while (acceptPunct(","));
  expectPunct(")");
  parseOptLoc(loc);
  Stmt body = parseBlock();
  return std::make_shared<const KernelStmt>(std::move(grid), std::move(vars), threads, std::move(body), loc, swizzle);
}

// alloc := 'alloc' IDENT ':' scope dtype shape ('versions' '(' NUMBER ')')? ('arrivals' '(' NUMBER ')')?
//           loc-suffix?
Stmt IRParser::parseAlloc() {
  SourceLoc loc = take().loc;
  Token name = expectName("a buffer name");
  expectPunct(":");
  Token scopeTok = take();
  auto scope = scopeTok.kind == TokKind::Ident ? scopeNamed(scopeTok.text) : std::nullopt;
  if (!scope)
    fail(DiagKind::IrSyntaxError, scopeTok.loc,
         "expected a memory scope (global, shared, fragment, local, var, barrier), found " + describe(scopeTok));
  DType t = parseDType();
  Buffer b = makeBuffer(name.text, t, parseShape(), *scope, name.loc);
  int64_t versions = 1;
  if (acceptWord("versions")) {
    expectPunct("(");
    versions = parseSmallInt("the number of versions");
    expectPunct(")");
  }
  int64_t arrivals = 0;
  if (acceptWord("arrivals")) {
    expectPunct("(");
    arrivals = parseSmallInt("the number of arrivals");
    expectPunct(")");
  }
  parseOptLoc(loc);
  declare(name.text, Symbol{nullptr, b, name.loc});
  return std::make_shared<const AllocStmt>(b, loc, versions, arrivals);
}

// for := 'for' vardecl 'in' kind '(' expr ':' '+' expr (',' attr)* ')' loc-suffix? block
// kind := 'serial' | 'parallel' | 'pipelined' | 'unroll' | 'vectorized'
// attr := 'num_stages' '=' NUMBER | ('order' | 'stage') '=' ints | 'group' '=' '[' ints (',' ints)* ']'
//         | 'warp_specialize' '=' ('true' | 'false') | 'im2col' '=' ints (8 of them, ir/im2col.h)
// ints := '[' (int (',' int)*)? ']'
Stmt IRParser::parseFor() {
  SourceLoc loc = take().loc;
  Var v = parseVarDecl();
  expectWord("in");
  Token kindTok = take();
  std::optional<ForKind> kind;
  for (ForKind k : {ForKind::Serial, ForKind::Parallel, ForKind::Pipelined, ForKind::Unroll, ForKind::Vectorized})
    if (kindTok.kind == TokKind::Ident && kindTok.text == forKindName(k)) kind = k;
  if (!kind)
    fail(DiagKind::IrSyntaxError, kindTok.loc,
         "expected a loop kind (serial, parallel, pipelined, unroll, vectorized), found " + describe(kindTok));
  expectPunct("(");
  Expr mn = parseExpr();
  expectPunct(":");
  expectPunct("+");
  Expr ext = parseExpr();
  int64_t stages = 0;
  std::vector<int64_t> order, stage;
  std::vector<std::vector<int64_t>> group;
  bool seenStages = false, seenOrder = false, seenStage = false, seenGroup = false, seenWs = false,
       seenIm2col = false;
  std::vector<int64_t> im2col;
  bool warpSpecialize = true;
  auto ints = [&](std::vector<int64_t>& list) {
    expectPunct("[");
    if (!atPunct("]")) {
      do list.push_back(parseSmallInt("an integer"));
      while (acceptPunct(","));
    }
    expectPunct("]");
  };
  while (acceptPunct(",")) {
    Token key = take();
    expectPunct("=");
    auto once = [&](bool& seen) {
      if (seen) fail(DiagKind::IrInvalidAttribute, key.loc, "`" + key.text + "` is given twice");
      seen = true;
    };
    if (key.text == "num_stages") {
      once(seenStages);
      stages = parseSmallInt("the number of stages");
    } else if (key.text == "order" || key.text == "stage") {
      once(key.text == "order" ? seenOrder : seenStage);
      ints(key.text == "order" ? order : stage);
    } else if (key.text == "group") {
      once(seenGroup);
      expectPunct("[");
      do ints(group.emplace_back());
      while (acceptPunct(","));
      expectPunct("]");
    } else if (key.text == "warp_specialize") {
      once(seenWs);
      Token v = take();
      if (v.text != "true" && v.text != "false")
        fail(DiagKind::IrInvalidAttribute, v.loc, "`warp_specialize` is true or false, not " + describe(v));
      warpSpecialize = v.text == "true";
    } else if (key.text == "im2col") {
      once(seenIm2col);
      ints(im2col);
      if (!validIm2colAttribute(im2col))
        fail(DiagKind::IrInvalidAttribute, key.loc,
             "`im2col` is [kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w]: kernels, "
             "strides and dilations at least 1, paddings at least 0");
    } else {
      fail(DiagKind::IrInvalidAttribute, key.loc,
           "unknown loop attribute " + describe(key) +
               "; expected num_stages, order, stage, group, warp_specialize or im2col");
    }
  }
  expectPunct(")");
  parseOptLoc(loc);
  ScopeGuard scope(*this);
  declareVar(v);
  Stmt body = parseBlock();
  auto f = std::make_shared<ForStmt>(v, mn, ext, *kind, body, loc);
  f->numStages = stages;
  f->order = std::move(order);
  f->stage = std::move(stage);
  f->group = std::move(group);
  f->warpSpecialize = warpSpecialize;
  f->im2col = std::move(im2col);
  return f;
}

// if := 'if' ('[' 'likely' ']')? expr loc-suffix? block ('else' (if | block))?
Stmt IRParser::parseIf() {
  SourceLoc loc = take().loc;
  bool likely = false;
  if (acceptPunct("[")) {
    expectWord("likely");
    expectPunct("]");
    likely = true;
  }
  Expr cond = parseExpr();
  parseOptLoc(loc);
  Stmt then = parseBlock();
  Stmt otherwise;
  if (acceptWord("else")) {
    if (atWord("if")) {
      DepthGuard depth(*this);
      otherwise = parseIf();
    } else {
      otherwise = parseBlock();
    }
  }
  return std::make_shared<const IfStmt>(cond, then, otherwise, loc, likely);
}

// let := 'let' IDENT (':' dtype)? '=' expr loc-suffix? block
//      | 'let' IDENT (':' dtype)? '=' expr loc-suffix? stmt*   (the rest of the enclosing block is the body)
// Without a written dtype the variable takes the value's. Reads what
// follows `let` up to the body; the value is left in letValue_.
Var IRParser::parseLetHead(SourceLoc& loc) {
  Token name = expectName("a variable name");
  std::optional<DType> written;
  if (acceptPunct(":")) written = parseDType();
  expectPunct("=");
  letValue_ = parseExpr();
  Var v = makeVar(name.text, written.value_or(letValue_->dtype), name.loc);
  parseOptLoc(loc);
  return v;
}

// break := 'break' loc-suffix?      continue := 'continue' loc-suffix?
Stmt IRParser::parseLoopJump() {
  const Token& t = take();
  bool isBreak = t.text == "break";
  SourceLoc loc = t.loc;
  parseOptLoc(loc);
  if (isBreak) return std::make_shared<const BreakStmt>(loc);
  return std::make_shared<const ContinueStmt>(loc);
}

// evaluate := 'evaluate' expr loc-suffix?
Stmt IRParser::parseEvaluate() {
  SourceLoc loc = take().loc;
  Expr v = parseExpr();
  parseOptLoc(loc);
  return std::make_shared<const EvaluateStmt>(v, loc);
}

// copy := ('copy' | 'copy_async') '(' region ',' region (',' 'barrier' '=' barrier-ref)?
//         (',' 'used_when' '=' expr)? ')' loc-suffix?
Stmt IRParser::parseCopy() {
  bool async = cur().text == "copy_async";
  SourceLoc loc = take().loc;
  expectPunct("(");
  Region src = parseRegion();
  expectPunct(",");
  Region dst = parseRegion();
  BarrierRef barrier;
  Expr usedWhen;
  while (acceptPunct(",")) {
    if (!barrier && acceptWord("barrier")) {
      expectPunct("=");
      barrier = parseBarrierRef();
    } else if (!usedWhen && acceptWord("used_when")) {
      expectPunct("=");
      usedWhen = parseExpr();
    } else {
      fail(DiagKind::IrSyntaxError, cur().loc, "expected `barrier=` or `used_when=`, found " + describe(cur()));
    }
  }
  expectPunct(")");
  parseOptLoc(loc);
  return std::make_shared<const CopyStmt>(std::move(src), std::move(dst), loc, async, std::move(barrier),
                                          std::move(usedWhen));
}

bool IRParser::parseBoolValue() {
  Token t = take();
  if (t.kind == TokKind::Ident && (t.text == "true" || t.text == "false")) return t.text == "true";
  fail(DiagKind::IrSyntaxError, t.loc, "expected `true` or `false`, found " + describe(t));
}

// gemm := 'gemm' '(' region ',' region ',' region (',' flag '=' bool)* ')' loc-suffix?
// flag := 'transpose_A' | 'transpose_B' | 'clear_accum'
Stmt IRParser::parseGemm() {
  SourceLoc loc = take().loc;
  expectPunct("(");
  Region a = parseRegion();
  expectPunct(",");
  Region b = parseRegion();
  expectPunct(",");
  Region c = parseRegion();
  bool flags[3] = {false, false, false}, seen[3] = {false, false, false};
  static const char* names[3] = {"transpose_A", "transpose_B", "clear_accum"};
  while (acceptPunct(",")) {
    Token key = take();
    int which = -1;
    for (int i = 0; i < 3; ++i)
      if (key.kind == TokKind::Ident && key.text == names[i]) which = i;
    if (which < 0)
      fail(DiagKind::IrInvalidAttribute, key.loc,
           "unknown gemm flag " + describe(key) + "; expected transpose_A, transpose_B or clear_accum");
    if (seen[which]) fail(DiagKind::IrInvalidAttribute, key.loc, "`" + key.text + "` is given twice");
    seen[which] = true;
    expectPunct("=");
    flags[which] = parseBoolValue();
  }
  expectPunct(")");
  parseOptLoc(loc);
  return std::make_shared<const GemmStmt>(std::move(a), std::move(b), std::move(c), flags[0], flags[1], flags[2], loc);
}

// fill := 'fill' '(' region ',' expr ')' loc-suffix?
Stmt IRParser::parseFill() {
  SourceLoc loc = take().loc;
  expectPunct("(");
  Region dst = parseRegion();
  expectPunct(",");
  Expr v = parseExpr();
  expectPunct(")");
  parseOptLoc(loc);
  return std::make_shared<const FillStmt>(std::move(dst), v, loc);
}

// reduce := ('reduce_sum' | 'reduce_max' | 'reduce_min' | 'reduce_abssum' | 'reduce_absmax')
//           '(' region ',' region ',' 'dim' '=' NUMBER (',' 'clear' '=' bool)? ')' loc-suffix?
Stmt IRParser::parseReduce() {
  Token head = take();
  std::optional<ReduceKind> kind;
  for (ReduceKind k : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::AbsSum, ReduceKind::AbsMax})
    if (head.text == std::string("reduce_") + reduceKindName(k)) kind = k;
  if (!kind) fail(DiagKind::IrSyntaxError, head.loc, "unknown reduction `" + head.text + "`");
  SourceLoc loc = head.loc;
  expectPunct("(");
  Region src = parseRegion();
  expectPunct(",");
  Region dst = parseRegion();
  std::optional<int64_t> dim;
  std::optional<bool> clear;
  while (acceptPunct(",")) {
    Token key = take();
    if (key.kind == TokKind::Ident && key.text == "dim") {
      if (dim) fail(DiagKind::IrInvalidAttribute, key.loc, "`dim` is given twice");
      expectPunct("=");
      dim = parseSmallInt("a dimension");
    } else if (key.kind == TokKind::Ident && key.text == "clear") {
      if (clear) fail(DiagKind::IrInvalidAttribute, key.loc, "`clear` is given twice");
      expectPunct("=");
      clear = parseBoolValue();
    } else {
      fail(DiagKind::IrInvalidAttribute, key.loc, "unknown reduction argument " + describe(key) + "; expected dim or clear");
    }
  }
  SourceLoc close = expectPunct(")").loc;
  if (!dim) fail(DiagKind::IrInvalidAttribute, close, "`" + head.text + "` needs `dim=`");
  if (*dim < std::numeric_limits<int>::min() || *dim > std::numeric_limits<int>::max())
    fail(DiagKind::IrInvalidAttribute, close, "dimension out of range");
  parseOptLoc(loc);
  return std::make_shared<const ReduceStmt>(*kind, std::move(src), std::move(dst), static_cast<int>(*dim),
                                            clear.value_or(true), loc);
}

// atomic := ('atomic_add' | 'atomic_max' | 'atomic_min') '(' IDENT '[' exprs ']' ',' expr ')'
//           ('->' IDENT '[' exprs ']')? loc-suffix?
Stmt IRParser::parseAtomic() {
  Token head = take();
  std::optional<AtomicKind> kind;
  for (AtomicKind k : {AtomicKind::Add, AtomicKind::Max, AtomicKind::Min})
    if (head.text == std::string("atomic_") + atomicKindName(k)) kind = k;
  if (!kind) fail(DiagKind::IrSyntaxError, head.loc, "unknown atomic operation `" + head.text + "`");
  SourceLoc loc = head.loc;
  expectPunct("(");
  Token name = cur();
  Buffer b = lookupBuffer(expectName("a buffer name"));
  std::vector<Expr> idx = parseIndices(b, name.loc);
  expectPunct(",");
  Expr v = parseExpr();
  expectPunct(")");
  Buffer prev;
  std::vector<Expr> prevIdx;
  if (acceptPunct("->")) {
    Token p = cur();
    prev = lookupBuffer(expectName("a buffer name"));
    prevIdx = parseIndices(prev, p.loc);
  }
  parseOptLoc(loc);
  return std::make_shared<const AtomicStmt>(*kind, b, std::move(idx), v, loc, prev, std::move(prevIdx));
}

// annotate := 'annotate_layout' '(' IDENT ',' layout ')' loc-suffix?
// layout   := 'swizzled' | 'row_major' | 'shared_fallback' | 'mma_accumulator'
//           | 'row_groups' '(' NUMBER ',' NUMBER ')'
Stmt IRParser::parseAnnotateLayout() {
  SourceLoc loc = take().loc;
  expectPunct("(");
  Buffer b = lookupBuffer(expectName("a buffer name"));
  expectPunct(",");
  Token kindTok = take();
  std::optional<LayoutKind> kind;
  for (LayoutKind k : {LayoutKind::Swizzled, LayoutKind::RowMajor, LayoutKind::RowGroups, LayoutKind::SharedFallback,
                       LayoutKind::MmaAccumulator})
    if (kindTok.kind == TokKind::Ident && kindTok.text == layoutKindName(k)) kind = k;
  if (!kind)
    fail(DiagKind::IrSyntaxError, kindTok.loc,
         "expected a layout (swizzled, row_major, row_groups(G, V), shared_fallback, mma_accumulator), found " + describe(kindTok));
  LayoutSpec spec{*kind};
  if (*kind == LayoutKind::RowGroups) {
    expectPunct("(");
    spec.threadsPerRow = parseSmallInt("the threads per row");
    expectPunct(",");
    spec.vector = parseSmallInt("the run length");
    expectPunct(")");
  }
  expectPunct(")");
  parseOptLoc(loc);
  return std::make_shared<const AnnotateLayoutStmt>(b, spec, loc);
}

// print      := 'print' '(' (IDENT | expr) (',' print_attr)* ')' loc-suffix?
//                 -- IDENT: a buffer name, printed whole
// print_attr := 'message' '=' STRING | 'at' '=' STRING
//             | 'iteration' '=' '[' STRING ':' expr (',' STRING ':' expr)* ']'
//             | 'element' '=' STRING '[' exprs? ']'
Stmt IRParser::parsePrint() {
  SourceLoc loc = take().loc;
  expectPunct("(");
  Expr value;
  Buffer buffer;
  const Token& first = cur();
  const Symbol* sym = first.kind == TokKind::Ident ? lookup(first.text) : nullptr;
  if (sym && sym->buffer && !(peek().kind == TokKind::Punct && peek().text == "[")) {
    buffer = sym->buffer;
    take();
  } else {
    value = parseExpr();
  }
  auto p = std::make_shared<PrintStmt>(value, buffer, "", "", loc);
  std::set<std::string> seen;
  auto string = [&](const char* what) {
    Token t = take();
    if (t.kind != TokKind::String) fail(DiagKind::IrSyntaxError, t.loc, std::string("expected ") + what + ", found " + describe(t));
    return t.text;
  };
  while (acceptPunct(",")) {
    Token key = take();
    if (key.kind != TokKind::Ident || !(key.text == "message" || key.text == "at" || key.text == "iteration" || key.text == "element"))
      fail(DiagKind::IrInvalidAttribute, key.loc,
           "unknown print argument " + describe(key) + "; expected message, at, iteration or element");
    if (!seen.insert(key.text).second) fail(DiagKind::IrInvalidAttribute, key.loc, "`" + key.text + "` is given twice");
    expectPunct("=");
    if (key.text == "message") {
      p->message = string("the message string");
    } else if (key.text == "at") {
      p->at = string("the location string");
    } else if (key.text == "iteration") {
      expectPunct("[");
      do {
        std::string name = string("an iteration variable's name string");
        expectPunct(":");
        p->iteration.push_back({name, parseExpr()});
      } while (acceptPunct(","));
      expectPunct("]");
    } else {
      p->element = string("the element's buffer name string");
      expectPunct("[");
      if (!atPunct("]")) p->index = parseExprList();
      expectPunct("]");
    }
  }
  expectPunct(")");
  parseOptLoc(loc);
  p->loc = loc;
  return p;
}

// store := IDENT '[' exprs? ']' '=' expr loc-suffix?
Stmt IRParser::parseStore() {
  Token name = take();
  SourceLoc loc = name.loc;
  Buffer b = lookupBuffer(name);
  std::vector<Expr> idx = parseIndices(b, name.loc);
  expectPunct("=");
  Expr v = parseExpr();
  parseOptLoc(loc);
  return std::make_shared<const StoreStmt>(b, std::move(idx), v, loc);
}

Buffer IRParser::lookupBuffer(const Token& name) {
  const Symbol* s = lookup(name.text);
  if (!s) fail(DiagKind::IrUnboundName, name.loc, "`" + name.text + "` is not declared");
  if (!s->buffer) fail(DiagKind::IrSyntaxError, name.loc, "`" + name.text + "` is a scalar variable, not a buffer");
  return s->buffer;
}

// region := IDENT ('[' range (',' range)* ']')?     (no brackets: the whole buffer)
// range  := expr ':' '+' expr                       (min, then extent)
Region IRParser::parseRegion() {
  Token name = cur();
  Buffer b = lookupBuffer(expectName("a buffer name"));
  if (!atPunct("[")) return fullRegion(b, name.loc);
  Region r{b, {}, name.loc};
  take();
  if (!atPunct("]")) {
    do {
      Expr mn = parseExpr();
      expectPunct(":");
      expectPunct("+");
      Expr ext = parseExpr();
      r.ranges.push_back({mn, ext});
    } while (acceptPunct(","));
  }
  expectPunct("]");
  if (r.ranges.size() != b->shape.size())
    fail(DiagKind::IrRankMismatch, name.loc,
         "`" + b->name + "` has " + std::to_string(b->shape.size()) + " dimensions but the region gives " +
             std::to_string(r.ranges.size()) + " ranges");
  return r;
}

}  // namespace parser_detail

std::optional<Module> parseIRModule(SourceManager& sources, DiagnosticEngine& diags, uint32_t file) {
  return parseIRModule(sources, diags, file, IRParseOptions{});
}

std::optional<Module> parseIRModule(SourceManager& sources, DiagnosticEngine& diags, uint32_t file,
                                    const IRParseOptions& options) {
  int errorsBefore = diags.errorCount();
  parser_detail::IRParser parser(sources, diags, file);
  Module m = parser.parseModule();
  if (diags.errorCount() != errorsBefore) return std::nullopt;
  if (options.verify && !verifyModule(m, diags, options.verifyOptions)) return std::nullopt;
  return m;
}

}  // namespace tlc::ir
