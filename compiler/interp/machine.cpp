#include "compiler/interp/machine.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tlc::interp {

using namespace tlc::ir;

std::string formatIndex(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

int64_t RegionVal::offset(const int64_t* idx) const {
  int64_t off = 0;
  for (size_t d = 0; d < mins.size(); ++d) {
    int64_t x = mins[d] + idx[d];
    if (x < 0 || x >= buf->shape[d]) return -1;
    off += x * buf->strides[d];
  }
  return off;
}

Machine::Machine(const Program& prog, DiagnosticEngine& diags, std::FILE* printTo)
    : prog_(prog), diags_(diags), vars_(prog.vars.size(), intValue(0)), bufs_(prog.buffers.size()), printTo_(printTo) {}

void Machine::bindTensor(int slot, HostTensor* t) {
  BufferState& b = bufs_[slot];
  b.tensor = t;
  b.shape = t->shape;
  b.strides = t->strides();
  b.tracked = false;
  b.live = true;
}

void Machine::addBlockNote(Diagnostic& d) {
  if (!kernel_) return;
  std::string where = "in block (";
  for (size_t i = 0; i < block_.size(); ++i) {
    if (i) where += ", ";
    if (i < kernel_->blockVars.size() && kernel_->blockVars[i]) where += kernel_->blockVars[i]->name + "=";
    where += std::to_string(block_[i]);
  }
  d.note(kernel_->loc, where + ") of this kernel's grid");
}

void Machine::fail(DiagKind kind, SourceLoc loc, std::string message, const BufferNode* declared) {
  Diagnostic& d = diags_.report(kind, loc, std::move(message));
  if (declared && declared->loc.known()) d.note(declared->loc, "`" + declared->name + "` is declared here");
  addBlockNote(d);
  throw Abort{};
}

std::vector<int64_t> BufferState::indexOf(int64_t flat) const {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = 0; d < idx.size(); ++d) idx[d] = strides[d] ? (flat / strides[d]) % (shape[d] ? shape[d] : 1) : 0;
  return idx;
}

void Machine::warnUninitialized(BufferState& b, const BufferNode* node, int64_t flat, SourceLoc loc) {
  b.warned = true;
  std::vector<int64_t> idx = b.indexOf(flat);
  Diagnostic& d = diags_.report(DiagKind::InterpUninitializedRead, loc,
                                "`" + node->name + "` is read at " + formatIndex(idx) +
                                    " before any value was written there; the value is undefined");
  if (node->loc.known()) d.note(node->loc, "`" + node->name + "` is allocated here");
  addBlockNote(d);
}

Value Machine::loadElement(BufferState& b, const BufferNode* node, int64_t flat, SourceLoc loc) {
  if (b.tracked && b.written[static_cast<size_t>(flat)] != kWritten) {
    if (b.written[static_cast<size_t>(flat)] == kPending) failPending(node, b, flat, loc);
    if (!b.warned) warnUninitialized(b, node, flat, loc);
  }
  return readElement(*b.tensor, flat);
}

int64_t Machine::evalInt(const CExpr& e) {
  Value v = eval(e);
  if (isFloat(e.dtype)) return floatToIntDType(v.f, DType::Int64);
  return v.i;
}

int64_t Machine::elementOffset(int slot, const CExpr* const* indices, size_t n, SourceLoc loc) {
  BufferState& b = bufs_[slot];
  const BufferNode* node = prog_.buffers[slot].buffer;
  if (!b.live) fail(DiagKind::InterpInvalidProgram, loc, "buffer `" + node->name + "` is used before it is allocated", node);
  int64_t off = 0;
  for (size_t d = 0; d < n; ++d) {
    int64_t x = evalInt(*indices[d]);
    if (x < 0 || x >= b.shape[d]) {
      fail(DiagKind::InterpOutOfBounds, loc,
           "index " + std::to_string(x) + " is out of bounds for dimension " + std::to_string(d) + " of `" +
               node->name + "` (size " + std::to_string(b.shape[d]) + ")",
           node);
    }
    off += x * b.strides[d];
  }
  return off;
}

