#include "compiler/ir/verifier.h"

#include "compiler/ir/int_arith.h"
#include "compiler/ir/intrinsics.h"
#include "compiler/ir/limits.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tlc::ir {

namespace {

std::string dt(DType t) { return std::string(dtypeName(t)); }

bool fitsDType(int64_t v, DType t) {
  if (t == DType::Bool) return v == 0 || v == 1;
  int bits = dtypeBits(t);
  if (bits >= 64) return true;
  if (!isSigned(t)) return v >= 0 && v < (int64_t(1) << bits);
  return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
}

class Verifier {
 public:
  Verifier(DiagnosticEngine& diags, const VerifyOptions& options) : diags_(diags), options_(options) {}

  void func(const PrimFunc& f) {
    frames_.emplace_back();
    for (const Var& v : f.shapeVars) {
      TLC_CHECK(v != nullptr, "null shape variable in " + f.name);
      bindVar(v);
    }
    for (const Param& p : f.params) {
      if (p.buffer) {
        for (const Expr& d : p.buffer->shape) dimension(d, p.buffer->name);
        if (p.buffer->scope != MemScope::Global)
          report(DiagKind::IrInvalidScope, p.loc,
                 "tensor parameter `" + p.buffer->name + "` must be in global memory, not " +
                     memScopeName(p.buffer->scope));
        bindBuffer(p.buffer);
      } else {
        TLC_CHECK(p.scalar != nullptr, "parameter " + p.name + " has neither a buffer nor a scalar");
        bindVar(p.scalar);
      }
    }
    TLC_CHECK(f.body != nullptr, "function " + f.name + " has no body");
    stmt(f.body);
    popFrame();
  }

 private:
  DiagnosticEngine& diags_;
  VerifyOptions options_;
  // Binding counts (a node may be bound again in a nested scope by a pass that copies code).
  std::unordered_map<const VarNode*, int> vars_;
  std::unordered_map<const BufferNode*, int> buffers_;
  // What each open scope bound, to unbind when it closes.
  struct Frame {
    std::vector<const VarNode*> vars;
    std::vector<const BufferNode*> buffers;
  };
  std::vector<Frame> frames_;
  std::unordered_set<const void*> reportedUnbound_;
  int kernelDepth_ = 0;
  int loopDepth_ = 0;
  // The kinds of the loops around the statement, innermost last (a kernel
  // starts a new list: no jump leaves a kernel).
  std::vector<ForKind> loopKinds_;
  // Nesting of the expression and statement being checked (limits.h).
  int exprDepth_ = 0;
  int stmtDepth_ = 0;
  bool reportedDeep_ = false;
  // The layout annotation of each annotated buffer (one per buffer).
  std::unordered_map<const BufferNode*, SourceLoc> annotated_;
  // Buffers allocated with several versions, and how many VersionStmts
  // around the statement name each.
  std::unordered_map<const BufferNode*, int64_t> versions_;
  std::unordered_map<const BufferNode*, int> selected_;

  void report(DiagKind k, SourceLoc loc, const std::string& msg) { diags_.report(k, loc, msg); }

  void bindVar(const Var& v) {
    ++vars_[v.get()];
    frames_.back().vars.push_back(v.get());
  }
  void bindBuffer(const Buffer& b) {
    ++buffers_[b.get()];
    frames_.back().buffers.push_back(b.get());
  }
  void popFrame() {
    for (const VarNode* v : frames_.back().vars) --vars_[v];
    for (const BufferNode* b : frames_.back().buffers) --buffers_[b];
    frames_.pop_back();
  }

  // `access`: the statement reads or writes elements (a layout annotation does not).
  void useBuffer(const Buffer& b, SourceLoc loc, bool access = true) {
    TLC_CHECK(b != nullptr, "null buffer");
    auto it = buffers_.find(b.get());
    if ((it == buffers_.end() || it->second == 0) && reportedUnbound_.insert(b.get()).second)
      report(DiagKind::IrUnboundName, loc.known() ? loc : b->loc,
             "buffer `" + b->name + "` is used where it is not declared (outside its parameter list or allocation scope)");
    auto v = versions_.find(b.get());
    if (access && v != versions_.end() && !selected_[b.get()] && reportedUnbound_.insert(b.get()).second)
      report(DiagKind::IrInvalidAsync, loc.known() ? loc : b->loc,
             "`" + b->name + "` has " + std::to_string(v->second) + " versions; access it inside a `version(" + b->name +
                 ") = ...` block that says which");
  }

  // copy_async, commit_group and wait_group are block-level statements of a kernel.
  void asyncStatement(const Stmt& s, const char* what) {
    if (kernelDepth_ == 0)
      report(DiagKind::IrInvalidAsync, s->loc, std::string(what) + " is outside a kernel");
    for (ForKind k : loopKinds_)
      if (k == ForKind::Parallel || k == ForKind::Vectorized)
        return report(DiagKind::IrInvalidAsync, s->loc,
                      std::string(what) + " is inside a " + forKindName(k) + " loop; it is a statement of the whole block");
  }

