// Statements: blocks, assignment (bindings, stores, alloc_var updates),
// augmented assignment, `if`, expression statements and `return`.
//
// `x = expr` binds an immutable name for the rest of its block: constants
// stay compile-time values, anything else becomes a LetStmt. Rebinding a
// name in the same kernel or macro is an error unless it is a `T.alloc_var`
// scalar, whose assignments are stores to its single element.
#include "compiler/ir/limits.h"
#include "compiler/ir/buffer_access.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

std::string Sema::uniqueName(const std::string& base) {
  if (usedNames_.insert(base).second) return base;
  for (int k = 1;; ++k) {
    std::string n = base + "_" + std::to_string(k);
    if (usedNames_.insert(n).second) return n;
  }
}

ir::Var Sema::freshVar(const std::string& base, DType t, SourceLoc loc) { return ir::makeVar(uniqueName(base), t, loc); }

void Sema::bindName(const std::string& name, SourceLoc loc, Value v, bool isMutableVar) {
  scope_->define(name, Symbol{std::move(v), loc, isMutableVar});
}

void Sema::lowerBlockInto(const ast::Block& block) {
  for (const ast::StmtPtr& s : block)
    if (s) lowerStmt(*s);
}

ir::Stmt Sema::lowerScopedBlock(const ast::Block& block, SourceLoc loc) {
  ScopeGuard guard(*this, false);
  StmtBuilder b;
  StmtBuilder* saved = builder_;
  builder_ = &b;
  lowerBlockInto(block);
  builder_ = saved;
  return b.finish(loc);
}

void Sema::lowerStmt(const ast::Stmt& s) {
  switch (s.kind) {
    case ast::StmtKind::Expr: lowerExprStmt(s); return;
    case ast::StmtKind::Assign: lowerAssign(s); return;
    case ast::StmtKind::AugAssign: lowerAugAssign(s); return;
    case ast::StmtKind::For: lowerFor(s); return;
    case ast::StmtKind::While: lowerWhile(s); return;
    case ast::StmtKind::With: lowerWith(s); return;
    case ast::StmtKind::If: lowerIf(s); return;
    case ast::StmtKind::Pass: return;
    case ast::StmtKind::Assert: checkAssert(s); return;
    case ast::StmtKind::Def: return;  // reported where the definitions were classified
    case ast::StmtKind::Break:
    case ast::StmtKind::Continue: lowerLoopJump(s); return;
    case ast::StmtKind::Return:
      if (macroStack_.empty())
        report(DiagKind::BadReturn, s.loc, "`return` is only allowed at the end of a macro; kernels write their results to tensors");
      else
        report(DiagKind::BadReturn, s.loc, "`return` must be the last statement of a macro's body");
      return;
  }
}

void Sema::lowerExprStmt(const ast::Stmt& s) {
  if (!s.value) return;
  const ast::Expr& e = *s.value;
  if (e.kind == ast::ExprKind::Call && !e.operands.empty() && e.operands[0]) {
    Value callee = eval(*e.operands[0]);
    if (callee.kind == ValueKind::Builtin && callee.builtin->category == BuiltinCategory::TileOp) {
      lowerTileOp(*callee.builtin, e);
      return;
    }
    if (callee.kind == ValueKind::Macro && callee.func->isMacro) {
      callMacro(callee, e);  // a macro's result may be ignored
      return;
    }
    Value v = applyCall(callee, e);
    if (v.isExpr() || v.kind == ValueKind::Layout)
      report(DiagKind::UnusedExpression, e.loc, "the result of this call is unused");
    return;
  }
  // A string on its own line is a docstring.
  if (e.kind == ast::ExprKind::String) return;
  Value v = eval(e);
  if (!v.isError()) report(DiagKind::UnusedExpression, e.loc, "this expression has no effect");
}