Value Machine::eval(const CExpr& e) {
  switch (e.kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm: return e.imm;
    case ExprKind::VarRef: return vars_[e.slot];
    case ExprKind::Binary: return evalBinary(e);
    case ExprKind::Unary: return evalUnary(e);
    case ExprKind::Cast: return castValue(eval(*e.kids[0]), e.kids[0]->dtype, e.dtype);
    case ExprKind::Select: {
      const CExpr& arm = *e.kids[truthy(eval(*e.kids[0]), e.kids[0]->dtype) ? 1 : 2];
      return castValue(eval(arm), arm.dtype, e.dtype);
    }
    case ExprKind::Call: return evalCall(e);
    case ExprKind::Load: {
      int64_t off = elementOffset(e.slot, e.kids.data(), e.kids.size(), e.node->loc);
      return loadElement(bufs_[e.slot], prog_.buffers[e.slot].buffer, off, e.node->loc);
    }
  }
  return intValue(0);
}

namespace {

int64_t floorDivInt(int64_t a, int64_t b) {
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));  // wraps for INT64_MIN
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floorModInt(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double floorModFloat(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

Value Machine::evalBinary(const CExpr& e) {
  auto op = static_cast<BinaryOp>(e.op);
  const CExpr& ea = *e.kids[0];
  const CExpr& eb = *e.kids[1];
  if (op == BinaryOp::And) return intValue(truthy(eval(ea), ea.dtype) && truthy(eval(eb), eb.dtype));
  if (op == BinaryOp::Or) return intValue(truthy(eval(ea), ea.dtype) || truthy(eval(eb), eb.dtype));
  Value a = eval(ea), b = eval(eb);
  DType t = ea.dtype;
  if (isFloat(t)) {
    double x = a.f, y = b.f;
    switch (op) {
      case BinaryOp::Eq: return intValue(x == y);
      case BinaryOp::Ne: return intValue(x != y);
      case BinaryOp::Lt: return intValue(x < y);
      case BinaryOp::Le: return intValue(x <= y);
      case BinaryOp::Gt: return intValue(x > y);
      case BinaryOp::Ge: return intValue(x >= y);
      default: break;
    }
    double r;
    switch (op) {
      case BinaryOp::Add: r = x + y; break;
      case BinaryOp::Sub: r = x - y; break;
      case BinaryOp::Mul: r = x * y; break;
      case BinaryOp::Div: r = x / y; break;
      case BinaryOp::FloorDiv: r = std::floor(x / y); break;
      case BinaryOp::FloorMod: r = floorModFloat(x, y); break;
      case BinaryOp::Min: r = std::isnan(x) || std::isnan(y) ? NAN : (y < x ? y : x); break;
      case BinaryOp::Max: r = std::isnan(x) || std::isnan(y) ? NAN : (x < y ? y : x); break;
      default:
        fail(DiagKind::InterpInvalidProgram, e.node->loc,
             std::string("operator `") + binaryOpSpelling(op) + "` does not apply to " + std::string(dtypeName(t)));
    }
    return floatValue(roundFloat(r, e.dtype));
  }
  const bool u64 = t == DType::UInt64;
  int64_t x = a.i, y = b.i;
  auto less = [&](int64_t p, int64_t q) { return u64 ? static_cast<uint64_t>(p) < static_cast<uint64_t>(q) : p < q; };
  switch (op) {
    case BinaryOp::Eq: return intValue(x == y);
    case BinaryOp::Ne: return intValue(x != y);
    case BinaryOp::Lt: return intValue(less(x, y));
    case BinaryOp::Le: return intValue(!less(y, x));
    case BinaryOp::Gt: return intValue(less(y, x));
    case BinaryOp::Ge: return intValue(!less(x, y));
    default: break;
  }
  const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  int64_t r = 0;
  // int32 and int64 sums, differences and products that leave their type
  // have no defined result on the compiled targets (as in C); the narrower
  // types and the unsigned ones wrap.
  if ((t == DType::Int32 || t == DType::Int64) &&
      (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul)) {
    int64_t exact = 0;
    bool over = op == BinaryOp::Add   ? __builtin_add_overflow(x, y, &exact)
                : op == BinaryOp::Sub ? __builtin_sub_overflow(x, y, &exact)
                                      : __builtin_mul_overflow(x, y, &exact);
    if (over || exact != wrapToIntDType(exact, t))
      fail(DiagKind::InterpUndefinedBehavior, e.node->loc,
           std::string(dtypeName(t)) + " overflow: " + std::to_string(x) + " " + binaryOpSpelling(op) + " " +
               std::to_string(y) + " does not fit " + std::string(dtypeName(t)) +
               "; signed 32- and 64-bit overflow has no defined result on the compiled targets (as in C): compute "
               "in int64, or in an unsigned type, whose arithmetic wraps");
  }
  switch (op) {
    case BinaryOp::Add: r = static_cast<int64_t>(ux + uy); break;
    case BinaryOp::Sub: r = static_cast<int64_t>(ux - uy); break;
    case BinaryOp::Mul: r = static_cast<int64_t>(ux * uy); break;
    case BinaryOp::Div:
    case BinaryOp::FloorDiv:
    case BinaryOp::FloorMod:
      if (y == 0)
        fail(DiagKind::InterpUndefinedBehavior, e.node->loc,
             std::string("integer ") + (op == BinaryOp::FloorMod ? "modulo" : "division") + " by zero");
      if (u64) {
        r = static_cast<int64_t>(op == BinaryOp::FloorMod ? ux % uy : ux / uy);
      } else {
        r = op == BinaryOp::FloorMod ? floorModInt(x, y) : floorDivInt(x, y);
      }
      break;
    case BinaryOp::Min: r = less(y, x) ? y : x; break;
    case BinaryOp::Max: r = less(x, y) ? y : x; break;
    case BinaryOp::BitAnd: r = x & y; break;
    case BinaryOp::BitOr: r = x | y; break;
    case BinaryOp::BitXor: r = x ^ y; break;
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
      int bits = dtypeBits(t);
      if (y < 0 || y >= bits || (u64 && uy >= 64))
        fail(DiagKind::InterpUndefinedBehavior, e.node->loc,
             "shift by " + std::to_string(y) + " is out of range for " + std::string(dtypeName(t)) + " (0 to " +
                 std::to_string(bits - 1) + ")");
      if (op == BinaryOp::Shl) {
        r = static_cast<int64_t>(ux << y);
      } else {
        r = isSigned(t) ? (x >> y) : static_cast<int64_t>(ux >> y);
      }
      break;
    }
    default: break;
  }
  return intValue(wrapToIntDType(r, e.dtype));
}

Value Machine::evalUnary(const CExpr& e) {
  Value a = eval(*e.kids[0]);
  DType t = e.kids[0]->dtype;
  switch (static_cast<UnaryOp>(e.op)) {
    case UnaryOp::Neg:
      if (isFloat(t)) return floatValue(-a.f);
      return intValue(wrapToIntDType(static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)), e.dtype));
    case UnaryOp::Not: return intValue(isFloat(t) ? a.f == 0 : a.i == 0);
    case UnaryOp::BitNot: return intValue(wrapToIntDType(~a.i, e.dtype));
  }
  return a;
}