  void version(const VersionStmt* v) {
    integer(v->version, "a version");
    for (const Buffer& b : v->buffers) {
      TLC_CHECK(b != nullptr, "null versioned buffer");
      ++selected_[b.get()];
      useBuffer(b, v->loc, false);
      if (!versions_.count(b.get()))
        report(DiagKind::IrInvalidAsync, v->loc,
               "`" + b->name + "` has one version; only buffers allocated with `versions(N)` take a version");
    }
    TLC_CHECK(v->body != nullptr, "version without a body");
    body(v->body);
    for (const Buffer& b : v->buffers) --selected_[b.get()];
  }

  // ------------------------------------------------------------ expressions

  void integer(const Expr& e, const std::string& what) {
    expr(e);
    if (!isInteger(e->dtype)) report(DiagKind::IrOperandType, e->loc, what + " must be an integer, not " + dt(e->dtype));
  }
  void dimension(const Expr& e, const std::string& buffer) {
    TLC_CHECK(e != nullptr, "null dimension of " + buffer);
    integer(e, "a dimension of `" + buffer + "`");
  }

  void indices(const Buffer& b, const std::vector<Expr>& idx, SourceLoc loc) {
    useBuffer(b, loc);
    if (idx.size() != b->shape.size())
      report(DiagKind::IrRankMismatch, loc,
             "`" + b->name + "` has " + std::to_string(b->shape.size()) + " dimensions but " +
                 std::to_string(idx.size()) + " indices are given");
    for (size_t d = 0; d < idx.size(); ++d) {
      const Expr& i = idx[d];
      TLC_CHECK(i != nullptr, "null index of " + b->name);
      integer(i, "an index of `" + b->name + "`");
      if (options_.lowered || d >= b->shape.size()) continue;
      auto at = constValue(i), extent = constValue(b->shape[d]);
      if (at && extent && fitsDType(*at, i->dtype) && (*at < 0 || *at >= *extent))
        report(DiagKind::IrIndexOutOfBounds, i->loc.known() ? i->loc : loc,
               "index " + std::to_string(*at) + " is outside dimension " + std::to_string(d) + " of `" + b->name +
                   "`, which has " + std::to_string(*extent) + " elements");
    }
  }

  void sameDType(const Expr& value, DType want, SourceLoc loc, const std::string& what) {
    if (value->dtype != want)
      report(DiagKind::IrDTypeMismatch, value->loc.known() ? value->loc : loc,
             what + " has dtype " + dt(value->dtype) + " but " + dt(want) + " is required; insert a cast");
  }

  // Reports IR nested past a limit of limits.h, once per function.
  void tooDeep(SourceLoc loc, const std::string& msg) {
    if (!reportedDeep_) report(DiagKind::IrNestingTooDeep, loc, msg);
    reportedDeep_ = true;
  }

  void expr(const Expr& e) {
    TLC_CHECK(e != nullptr, "null expression");
    if (exprDepth_ >= kMaxExprDepth)
      return tooDeep(e->loc, "an expression is nested deeper than " + std::to_string(kMaxExprDepth) +
                                 " levels; bind parts of it to variables");
    ++exprDepth_;
    exprNode(e);
    --exprDepth_;
  }