void Sema::lowerAssign(const ast::Stmt& s) {
  if (!s.target || !s.value) return;
  const ast::Expr& value = *s.value;
  if (value.kind == ast::ExprKind::Call && !value.operands.empty() && value.operands[0] && !isAstypeCall(value)) {
    Value callee = eval(*value.operands[0]);
    if (callee.kind == ValueKind::Builtin && callee.builtin->category == BuiltinCategory::Alloc) {
      if (s.target->kind != ast::ExprKind::Name) {
        report(DiagKind::BadAssignment, s.target->loc,
               "`T." + std::string(callee.builtin->name) + "` must be assigned to a single name");
        return;
      }
      const std::string& name = s.target->name;
      if (const Symbol* old = scope_->lookupInFrame(name)) {
        report(DiagKind::Redefinition, s.target->loc, "`" + name + "` is already defined")
            .note(old->declLoc, "`" + name + "` first defined here");
        return;
      }
      Value buf = lowerAlloc(*callee.builtin, value, name, s.target->loc);
      bindName(name, s.target->loc, buf, callee.builtin->id == BuiltinId::AllocVar && buf.kind == ValueKind::Buffer);
      return;
    }
    if (callee.kind == ValueKind::Builtin && returnsPrevious(callee.builtin->id)) {
      Value prev = lowerAtomicValue(*callee.builtin, value);
      if (!prev.isError()) assignTo(*s.target, prev, &value, s.loc);
      return;
    }
    assignTo(*s.target, applyCall(callee, value), &value, s.loc);
    return;
  }
  assignTo(*s.target, eval(value), &value, s.loc);
}

// Every binding nests the rest of its block in the IR; past the limit the
// kernel is reported once (and lowering goes on without the binding).
void Sema::bindLet(ir::Var var, ir::Expr value, SourceLoc loc) {
  if (++kernelLets_ == ir::kMaxKernelLets + 1)
    report(DiagKind::NestingTooDeep, loc,
           "more than " + std::to_string(ir::kMaxKernelLets) +
               " scalar bindings in one kernel; split the kernel or keep intermediate values in a buffer");
  if (kernelLets_ > ir::kMaxKernelLets) return;
  letValues_[var.get()] = ir::substitute(value, letValues_);
  builder_->let(std::move(var), std::move(value), loc);
}

void Sema::assignTo(const ast::Expr& target, const Value& v, const ast::Expr* valueExpr, SourceLoc loc) {
  switch (target.kind) {
    case ast::ExprKind::Name: {
      const std::string& name = target.name;
      if (const Symbol* sym = scope_->lookupInFrame(name)) {
        if (sym->isMutableVar) {
          ir::Expr x = expectScalar(v, "the value assigned to `" + name + "`");
          if (!x) return;
          const ir::Buffer& b = sym->value.buffer;
          builder_->emit(std::make_shared<const ir::StoreStmt>(
              b, std::vector<ir::Expr>{ir::makeInt(0, DType::Int32, target.loc)}, convert(v, b->dtype, loc), loc));
          return;
        }
        report(DiagKind::Redefinition, target.loc,
               "`" + name + "` is already bound; names bound with `=` cannot be reassigned (use `T.alloc_var` for a "
                            "mutable scalar)")
            .note(sym->declLoc, "`" + name + "` first bound here");
        return;
      }
      // A dynamic dimension (`M = T.dynamic("M")`) keeps its variable, which tensor shapes name.
      auto* dim = v.isExpr() ? ir::as<ir::VarRef>(v.expr) : nullptr;
      // Outside a kernel (a factory's or a prim_func's prelude), a value
      // computed from dynamic dimensions (`half = M // 2`) names that
      // expression, which tensor shapes in the signature may use.
      if (v.isExpr() && !isConstant(v.expr) && !inKernel_ && ir::collectBufferReads(v.expr).empty()) {
        bindName(name, target.loc, v);
        return;
      }
      if (v.isExpr() && !isConstant(v.expr) && !(dim && symbolic_.count(dim->var.get()))) {
        ir::Var var = freshVar(name, v.expr->dtype, target.loc);
        bindLet(var, v.expr, loc);
        bindName(name, target.loc, Value::ofExpr(ir::makeVarRef(var, target.loc), target.loc));
        return;
      }
      if (v.kind == ValueKind::None) {
        report(DiagKind::BadAssignment, valueExpr ? valueExpr->loc : loc, "this has no value to assign to `" + name + "`");
        bindName(name, target.loc, Value::error(target.loc));
        return;
      }
      bindName(name, target.loc, v);
      return;
    }
    case ast::ExprKind::Subscript: {
      if (target.operands.empty() || !target.operands[0]) return;
      Value base = eval(*target.operands[0]);
      if (base.isError()) return;
      if (base.kind != ValueKind::Buffer) {
        report(DiagKind::BadAssignment, target.loc, "cannot assign to an element of " + describeValue(base));
        return;
      }
      auto idx = evalIndices(base.buffer, target);
      ir::Expr x = expectScalar(v, "the value stored into `" + base.buffer->name + "`");
      if (!idx || !x) return;
      if (!requireKernel(target.loc, "writing `" + base.buffer->name + "`")) return;
      if (parallelLoc_.known() && isReducer(base.buffer)) {
        reducerStore(base.buffer, *idx, x, loc);
        return;
      }
      builder_->emit(
          std::make_shared<const ir::StoreStmt>(base.buffer, *idx, convert(v, base.buffer->dtype, loc), loc));
      return;
    }
    case ast::ExprKind::Tuple: {
      if (v.isError()) return;
      if (v.kind != ValueKind::Tuple || v.elems.size() != target.operands.size()) {
        report(DiagKind::BadAssignment, target.loc,
               "cannot unpack " + describeValue(v) +
                   (v.kind == ValueKind::Tuple ? " of " + std::to_string(v.elems.size()) + " elements" : "") +
                   " into " + std::to_string(target.operands.size()) + " targets");
        return;
      }
      for (size_t i = 0; i < v.elems.size(); ++i) assignTo(*target.operands[i], v.elems[i], nullptr, loc);
      return;
    }
    default:
      report(DiagKind::BadAssignment, target.loc, "cannot assign to this expression; assign to a name or `buf[i, ...]`");
  }
}