Value Machine::evalCall(const CExpr& e) {
  auto id = static_cast<Builtin>(e.op);
  if (id == Builtin::IfThenElse) {
    const CExpr& arm = *e.kids[truthy(eval(*e.kids[0]), e.kids[0]->dtype) ? 1 : 2];
    return castValue(eval(arm), arm.dtype, e.dtype);
  }
  Value args[3];
  DType types[3];
  size_t n = e.kids.size();
  for (size_t k = 0; k < n && k < 3; ++k) {
    args[k] = eval(*e.kids[k]);
    types[k] = e.kids[k]->dtype;
  }
  bool divByZero = false;
  Value r = evalBuiltin(id, args, types, static_cast<int>(n), e.dtype, &divByZero);
  if (divByZero) fail(DiagKind::InterpUndefinedBehavior, e.node->loc, "integer division by zero in `ceildiv`");
  return r;
}

void Machine::exec(const CStmt& s) {
  switch (s.kind) {
    case StmtKind::Seq:
      for (const CStmt* c : s.body) {
        exec(*c);
        if (jump_ != Jump::None) return;
      }
      return;
    case StmtKind::Kernel: execKernel(s); return;
    case StmtKind::Alloc: execAlloc(s); return;
    case StmtKind::For: execFor(s); return;
    case StmtKind::If: {
      if (truthy(eval(*s.exprs[0]), s.exprs[0]->dtype)) {
        exec(*s.body[0]);
      } else if (s.body[1]) {
        exec(*s.body[1]);
      }
      return;
    }
    case StmtKind::Store: execStore(s); return;
    case StmtKind::Let:
      vars_[s.vars[0]] = castValue(eval(*s.exprs[0]), s.exprs[0]->dtype, prog_.vars[s.vars[0]].var->dtype);
      exec(*s.body[0]);
      return;
    case StmtKind::Evaluate: eval(*s.exprs[0]); return;
    case StmtKind::Copy: execCopy(s); return;
    case StmtKind::Gemm: execGemm(s); return;
    case StmtKind::Fill: execFill(s); return;
    case StmtKind::Reduce: execReduce(s); return;
    case StmtKind::Atomic: execAtomic(s); return;
    case StmtKind::AnnotateLayout: return;  // a layout changes no value
    case StmtKind::Print: execPrint(s); return;
    // The enclosing statements return up to the loop, which consumes the jump.
    case StmtKind::Break: jump_ = Jump::Break; return;
    case StmtKind::Continue: jump_ = Jump::Continue; return;
    case StmtKind::Version: execVersion(s); return;
    case StmtKind::AsyncCommit:
      groups_.push_back(std::move(openGroup_));
      openGroup_.clear();
      return;
    case StmtKind::AsyncWait: execAsyncWait(s); return;
    case StmtKind::BarrierArrive: execBarrierArrive(s); return;
    case StmtKind::BarrierWait: execBarrierWait(s); return;
    case StmtKind::WarpSpecialize: execWarpSpecialize(s); return;
  }
}