  void exprNode(const Expr& e) {
    switch (e->kind) {
      case ExprKind::IntImm:
        if (!isInteger(e->dtype) && e->dtype != DType::Bool)
          report(DiagKind::IrOperandType, e->loc, "an integer literal cannot have dtype " + dt(e->dtype));
        else if (!fitsDType(as<IntImm>(e)->value, e->dtype))
          report(DiagKind::IrInvalidLiteral, e->loc,
                 "literal " + std::to_string(as<IntImm>(e)->value) + " does not fit in " + dt(e->dtype));
        return;
      case ExprKind::FloatImm:
        if (!isFloat(e->dtype)) report(DiagKind::IrOperandType, e->loc, "a float literal cannot have dtype " + dt(e->dtype));
        return;
      case ExprKind::VarRef: {
        const Var& v = as<VarRef>(e)->var;
        TLC_CHECK(v != nullptr, "null variable");
        auto it = vars_.find(v.get());
        if ((it == vars_.end() || it->second == 0) && reportedUnbound_.insert(v.get()).second)
          report(DiagKind::IrUnboundName, e->loc, "variable `" + v->name + "` is used outside the scope that binds it");
        if (e->dtype != v->dtype)
          report(DiagKind::IrDTypeMismatch, e->loc,
                 "a use of `" + v->name + "` has dtype " + dt(e->dtype) + " but the variable is " + dt(v->dtype));
        return;
      }
      case ExprKind::Binary: binary(as<Binary>(e)); return;
      case ExprKind::Unary: {
        auto* u = as<Unary>(e);
        expr(u->a);
        DType t = u->a->dtype;
        if (u->op == UnaryOp::Not && t != DType::Bool)
          report(DiagKind::IrOperandType, e->loc, "`not` needs a bool operand, not " + dt(t));
        if (u->op == UnaryOp::Neg && t == DType::Bool)
          report(DiagKind::IrOperandType, e->loc, "`-` needs a numeric operand, not bool");
        if (u->op == UnaryOp::BitNot && !isInteger(t))
          report(DiagKind::IrOperandType, e->loc, "`~` needs an integer operand, not " + dt(t));
        DType want = u->op == UnaryOp::Not ? DType::Bool : t;
        if (e->dtype != want)
          report(DiagKind::IrDTypeMismatch, e->loc,
                 std::string("`") + unaryOpSpelling(u->op) + "` yields " + dt(want) + " but the node says " + dt(e->dtype));
        return;
      }
      case ExprKind::Cast: expr(as<Cast>(e)->value); return;
      case ExprKind::Select: {
        auto* s = as<Select>(e);
        expr(s->cond);
        expr(s->t);
        expr(s->f);
        if (s->cond->dtype != DType::Bool)
          report(DiagKind::IrOperandType, s->cond->loc, "the condition of `select` must be bool, not " + dt(s->cond->dtype));
        if (s->t->dtype != s->f->dtype || e->dtype != s->t->dtype)
          report(DiagKind::IrDTypeMismatch, e->loc,
                 "the arms of `select` have dtypes " + dt(s->t->dtype) + " and " + dt(s->f->dtype) + " (result " +
                     dt(e->dtype) + ")");
        return;
      }
      case ExprKind::Call: call(as<Call>(e)); return;
      case ExprKind::Load: {
        auto* l = as<Load>(e);
        indices(l->buffer, l->indices, e->loc);
        if (e->dtype != l->buffer->dtype)
          report(DiagKind::IrDTypeMismatch, e->loc,
                 "a load of `" + l->buffer->name + "` has dtype " + dt(e->dtype) + " but the buffer holds " +
                     dt(l->buffer->dtype));
        return;
      }
    }
  }

  // A call names an intrinsic of the table (intrinsics.h) and fits its rule.
  void call(const Call* c) {
    for (const Expr& a : c->args) expr(a);
    std::string name = "`@" + c->callee + "`";
    const IntrinsicInfo* info = findIntrinsic(c->callee);
    if (!info) {
      report(DiagKind::IrUnknownCallee, c->loc,
             name + " is not an intrinsic of the IR (docs/tile-ir.md lists them: " + portableIntrinsicNames() + ")");
      return;
    }
    if (info->target && !options_.lowered) {
      report(DiagKind::IrTargetIntrinsic, c->loc,
             name + " is introduced by the " + info->target +
                 " target's lowering and cannot appear in its input; use the tile operation it implements");
      return;
    }
    if (static_cast<int>(c->args.size()) != info->arity) {
      report(DiagKind::IrArgumentCount, c->loc,
             name + " takes " + std::to_string(info->arity) + " argument" + (info->arity == 1 ? "" : "s") + ", not " +
                 std::to_string(c->args.size()));
      return;
    }
    auto operands = [&](bool (*ok)(DType), const char* what, size_t from) {
      for (size_t i = from; i < c->args.size(); ++i) {
        const Expr& a = c->args[i];
        if (!ok(a->dtype)) {
          report(DiagKind::IrOperandType, a->loc.known() ? a->loc : c->loc,
                 name + " needs " + what + " operands, not " + dt(a->dtype));
          return false;
        }
        if (a->dtype != c->dtype) {
          report(DiagKind::IrDTypeMismatch, a->loc.known() ? a->loc : c->loc,
                 "an operand of " + name + " has dtype " + dt(a->dtype) + " but the call yields " + dt(c->dtype) +
                     "; insert a cast");
          return false;
        }
      }
      return true;
    };
    auto resultIs = [&](bool ok, const char* what) {
      if (!ok) report(DiagKind::IrOperandType, c->loc, name + " yields " + what + ", not " + dt(c->dtype));
    };
    switch (info->rule) {
      case IntrinsicRule::FloatMath: operands(isFloat, "float", 0); return;
      case IntrinsicRule::Numeric: operands([](DType t) { return t != DType::Bool; }, "numeric", 0); return;
      case IntrinsicRule::Integer: operands(isInteger, "integer", 0); return;
      case IntrinsicRule::Predicate:
        if (!isFloat(c->args[0]->dtype))
          report(DiagKind::IrOperandType, c->loc, name + " needs a float operand, not " + dt(c->args[0]->dtype));
        resultIs(c->dtype == DType::Bool, "bool");
        return;
      case IntrinsicRule::Choice:
        if (c->args[0]->dtype != DType::Bool)
          report(DiagKind::IrOperandType, c->loc, "the condition of " + name + " must be bool, not " + dt(c->args[0]->dtype));
        operands([](DType) { return true; }, "scalar", 1);
        return;
      case IntrinsicRule::FloatConst: resultIs(isFloat(c->dtype), "a float"); return;
      case IntrinsicRule::Reinterpret: {
        DType from = c->args[0]->dtype;
        if (from == DType::Bool || c->dtype == DType::Bool || dtypeBits(from) != dtypeBits(c->dtype))
          report(DiagKind::IrOperandType, c->loc,
                 name + " needs a non-bool operand and result of the same width, not " + dt(from) + " to " +
                     dt(c->dtype));
        return;
      }
      case IntrinsicRule::Unpack4:
        for (const Expr& a : c->args)
          if (!isInteger(a->dtype)) {
            report(DiagKind::IrOperandType, a->loc.known() ? a->loc : c->loc,
                   name + " needs integer operands, not " + dt(a->dtype));
            return;
          }
        resultIs(c->callee == "unpack_fp4" ? isFloat(c->dtype) : c->dtype != DType::Bool,
                 c->callee == "unpack_fp4" ? "a float" : "a number");
        return;
      case IntrinsicRule::Cast:
      case IntrinsicRule::Target: return;
    }
  }

