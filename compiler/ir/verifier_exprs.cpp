// The tile-IR verifier's checks of expressions, regions, gemm operands,
// layout annotations and prints (verifier_walk.h).
#include "compiler/ir/intrinsics.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/verifier_walk.h"

#include <algorithm>

namespace tlc::ir {

void Verifier::integer(const Expr& e, const std::string& what) {
  expr(e);
  if (!isInteger(e->dtype)) report(DiagKind::IrOperandType, e->loc, what + " must be an integer, not " + dt(e->dtype));
}

void Verifier::dimension(const Expr& e, const std::string& buffer) {
  TLC_CHECK(e != nullptr, "null dimension of " + buffer);
  integer(e, "a dimension of `" + buffer + "`");
}

void Verifier::indices(const Buffer& b, const std::vector<Expr>& idx, SourceLoc loc) {
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

void Verifier::sameDType(const Expr& value, DType want, SourceLoc loc, const std::string& what) {
  if (value->dtype != want)
    report(DiagKind::IrDTypeMismatch, value->loc.known() ? value->loc : loc,
           what + " has dtype " + dt(value->dtype) + " but " + dt(want) + " is required; insert a cast");
}

void Verifier::tooDeep(SourceLoc loc, const std::string& msg) {
  if (!reportedDeep_) report(DiagKind::IrNestingTooDeep, loc, msg);
  reportedDeep_ = true;
}

void Verifier::expr(const Expr& e) {
  TLC_CHECK(e != nullptr, "null expression");
  if (exprDepth_ >= kMaxExprDepth)
    return tooDeep(e->loc, "an expression is nested deeper than " + std::to_string(kMaxExprDepth) +
                               " levels; bind parts of it to variables");
  ++exprDepth_;
  exprNode(e);
  --exprDepth_;
}

void Verifier::exprNode(const Expr& e) {
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

void Verifier::call(const Call* c) {
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

void Verifier::binary(const Binary* b) {
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

void Verifier::region(const Region& r, const char* role) {
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

std::optional<std::pair<int64_t, int64_t>> Verifier::matrix(const Region& r, const char* role) {
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

void Verifier::gemmDTypes(const GemmStmt* g) {
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

void Verifier::annotation(const AnnotateLayoutStmt* a) {
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

void Verifier::print(const PrintStmt* p) {
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

}  // namespace tlc::ir