void Sema::lowerAugAssign(const ast::Stmt& s) {
  if (!s.target || !s.value) return;
  const ast::Expr& target = *s.target;
  std::string op = std::string("`") + ast::binaryOpSpelling(s.augOp) + "=`";
  if (target.kind == ast::ExprKind::Name) {
    const Symbol* sym = scope_->lookup(target.name);
    if (!sym) {
      report(DiagKind::UndefinedName, target.loc, "undefined name `" + target.name + "`");
      return;
    }
    if (sym->value.isError()) return;
    if (!sym->isMutableVar) {
      report(DiagKind::BadAssignment, target.loc,
             op + " needs a mutable target, but `" + target.name +
                 "` is an immutable binding; declare it with `T.alloc_var` or update a buffer element")
          .note(sym->declLoc, "`" + target.name + "` bound here");
      return;
    }
    const ir::Buffer& b = sym->value.buffer;
    std::vector<ir::Expr> idx{ir::makeInt(0, DType::Int32, target.loc)};
    Value cur = Value::ofExpr(ir::makeLoad(b, idx, target.loc), target.loc);
    Value r = binary(s.augOp, cur, eval(*s.value), s.loc);
    if (!r.isExpr()) return;
    builder_->emit(std::make_shared<const ir::StoreStmt>(b, idx, convert(r, b->dtype, s.loc), s.loc));
    return;
  }
  if (target.kind == ast::ExprKind::Subscript && !target.operands.empty() && target.operands[0]) {
    Value base = eval(*target.operands[0]);
    if (base.isError()) return;
    if (base.kind != ValueKind::Buffer) {
      report(DiagKind::BadAssignment, target.loc, "cannot update an element of " + describeValue(base));
      return;
    }
    auto idx = evalIndices(base.buffer, target);
    if (!idx) return;
    if (!requireKernel(target.loc, "writing `" + base.buffer->name + "`")) return;
    Value cur = Value::ofExpr(ir::makeLoad(base.buffer, *idx, target.loc), target.loc);
    Value v = eval(*s.value);
    if (parallelLoc_.known() && isReducer(base.buffer)) {
      if (s.augOp == ast::BinaryOp::Add && reducers_[base.buffer.get()] == ir::ReduceKind::Sum) {
        if (expectScalar(v, "the value added to `" + base.buffer->name + "`"))
          reducerUpdate(base.buffer, *idx, convert(v, base.buffer->dtype, s.loc), s.loc);
        return;
      }
      Value r = binary(s.augOp, cur, v, s.loc);
      if (r.isExpr()) reducerStore(base.buffer, *idx, r.expr, s.loc);  // not an update of its op: reported
      return;
    }
    Value r = binary(s.augOp, cur, v, s.loc);
    if (!r.isExpr()) return;
    builder_->emit(
        std::make_shared<const ir::StoreStmt>(base.buffer, *idx, convert(r, base.buffer->dtype, s.loc), s.loc));
    return;
  }
  report(DiagKind::BadAssignment, target.loc, op + " needs a `T.alloc_var` name or a buffer element as its target");
}

void Sema::lowerIf(const ast::Stmt& s) {
  if (s.value) lowerConditional(*s.value, "`if`", s.body, s.orelse, s.loc);
}