  void binary(const Binary* b) {
    expr(b->a);
    expr(b->b);
    std::string op = std::string("`") + binaryOpSpelling(b->op) + "`";
    DType t = b->a->dtype;
    if (b->a->dtype != b->b->dtype) {
      report(DiagKind::IrDTypeMismatch, b->loc,
             "operands of " + op + " have different dtypes (" + dt(b->a->dtype) + " and " + dt(b->b->dtype) + ")");
      return;
    }
    DType want = isComparison(b->op) || isLogical(b->op) ? DType::Bool : t;
    if (b->dtype != want)
      report(DiagKind::IrDTypeMismatch, b->loc, op + " yields " + dt(want) + " but the node says " + dt(b->dtype));
    auto need = [&](bool ok, const char* what) {
      if (!ok) report(DiagKind::IrOperandType, b->loc, op + " needs " + what + " operands, not " + dt(t));
    };
    switch (b->op) {
      case BinaryOp::And:
      case BinaryOp::Or: need(t == DType::Bool, "bool"); break;
      case BinaryOp::Div: need(isFloat(t), "float (integer division is `floordiv`)"); break;
      case BinaryOp::Add:
      case BinaryOp::Sub:
      case BinaryOp::Mul:
      case BinaryOp::FloorDiv:
      case BinaryOp::FloorMod:
      case BinaryOp::Min:
      case BinaryOp::Max: need(t != DType::Bool, "numeric"); break;
      case BinaryOp::BitAnd:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor: need(isInteger(t) || t == DType::Bool, "integer or bool"); break;
      case BinaryOp::Shl:
      case BinaryOp::Shr: need(isInteger(t), "integer"); break;
      default: break;
    }
  }

  // ------------------------------------------------------------ regions

  // Extents made of constants only (`16 + 16`) are checked like literals.
  static std::optional<int64_t> constValue(const Expr& e) {
    if (e && e->dtype == DType::Bool) return std::nullopt;
    return evalConstInt(e);
  }