void Machine::execKernel(const CStmt& s) {
  auto* k = static_cast<const KernelStmt*>(s.node);
  std::vector<int64_t> grid;
  for (const CExpr* g : s.exprs) {
    int64_t n = evalInt(*g);
    if (n < 0) fail(DiagKind::InterpUndefinedBehavior, g->node->loc, "grid extent " + std::to_string(n) + " is negative");
    grid.push_back(n);
  }
  int64_t total = 1;
  for (int64_t n : grid)
    if (__builtin_mul_overflow(total, n, &total))
      fail(DiagKind::InterpUnsupported, s.node->loc, "the grid has more blocks than the interpreter can count");
  kernel_ = k;
  block_.assign(grid.size(), 0);
  for (int64_t b = 0; b < total; ++b) {
    int64_t rest = b;
    for (size_t d = 0; d < grid.size(); ++d) {
      block_[d] = rest % grid[d];
      rest /= grid[d];
      vars_[s.vars[d]] = intValue(wrapToIntDType(block_[d], prog_.vars[s.vars[d]].var->dtype));
    }
    exec(*s.body[0]);
    checkNoPendingCopies();
  }
  kernel_ = nullptr;
  block_.clear();
}

void Machine::execAlloc(const CStmt& s) {
  const BufferSlot& slot = prog_.buffers[s.slot];
  std::vector<int64_t> shape;
  for (const CExpr* e : slot.shape) {
    int64_t n = evalInt(*e);
    if (n < 0)
      fail(DiagKind::InterpUndefinedBehavior, s.node->loc,
           "dimension " + std::to_string(shape.size()) + " of `" + slot.buffer->name + "` is negative (" +
               std::to_string(n) + ")",
           slot.buffer);
    shape.push_back(n);
  }
  BufferState& b = bufs_[s.slot];
  if (!b.owned || b.owned->shape != shape) {
    std::string why;
    std::optional<HostTensor> t = HostTensor::tryCreate(slot.buffer->dtype, shape, &why);
    if (!t) fail(DiagKind::InterpUnsupported, s.node->loc, "cannot allocate `" + slot.buffer->name + "`: " + why, slot.buffer);
    b.owned = std::make_unique<HostTensor>(std::move(*t));
  }
  // Poison: NaN for floats, a recognisable pattern for integers.
  HostTensor& t = *b.owned;
  if (t.numel() > 0) {
    if (isFloat(t.dtype)) {
      t.set(0, std::nan(""));
    } else {
      std::memset(t.data(), 0xA5, static_cast<size_t>(t.elementBytes()));
    }
    auto* bytes = static_cast<unsigned char*>(t.data());
    for (int64_t i = 1; i < t.numel(); ++i)
      std::memcpy(bytes + i * t.elementBytes(), bytes, static_cast<size_t>(t.elementBytes()));
  }
  b.tensor = &t;
  b.shape = t.shape;
  b.strides = t.strides();
  b.written.assign(static_cast<size_t>(t.numel()), kUnwritten);
  b.tracked = true;
  b.live = true;
  if (slot.versions > 1) allocVersions(s.slot);
  if (slot.buffer->scope == MemScope::Barrier) b.barriers.assign(static_cast<size_t>(t.numel()), BarrierState{});
}