void Sema::lowerConditional(const ast::Expr& condition, const std::string& what, const ast::Block& thenBlock,
                            const ast::Block& elseBlock, SourceLoc loc) {
  ir::Expr cond = expectCondition(eval(condition), "the condition of " + what);
  if (!cond) {
    // Still check both branches.
    lowerScopedBlock(thenBlock, loc);
    lowerScopedBlock(elseBlock, loc);
    return;
  }
  // A compile-time condition selects a branch; the other is not checked, so
  // kernels can specialize on compile-time parameters.
  if (auto c = constIntValue(cond)) {
    builder_->emit(lowerScopedBlock(*c ? thenBlock : elseBlock, loc));
    return;
  }
  // The then-branch sees the loop ranges its condition narrows (`if i < N:`
  // guards `S[i]` against the static bounds check).
  // The else-branch (an `elif` is one) sees the ranges the negated condition narrows.
  ir::Stmt thenBody = underCondition(cond, false, [&] { return lowerScopedBlock(thenBlock, loc); });
  ir::Stmt elseBody =
      elseBlock.empty() ? nullptr : underCondition(cond, true, [&] { return lowerScopedBlock(elseBlock, loc); });
  if (auto* seq = ir::as<ir::SeqStmt>(elseBody); seq && seq->stmts.empty()) elseBody = nullptr;
  builder_->emit(std::make_shared<const ir::IfStmt>(cond, thenBody, elseBody, loc));
}

// Narrows the ranges of loop variables by the conjuncts of `cond` (of `not
// cond` when `negated`) that bound one with a constant (`i < 4`, `i + 1 <= n`
// with n constant, `2 <= i`). A range left empty leaves the bounds check off
// for that variable: the branch never runs with it.
void Sema::narrowLoopRanges(const ir::Expr& cond, bool negated) {
  if (auto* u = ir::as<ir::Unary>(cond); u && u->op == ir::UnaryOp::Not) return narrowLoopRanges(u->a, !negated);
  auto* bin = ir::as<ir::Binary>(cond);
  if (!bin) return;
  // a and b; not (a or b) = not a and not b.
  if (bin->op == (negated ? ir::BinaryOp::Or : ir::BinaryOp::And)) {
    narrowLoopRanges(bin->a, negated);
    narrowLoopRanges(bin->b, negated);
    return;
  }
  if (!ir::isComparison(bin->op) || bin->op == ir::BinaryOp::Eq || bin->op == ir::BinaryOp::Ne) return;
  // var + offset OP c, or c OP var + offset (turned around); `not (x < c)` is `x >= c`.
  ir::Expr lhs = bin->a, rhs = bin->b;
  ir::BinaryOp op = bin->op;
  if (negated)
    op = op == ir::BinaryOp::Lt ? ir::BinaryOp::Ge : op == ir::BinaryOp::Le ? ir::BinaryOp::Gt
       : op == ir::BinaryOp::Gt ? ir::BinaryOp::Le : ir::BinaryOp::Lt;
  if (!constIntValue(rhs)) {
    std::swap(lhs, rhs);
    op = op == ir::BinaryOp::Lt ? ir::BinaryOp::Gt : op == ir::BinaryOp::Le ? ir::BinaryOp::Ge
       : op == ir::BinaryOp::Gt ? ir::BinaryOp::Lt : ir::BinaryOp::Le;
  }
  auto c = constIntValue(rhs);
  if (!c) return;
  int64_t offset = 0;
  const ir::VarRef* ref = ir::as<ir::VarRef>(lhs);
  if (auto* add = ir::as<ir::Binary>(lhs); add && (add->op == ir::BinaryOp::Add || add->op == ir::BinaryOp::Sub)) {
    auto k = constIntValue(add->b);
    ref = k ? ir::as<ir::VarRef>(add->a) : nullptr;
    if (k) offset = add->op == ir::BinaryOp::Add ? *k : -*k;
  }
  auto it = ref ? loopRanges_.find(ref->var.get()) : loopRanges_.end();
  if (it == loopRanges_.end()) return;
  int64_t lo = it->second.min, hi = it->second.min + it->second.extent - 1, bound = *c - offset;
  switch (op) {
    case ir::BinaryOp::Lt: hi = std::min(hi, bound - 1); break;
    case ir::BinaryOp::Le: hi = std::min(hi, bound); break;
    case ir::BinaryOp::Gt: lo = std::max(lo, bound + 1); break;
    default: lo = std::max(lo, bound); break;
  }
  if (hi < lo) {
    loopRanges_.erase(it);
    return;
  }
  it->second.min = lo;
  it->second.extent = hi - lo + 1;
}

}  // namespace tlc::sema