  // The constant extents of a region, if all are constant.
  static std::optional<std::vector<int64_t>> constExtents(const Region& r) {
    std::vector<int64_t> out;
    for (const Range& rg : r.ranges) {
      auto v = constValue(rg.extent);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  static std::string shapeText(const std::vector<int64_t>& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
    return out.empty() ? "a scalar" : out;
  }

  void region(const Region& r, const char* role) {
    useBuffer(r.buffer, r.loc);
    std::string name = "`" + r.buffer->name + "`";
    if (r.ranges.size() != r.buffer->shape.size())
      report(DiagKind::IrRankMismatch, r.loc,
             std::string("the ") + role + " region of " + name + " has " + std::to_string(r.ranges.size()) +
                 " ranges but the buffer has " + std::to_string(r.buffer->shape.size()) + " dimensions");
    for (const Range& rg : r.ranges) {
      TLC_CHECK(rg.min && rg.extent, "null range in a region of " + r.buffer->name);
      integer(rg.min, "a region start of " + name);
      integer(rg.extent, "a region extent of " + name);
    }
  }

  // A gemm operand as a matrix: its last two extents (other dimensions must be 1).
  std::optional<std::pair<int64_t, int64_t>> matrix(const Region& r, const char* role) {
    if (r.ranges.size() < 2) {
      report(DiagKind::IrRankMismatch, r.loc,
             std::string("gemm operand ") + role + " (`" + r.buffer->name + "`) must be a matrix region, not rank " +
                 std::to_string(r.ranges.size()));
      return std::nullopt;
    }
    for (size_t i = 0; i + 2 < r.ranges.size(); ++i) {
      auto v = constValue(r.ranges[i].extent);
      if (v && *v != 1) {
        report(DiagKind::IrRankMismatch, r.loc,
               std::string("gemm operand ") + role + " (`" + r.buffer->name +
                   "`) must be a matrix: its leading region extents must be 1");
        return std::nullopt;
      }
    }
    size_t n = r.ranges.size();
    auto rows = constValue(r.ranges[n - 2].extent), cols = constValue(r.ranges[n - 1].extent);
    if (!rows || !cols) return std::nullopt;
    return std::make_pair(*rows, *cols);
  }

  static std::vector<int64_t> dropUnit(const std::vector<int64_t>& s) {
    std::vector<int64_t> out;
    for (int64_t v : s)
      if (v != 1) out.push_back(v);
    return out;
  }

  // A and B share one dtype; C accumulates in the same family (float for
  // float operands, integer for integer ones).
  void gemmDTypes(const GemmStmt* g) {
    DType a = g->a.buffer->dtype, b = g->b.buffer->dtype, c = g->c.buffer->dtype;
    if (a != b) {
      report(DiagKind::IrDTypeMismatch, g->loc,
             "gemm operands A (`" + g->a.buffer->name + "`, " + dt(a) + ") and B (`" + g->b.buffer->name + "`, " +
                 dt(b) + ") must have one dtype");
      return;
    }
    if (a == DType::Bool || c == DType::Bool || isFloat(a) != isFloat(c) || (isFloat(c) && dtypeBits(c) < 16))
      report(DiagKind::IrOperandType, g->loc,
             "gemm of " + dt(a) + " operands cannot accumulate into " + dt(c) + " (`" + g->c.buffer->name + "`); use " +
                 (isFloat(a) ? "a float16, bfloat16, float32 or float64" : "an integer") + " accumulator");
  }

  // ------------------------------------------------------------ layout annotations

  static bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

  // A kernel-level declaration about a shared or fragment buffer in scope:
  // the layout kind fits the buffer's scope and shape, once per buffer.
  void annotation(const AnnotateLayoutStmt* a) {
    TLC_CHECK(a->buffer != nullptr, "null annotated buffer");
    const BufferNode& b = *a->buffer;
    const LayoutSpec& l = a->layout;
    std::string what = "`annotate_layout(" + b.name + ", " + layoutSpecText(l) + ")`";
    useBuffer(a->buffer, a->loc, false);
    if (kernelDepth_ == 0 || loopDepth_ > 0) {
      report(DiagKind::IrInvalidLayout, a->loc, what + " must be in a kernel body, outside every loop");
      return;
    }
    MemScope want = layoutKindScope(l.kind);
    if (b.scope != want) {
      report(DiagKind::IrInvalidLayout, a->loc,
             what + " applies to " + memScopeName(want) + " buffers, but `" + b.name + "` is " + memScopeName(b.scope));
      return;
    }
    if (l.kind == LayoutKind::RowGroups) {
      if (!powerOfTwo(l.threadsPerRow) || !powerOfTwo(l.vector))
        report(DiagKind::IrInvalidLayout, a->loc, what + ": threads per row and run length must be positive powers of two");
      if (b.shape.size() != 1 && b.shape.size() != 2)
        report(DiagKind::IrInvalidLayout, a->loc,
               what + ": a row-group layout holds tiles and vectors (1 or 2 dimensions), not " +
                   std::to_string(b.shape.size()) + " dimensions");
    }
    if (l.kind == LayoutKind::MmaAccumulator && b.shape.size() != 2)
      report(DiagKind::IrInvalidLayout, a->loc, what + ": an mma accumulator is a two-dimensional tile");
    if (l.kind == LayoutKind::Swizzled) {
      std::optional<int64_t> cols = b.shape.size() == 2 ? constValue(b.shape[1]) : std::nullopt;
      std::optional<int64_t> rows = b.shape.size() == 2 ? constValue(b.shape[0]) : std::nullopt;
      if (!rows || !cols || *cols * dtypeBytes(b.dtype) % 16 != 0)
        report(DiagKind::IrInvalidLayout, a->loc,
               what + " needs a two-dimensional buffer of constant shape whose rows are whole 16-byte chunks");
    }
    auto [it, fresh] = annotated_.emplace(a->buffer.get(), a->loc);
    if (!fresh)
      diags_.report(DiagKind::IrInvalidLayout, a->loc, "`" + b.name + "` already has a layout annotation")
          .note(it->second, "the first annotation is here");
  }

  void print(const PrintStmt* p) {
    if (kernelDepth_ == 0) report(DiagKind::IrInvalidAttribute, p->loc, "`print` is only allowed inside a kernel");
    if (!p->value == !p->buffer) {
      report(DiagKind::IrInvalidAttribute, p->loc, "a print has either a value or a whole buffer");
      return;
    }
    for (const PrintTag& t : p->iteration) {
      TLC_CHECK(t.value != nullptr, "null print iteration value");
      integer(t.value, "the iteration value `" + t.name + "` of a print");
    }
    for (const Expr& i : p->index) {
      TLC_CHECK(i != nullptr, "null print element index");
      integer(i, "an element index of a print");
    }
    if (p->element.empty() && !p->index.empty())
      report(DiagKind::IrInvalidAttribute, p->loc, "a print with element indices names its element's buffer");
    if (p->value) {
      expr(p->value);
      return;
    }
    useBuffer(p->buffer, p->loc);
    if (!p->iteration.empty() || !p->element.empty())
      report(DiagKind::IrInvalidAttribute, p->loc, "a print of a whole buffer has no iteration or element");
    if (std::find(loopKinds_.begin(), loopKinds_.end(), ForKind::Parallel) != loopKinds_.end())
      report(DiagKind::IrInvalidAttribute, p->loc,
             "a print of the whole buffer `" + p->buffer->name + "` runs once per block, not inside a parallel loop");
  }

  // ------------------------------------------------------------ statements

  void body(const Stmt& s) {
    frames_.emplace_back();
    stmt(s);
    popFrame();
  }

  void stmt(const Stmt& s) {
    TLC_CHECK(s != nullptr, "null statement");
    if (stmtDepth_ >= kMaxStmtDepth)
      return tooDeep(s->loc, "statements are nested deeper than " + std::to_string(kMaxStmtDepth) +
                                 " levels (each scalar binding holds the rest of its block)");
    ++stmtDepth_;
    stmtNode(s);
    --stmtDepth_;
  }

  void stmtNode(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Seq: {
        frames_.emplace_back();
        for (const Stmt& c : as<SeqStmt>(s)->stmts) stmt(c);
        popFrame();
        return;
      }
      case StmtKind::Kernel: {
        auto* k = as<KernelStmt>(s);
        if (kernelDepth_ > 0) report(DiagKind::IrInvalidKernel, s->loc, "a kernel cannot be launched inside another kernel");
        if (k->grid.empty() || k->grid.size() > 3)
          report(DiagKind::IrInvalidKernel, s->loc,
                 "a kernel grid has 1 to 3 extents, not " + std::to_string(k->grid.size()));
        if (k->blockVars.size() != k->grid.size())
          report(DiagKind::IrInvalidKernel, s->loc,
                 "a kernel needs one block variable per grid extent (" + std::to_string(k->grid.size()) + "), not " +
                     std::to_string(k->blockVars.size()));
        if (k->threads <= 0)
          report(DiagKind::IrInvalidKernel, s->loc, "a kernel needs a positive thread count, not " + std::to_string(k->threads));
        if (k->swizzle < 0 || (k->swizzle > 0 && k->grid.size() < 2))
          report(DiagKind::IrInvalidKernel, s->loc,
                 "swizzle(" + std::to_string(k->swizzle) + ") needs a positive panel size and a 2-D or 3-D grid");
        for (size_t i = 0; i < k->grid.size(); ++i) {
          integer(k->grid[i], "a grid extent");
          if (i < k->blockVars.size() && k->blockVars[i] && k->grid[i]->dtype != k->blockVars[i]->dtype)
            sameDType(k->grid[i], k->blockVars[i]->dtype, s->loc, "grid extent " + std::to_string(i));
        }
        frames_.emplace_back();
        for (const Var& v : k->blockVars) {
          TLC_CHECK(v != nullptr, "null block variable");
          bindVar(v);
        }
        ++kernelDepth_;
        std::vector<ForKind> outerLoops = std::move(loopKinds_);
        loopKinds_.clear();
        body(k->body);
        loopKinds_ = std::move(outerLoops);
        --kernelDepth_;
        popFrame();
        return;
      }
      case StmtKind::Alloc: {
        const Buffer& b = as<AllocStmt>(s)->buffer;
        TLC_CHECK(b != nullptr, "null allocated buffer");
        if (kernelDepth_ == 0)
          report(DiagKind::IrAllocOutsideKernel, s->loc,
                 "buffer `" + b->name + "` is allocated outside a kernel; move the allocation into the kernel body");
        if (b->scope == MemScope::Global)
          report(DiagKind::IrInvalidScope, s->loc,
                 "buffer `" + b->name + "` cannot be allocated in global memory; global tensors are parameters");
        for (const Expr& d : b->shape) dimension(d, b->name);
        bindBuffer(b);
        if (int64_t n = as<AllocStmt>(s)->versions; n != 1) {
          if (n < 1 || b->scope != MemScope::Shared)
            report(DiagKind::IrInvalidAsync, s->loc,
                   "`" + b->name + "` cannot have " + std::to_string(n) +
                       " versions; shared buffers may have several (a positive number)");
          else
            versions_[b.get()] = n;
        }
        return;
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        TLC_CHECK(f->var != nullptr, "null loop variable");
        if (!isInteger(f->var->dtype))
          report(DiagKind::IrOperandType, s->loc,
                 "loop variable `" + f->var->name + "` must be an integer, not " + dt(f->var->dtype));
        expr(f->min);
        expr(f->extent);
        sameDType(f->min, f->var->dtype, s->loc, "the start of the loop over `" + f->var->name + "`");
        sameDType(f->extent, f->var->dtype, s->loc, "the extent of the loop over `" + f->var->name + "`");
        if (f->numStages < 0)
          report(DiagKind::IrInvalidAttribute, s->loc, "num_stages must not be negative");
        if (!f->warpSpecialize && f->forKind != ForKind::Pipelined)
          report(DiagKind::IrInvalidAttribute, s->loc, "warp_specialize is an attribute of pipelined loops");
        if (!f->order.empty() && !f->stage.empty() && f->order.size() != f->stage.size())
          report(DiagKind::IrInvalidAttribute, s->loc,
                 "pipeline `order` and `stage` must list the same statements (" + std::to_string(f->order.size()) +
                     " vs " + std::to_string(f->stage.size()) + " entries)");
        // -1: TileLang's mark of a producer statement, until pipeline-planning maps the plan.
        for (int64_t st : f->stage)
          if (st < -1 || (f->numStages > 0 && st >= f->numStages))
            report(DiagKind::IrInvalidAttribute, s->loc,
                   "pipeline stage " + std::to_string(st) + " is outside [0, num_stages) (or -1)");
        if (!f->group.empty() && (f->order.size() != f->group.size() || f->stage.size() != f->group.size()))
          report(DiagKind::IrInvalidAttribute, s->loc,
                 "a pipeline `group` list needs `order` and `stage` with one entry per group (" +
                     std::to_string(f->group.size()) + ")");
        frames_.emplace_back();
        bindVar(f->var);
        ++loopDepth_;
        loopKinds_.push_back(f->forKind);
        body(f->body);
        loopKinds_.pop_back();
        --loopDepth_;
        popFrame();
        return;
      }
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        expr(i->cond);
        if (i->cond->dtype != DType::Bool)
          report(DiagKind::IrOperandType, i->cond->loc, "an `if` condition must be bool, not " + dt(i->cond->dtype));
        TLC_CHECK(i->thenBody != nullptr, "if without a then branch");
        body(i->thenBody);
        if (i->elseBody) body(i->elseBody);
        return;
      }
      case StmtKind::Store: {
        auto* st = as<StoreStmt>(s);
        indices(st->buffer, st->indices, s->loc);
        expr(st->value);
        sameDType(st->value, st->buffer->dtype, s->loc, "the value stored into `" + st->buffer->name + "`");
        return;
      }
      case StmtKind::Let: {
        auto* l = as<LetStmt>(s);
        TLC_CHECK(l->var != nullptr, "null let variable");
        expr(l->value);
        if (l->value->dtype != l->var->dtype)
          report(DiagKind::IrDTypeMismatch, s->loc,
                 "`" + l->var->name + "` is declared " + dt(l->var->dtype) + " but bound to a " + dt(l->value->dtype) +
                     " value");
        frames_.emplace_back();
        bindVar(l->var);
        TLC_CHECK(l->body != nullptr, "let without a body");
        body(l->body);
        popFrame();
        return;
      }
      case StmtKind::Evaluate: expr(as<EvaluateStmt>(s)->value); return;
      case StmtKind::Copy: {
        auto* c = as<CopyStmt>(s);
        region(c->src, "source");
        region(c->dst, "destination");
        if (c->async) {
          asyncStatement(s, "copy_async");
          if (c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared)
            report(DiagKind::IrInvalidAsync, s->loc,
                   std::string("copy_async copies global memory into shared memory, not ") +
                       memScopeName(c->src.buffer->scope) + " into " + memScopeName(c->dst.buffer->scope));
        }
        auto a = constExtents(c->src), b = constExtents(c->dst);
        if (a && b) {
          int64_t na = 1, nb = 1;
          bool overflow = false;
          for (int64_t v : *a) overflow |= __builtin_mul_overflow(na, v, &na);
          for (int64_t v : *b) overflow |= __builtin_mul_overflow(nb, v, &nb);
          if (!overflow && na != nb)
            report(DiagKind::IrShapeMismatch, s->loc,
                   "copy from a " + shapeText(*a) + " region into a " + shapeText(*b) +
                       " region: the element counts differ");
        }
        return;
      }
      case StmtKind::Gemm: {
        auto* g = as<GemmStmt>(s);
        region(g->a, "A");
        region(g->b, "B");
        region(g->c, "C");
        gemmDTypes(g);
        auto a = matrix(g->a, "A"), b = matrix(g->b, "B"), c = matrix(g->c, "C");
        if (a && b && c) {
          int64_t m = g->transA ? a->second : a->first, k = g->transA ? a->first : a->second;
          int64_t kb = g->transB ? b->second : b->first, n = g->transB ? b->first : b->second;
          if (k != kb || c->first != m || c->second != n)
            report(DiagKind::IrShapeMismatch, s->loc,
                   "gemm shapes do not agree: op(A) is " + std::to_string(m) + "x" + std::to_string(k) +
                       ", op(B) is " + std::to_string(kb) + "x" + std::to_string(n) + ", C is " +
                       std::to_string(c->first) + "x" + std::to_string(c->second));
        }
        return;
      }
      case StmtKind::Fill: {
        auto* f = as<FillStmt>(s);
        region(f->dst, "destination");
        expr(f->value);
        sameDType(f->value, f->dst.buffer->dtype, s->loc, "the fill value for `" + f->dst.buffer->name + "`");
        return;
      }
      case StmtKind::Reduce: {
        auto* r = as<ReduceStmt>(s);
        region(r->src, "source");
        region(r->dst, "destination");
        if (r->dim < 0 || static_cast<size_t>(r->dim) >= r->src.ranges.size()) {
          report(DiagKind::IrInvalidAttribute, s->loc,
                 "reduce dim " + std::to_string(r->dim) + " is outside the source's " +
                     std::to_string(r->src.ranges.size()) + " dimensions");
          return;
        }
        auto a = constExtents(r->src), b = constExtents(r->dst);
        if (a && b) {
          std::vector<int64_t> kept = *a;
          kept.erase(kept.begin() + r->dim);
          if (dropUnit(kept) != dropUnit(*b))
            report(DiagKind::IrShapeMismatch, s->loc,
                   "reducing a " + shapeText(*a) + " region over dim " + std::to_string(r->dim) + " gives " +
                       shapeText(kept) + ", but the destination is " + shapeText(*b));
        }
        return;
      }
      case StmtKind::Atomic: {
        auto* a = as<AtomicStmt>(s);
        indices(a->buffer, a->indices, s->loc);
        DType t = a->buffer->dtype;
        bool supported = (isInteger(t) && dtypeBits(t) >= 32) || (isFloat(t) && dtypeBits(t) >= 16);
        if (!supported)
          report(DiagKind::IrOperandType, s->loc,
                 std::string("atomic_") + atomicKindName(a->atomicKind) + " works on 32- and 64-bit integers and on float16, "
                 "bfloat16, float32 and float64, not on " + dt(t) + " (`" + a->buffer->name + "`)");
        expr(a->value);
        sameDType(a->value, a->buffer->dtype, s->loc, "the atomic operand for `" + a->buffer->name + "`");
        if (a->prev) {
          indices(a->prev, a->prevIndices, s->loc);
          if (a->prev->scope != MemScope::Local && a->prev->scope != MemScope::Var)
            report(DiagKind::IrOperandType, s->loc,
                   "the previous value of an atomic goes to a thread's own buffer (local or var), not to " +
                       std::string(memScopeName(a->prev->scope)) + " `" + a->prev->name + "`");
          if (a->prev->dtype != t)
            report(DiagKind::IrOperandType, s->loc,
                   "the previous value of `" + a->buffer->name + "` is " + dt(t) + ", but `" + a->prev->name +
                       "` holds " + dt(a->prev->dtype));
        }
        return;
      }
      case StmtKind::AnnotateLayout: annotation(as<AnnotateLayoutStmt>(s)); return;
      case StmtKind::Print: print(as<PrintStmt>(s)); return;
      case StmtKind::Version: version(as<VersionStmt>(s)); return;
      case StmtKind::AsyncCommit: asyncStatement(s, "commit_group"); return;
      case StmtKind::AsyncWait:
        asyncStatement(s, "wait_group");
        if (as<AsyncWaitStmt>(s)->pending < 0)
          report(DiagKind::IrInvalidAsync, s->loc, "wait_group leaves a number of groups pending, not a negative one");
        return;
      case StmtKind::Break:
      case StmtKind::Continue: {
        const char* what = s->kind == StmtKind::Break ? "`break`" : "`continue`";
        if (loopKinds_.empty())
          report(DiagKind::IrMisplacedJump, s->loc, std::string(what) + " is outside every loop of its kernel");
        else if (loopKinds_.back() != ForKind::Serial)
          report(DiagKind::IrMisplacedJump, s->loc,
                 std::string(what) + " is in a " + forKindName(loopKinds_.back()) +
                     " loop; only serial loops can be left or continued early");
        return;
      }
    }
  }
};

}  // namespace

bool verifyFunc(const PrimFunc& f, DiagnosticEngine& diags, const VerifyOptions& options) {
  int before = diags.errorCount();
  Verifier v(diags, options);
  v.func(f);
  return diags.errorCount() == before;
}

bool verifyModule(const Module& m, DiagnosticEngine& diags, const VerifyOptions& options) {
  bool ok = true;
  std::unordered_map<std::string, SourceLoc> names;
  for (const Func& f : m.funcs) {
    TLC_CHECK(f != nullptr, "null function in module");
    auto [it, fresh] = names.emplace(f->name, f->loc);
    if (!fresh) {
      diags.report(DiagKind::IrRedefinition, f->loc, "function `@" + f->name + "` is defined twice; rename one of them")
          .note(it->second, "the first definition is here");
      ok = false;
    }
    ok &= verifyFunc(*f, diags, options);
  }
  return ok;
}

}  // namespace tlc::ir