void Machine::execFor(const CStmt& s) {
  int64_t mn = evalInt(*s.exprs[0]);
  int64_t ext = evalInt(*s.exprs[1]);
  int slot = s.vars[0];
  DType vt = prog_.vars[slot].var->dtype;
  const CStmt& body = *s.body[0];
  for (int64_t i = 0; i < ext; ++i) {
    vars_[slot] = isFloat(vt) ? floatValue(static_cast<double>(mn + i)) : intValue(wrapToIntDType(mn + i, vt));
    exec(body);
    Jump j = jump_;
    jump_ = Jump::None;
    if (j == Jump::Break) break;
  }
}

void Machine::execStore(const CStmt& s) {
  size_t n = s.exprs.size() - 1;
  const CExpr& value = *s.exprs[n];
  int64_t off = elementOffset(s.slot, s.exprs.data(), n, s.node->loc);
  Value v = castValue(eval(value), value.dtype, prog_.buffers[s.slot].buffer->dtype);
  storeElement(bufs_[s.slot], off, v);
}

void Machine::execAtomic(const CStmt& s) {
  auto* a = static_cast<const AtomicStmt*>(s.node);
  size_t n = a->indices.size();
  const CExpr& value = *s.exprs[n];
  int64_t off = elementOffset(s.slot, s.exprs.data(), n, s.node->loc);
  BufferState& b = bufs_[s.slot];
  DType t = prog_.buffers[s.slot].buffer->dtype;
  Value v = castValue(eval(value), value.dtype, t);
  Value old = loadElement(b, prog_.buffers[s.slot].buffer, off, s.node->loc);
  Value r;
  if (isFloat(t)) {
    double x = old.f, y = v.f, z;
    switch (a->atomicKind) {
      case AtomicKind::Add: z = x + y; break;
      case AtomicKind::Max: z = std::isnan(x) || std::isnan(y) ? NAN : (x < y ? y : x); break;
      default: z = std::isnan(x) || std::isnan(y) ? NAN : (y < x ? y : x); break;
    }
    r = floatValue(roundFloat(z, t));
  } else {
    bool u64 = t == DType::UInt64;
    auto less = [&](int64_t p, int64_t q) { return u64 ? static_cast<uint64_t>(p) < static_cast<uint64_t>(q) : p < q; };
    int64_t z;
    switch (a->atomicKind) {
      case AtomicKind::Add: z = static_cast<int64_t>(static_cast<uint64_t>(old.i) + static_cast<uint64_t>(v.i)); break;
      case AtomicKind::Max: z = less(old.i, v.i) ? v.i : old.i; break;
      default: z = less(v.i, old.i) ? v.i : old.i; break;
    }
    r = intValue(wrapToIntDType(z, t));
  }
  storeElement(b, off, r);
  if (!s.vars.empty()) {
    int p = s.vars[0];
    storeElement(bufs_[p], elementOffset(p, s.exprs.data() + n + 1, a->prevIndices.size(), s.node->loc), old);
  }
}

}  // namespace tlc::interp
