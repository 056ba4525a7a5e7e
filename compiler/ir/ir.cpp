#include "compiler/ir/ir.h"

#include <limits>

#include "compiler/ir/int_arith.h"
#include "compiler/support/diagnostics.h"

namespace tlc::ir {

const char* exprKindName(ExprKind k) {
  switch (k) {
#define EXPR(Name)      \
  case ExprKind::Name: \
    return #Name;
#include "compiler/ir/node_kinds.def"
  }
  return "?";
}

const char* stmtKindName(StmtKind k) {
  switch (k) {
#define STMT(Name)      \
  case StmtKind::Name: \
    return #Name;
#include "compiler/ir/node_kinds.def"
  }
  return "?";
}

const char* memScopeName(MemScope s) {
  switch (s) {
    case MemScope::Global: return "global";
    case MemScope::Shared: return "shared";
    case MemScope::Fragment: return "fragment";
    case MemScope::Local: return "local";
    case MemScope::Var: return "var";
    case MemScope::Barrier: return "barrier";
  }
  return "?";
}

const char* binaryOpSpelling(BinaryOp op) {
  switch (op) {
#define X(Name, Spelling) \
  case BinaryOp::Name:    \
    return Spelling;
    TLC_BINARY_OPS(X)
#undef X
  }
  return "?";
}

bool isComparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }
bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }

const char* unaryOpSpelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Not: return "not";
    case UnaryOp::BitNot: return "~";
  }
  return "?";
}

const char* forKindName(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Pipelined: return "pipelined";
    case ForKind::Unroll: return "unroll";
    case ForKind::Vectorized: return "vectorized";
  }
  return "?";
}

Expr reduceIdentity(ReduceKind k, DType t, SourceLoc loc) {
  bool lowest = k == ReduceKind::Max;
  if (k != ReduceKind::Max && k != ReduceKind::Min)
    return isFloat(t) ? makeFloat(0.0, t, loc) : makeInt(0, t, loc);
  const double inf = std::numeric_limits<double>::infinity();
  if (isFloat(t)) return makeFloat(lowest ? -inf : inf, t, loc);
  int bits = dtypeBits(t);
  if (!isSigned(t)) return makeInt(lowest ? 0 : wrapToDType(~uint64_t(0), t), t, loc);
  uint64_t high = (uint64_t(1) << (bits - 1)) - 1;
  return makeInt(wrapToDType(lowest ? ~high : high, t), t, loc);
}

const char* reduceKindName(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
    case ReduceKind::AbsSum: return "abssum";
    case ReduceKind::AbsMax: return "absmax";
  }
  return "?";
}

const char* atomicKindName(AtomicKind k) {
  switch (k) {
    case AtomicKind::Add: return "add";
    case AtomicKind::Max: return "max";
    case AtomicKind::Min: return "min";
  }
  return "?";
}

const char* layoutKindName(LayoutKind k) {
  switch (k) {
    case LayoutKind::Swizzled: return "swizzled";
    case LayoutKind::RowMajor: return "row_major";
    case LayoutKind::RowGroups: return "row_groups";
    case LayoutKind::SharedFallback: return "shared_fallback";
    case LayoutKind::MmaAccumulator: return "mma_accumulator";
  }
  return "?";
}

MemScope layoutKindScope(LayoutKind k) {
  return k == LayoutKind::Swizzled || k == LayoutKind::RowMajor ? MemScope::Shared : MemScope::Fragment;
}

std::string layoutSpecText(const LayoutSpec& l) {
  std::string s = layoutKindName(l.kind);
  if (l.kind == LayoutKind::RowGroups)
    s += "(" + std::to_string(l.threadsPerRow) + ", " + std::to_string(l.vector) + ")";
  return s;
}

Var makeVar(std::string name, DType dtype, SourceLoc loc) {
  return std::make_shared<const VarNode>(VarNode{std::move(name), dtype, loc});
}

Buffer makeBuffer(std::string name, DType dtype, std::vector<Expr> shape, MemScope scope, SourceLoc loc) {
  for (const Expr& e : shape) TLC_CHECK(e && isInteger(e->dtype), "buffer shapes are integer expressions");
  return std::make_shared<const BufferNode>(BufferNode{std::move(name), dtype, std::move(shape), scope, loc});
}

Region fullRegion(const Buffer& b, SourceLoc loc) {
  Region r{b, {}, loc};
  for (const Expr& e : b->shape) r.ranges.push_back({makeInt(0, e->dtype), e});
  return r;
}

std::vector<int> nonUnitDims(const Region& r) {
  std::vector<int> dims;
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    int64_t e;
    if (!constInt(r.ranges[d].extent, &e) || e != 1) dims.push_back((int)d);
  }
  return dims;
}

bool isFullRegion(const Region& r) {
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    int64_t mn, ext, shape;
    if (!constInt(r.ranges[d].min, &mn) || mn != 0) return false;
    if (!constInt(r.ranges[d].extent, &ext) || !constInt(r.buffer->shape[d], &shape) || ext != shape) return false;
  }
  return true;
}

Expr makeInt(int64_t v, DType t, SourceLoc loc) {
  TLC_CHECK(isInteger(t) || t == DType::Bool, "integer immediate needs an integer dtype");
  return std::make_shared<const IntImm>(v, t, loc);
}
Expr makeFloat(double v, DType t, SourceLoc loc) {
  TLC_CHECK(isFloat(t), "float immediate needs a float dtype");
  return std::make_shared<const FloatImm>(v, t, loc);
}
Expr makeBool(bool v, SourceLoc loc) { return std::make_shared<const IntImm>(v ? 1 : 0, DType::Bool, loc); }
Expr makeVarRef(const Var& v, SourceLoc loc) {
  TLC_CHECK(v != nullptr, "null variable");
  return std::make_shared<const VarRef>(v, loc.known() ? loc : v->loc);
}

Expr makeBinary(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  TLC_CHECK(a && b, "null operand");
  TLC_CHECK(a->dtype == b->dtype, std::string("operand dtypes differ: ") + std::string(dtypeName(a->dtype)) +
                                      " vs " + std::string(dtypeName(b->dtype)));
  DType t = isComparison(op) || isLogical(op) ? DType::Bool : a->dtype;
  return std::make_shared<const Binary>(op, std::move(a), std::move(b), t, loc);
}
Expr makeUnary(UnaryOp op, Expr a, SourceLoc loc) {
  TLC_CHECK(a != nullptr, "null operand");
  DType t = op == UnaryOp::Not ? DType::Bool : a->dtype;
  return std::make_shared<const Unary>(op, std::move(a), t, loc);
}
Expr makeCast(DType t, Expr v, SourceLoc loc) {
  TLC_CHECK(v != nullptr, "null operand");
  if (v->dtype == t) return v;
  return std::make_shared<const Cast>(t, std::move(v), loc);
}
Expr makeSelect(Expr cond, Expr t, Expr f, SourceLoc loc) {
  TLC_CHECK(cond && t && f, "null operand");
  TLC_CHECK(cond->dtype == DType::Bool, "select condition must be bool");
  TLC_CHECK(t->dtype == f->dtype, "select arms must have one dtype");
  return std::make_shared<const Select>(std::move(cond), std::move(t), std::move(f), loc);
}
Expr makeCall(std::string callee, std::vector<Expr> args, DType t, SourceLoc loc) {
  return std::make_shared<const Call>(std::move(callee), std::move(args), t, loc);
}
Expr makeLoad(Buffer b, std::vector<Expr> indices, SourceLoc loc) {
  TLC_CHECK(b != nullptr, "null buffer");
  TLC_CHECK(indices.size() == b->shape.size(), "load of " + b->name + " needs one index per dimension");
  return std::make_shared<const Load>(std::move(b), std::move(indices), loc);
}

bool constInt(const Expr& e, int64_t* out) {
  if (auto* i = as<IntImm>(e)) {
    if (out) *out = i->value;
    return true;
  }
  return false;
}

static void unify(Expr& a, Expr& b) {
  if (a->dtype == b->dtype) return;
  DType t = promote(a->dtype, b->dtype);
  a = makeCast(t, a);
  b = makeCast(t, b);
}

static int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

static Expr foldOrMake(BinaryOp op, Expr a, Expr b) {
  unify(a, b);
  int64_t x = 0, y = 0;
  bool ca = constInt(a, &x), cb = constInt(b, &y);
  DType t = a->dtype;
  if (ca && cb && isInteger(t)) {
    switch (op) {
      case BinaryOp::Add: return makeInt(x + y, t);
      case BinaryOp::Sub: return makeInt(x - y, t);
      case BinaryOp::Mul: return makeInt(x * y, t);
      case BinaryOp::FloorDiv:
        if (y != 0) return makeInt(floorDivInt(x, y), t);
        break;
      case BinaryOp::FloorMod:
        if (y != 0) return makeInt(x - floorDivInt(x, y) * y, t);
        break;
      case BinaryOp::Min: return makeInt(std::min(x, y), t);
      case BinaryOp::Max: return makeInt(std::max(x, y), t);
      case BinaryOp::Lt: return makeBool(x < y);
      default: break;
    }
  }
  switch (op) {
    case BinaryOp::Add:
      if (ca && x == 0) return b;
      if (cb && y == 0) return a;
      break;
    case BinaryOp::Sub:
      if (cb && y == 0) return a;
      break;
    case BinaryOp::Mul:
      if (ca && x == 1) return b;
      if (cb && y == 1) return a;
      if ((ca && x == 0) || (cb && y == 0)) return makeInt(0, t);
      break;
    case BinaryOp::FloorDiv:
      if (cb && y == 1) return a;
      break;
    default: break;
  }
  return makeBinary(op, std::move(a), std::move(b));
}

Expr add(Expr a, Expr b) { return foldOrMake(BinaryOp::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return foldOrMake(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return foldOrMake(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr floorDiv(Expr a, Expr b) { return foldOrMake(BinaryOp::FloorDiv, std::move(a), std::move(b)); }
Expr floorMod(Expr a, Expr b) { return foldOrMake(BinaryOp::FloorMod, std::move(a), std::move(b)); }
Expr minExpr(Expr a, Expr b) { return foldOrMake(BinaryOp::Min, std::move(a), std::move(b)); }
Expr maxExpr(Expr a, Expr b) { return foldOrMake(BinaryOp::Max, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return foldOrMake(BinaryOp::Lt, std::move(a), std::move(b)); }
Expr logicalAnd(Expr a, Expr b) {
  int64_t x;
  if (constInt(a, &x)) return x ? b : a;
  if (constInt(b, &x)) return x ? a : b;
  return makeBinary(BinaryOp::And, std::move(a), std::move(b));
}

std::vector<Stmt> seqStmts(const Stmt& s) {
  if (auto* seq = as<SeqStmt>(s)) return seq->stmts;
  return {s};
}

Stmt makeSeq(std::vector<Stmt> stmts, SourceLoc loc) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s) continue;
    if (auto* seq = as<SeqStmt>(s)) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<const SeqStmt>(std::move(flat), loc);
}

}  // namespace tlc::ir
