// Expressions: literals, names, attributes, subscripts, calls and tuples.
// Operators are in type_rules.cpp, scalar builtins in scalar_builtins.cpp.
#include <algorithm>
#include <cctype>

#include "compiler/ir/limits.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/int_arith.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"
#include "compiler/support/suggest.h"

namespace tlc::sema {

// The value of a name at a use: constants and variables get the use's location.
static Value relocate(Value v, SourceLoc loc) {
  v.loc = loc;
  if (v.kind != ValueKind::Expr) return v;
  if (auto* i = ir::as<ir::IntImm>(v.expr))
    v.expr = v.expr->dtype == DType::Bool ? ir::makeBool(i->value != 0, loc) : ir::makeInt(i->value, v.expr->dtype, loc);
  else if (auto* f = ir::as<ir::FloatImm>(v.expr))
    v.expr = ir::makeFloat(f->value, v.expr->dtype, loc);
  else if (auto* r = ir::as<ir::VarRef>(v.expr))
    v.expr = ir::makeVarRef(r->var, loc);
  return v;
}

static Value builtinValue(const BuiltinInfo* b, SourceLoc loc) {
  Value v;
  v.kind = ValueKind::Builtin;
  v.builtin = b;
  v.loc = loc;
  return v;
}

// Each level of a source expression lowers to about one level of IR, so an
// expression nested deeper than the IR admits (compiler/ir/limits.h) is
// reported where it crosses the bound, and evaluation stops there.
Value Sema::eval(const ast::Expr& e) {
  if (evalDepth_ >= ir::kMaxSourceExprDepth) {
    report(DiagKind::NestingTooDeep, e.loc,
           "expression nested deeper than " + std::to_string(ir::kMaxSourceExprDepth) +
               " levels; bind parts of it to names");
    return Value::error(e.loc);
  }
  ++evalDepth_;
  Value v = evalNode(e);
  --evalDepth_;
  return v;
}

Value Sema::evalNode(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::Name: return evalName(e);
    case ast::ExprKind::Int: {
      DType t = e.intValue == static_cast<int32_t>(e.intValue) ? DType::Int32 : DType::Int64;
      return Value::ofExpr(ir::makeInt(e.intValue, t, e.loc), e.loc, true);
    }
    case ast::ExprKind::Float: return Value::ofExpr(ir::makeFloat(e.floatValue, DType::Float32, e.loc), e.loc, true);
    case ast::ExprKind::Bool: return Value::ofExpr(ir::makeBool(e.boolValue, e.loc), e.loc);
    case ast::ExprKind::String: {
      Value v;
      v.kind = ValueKind::String;
      v.str = e.name;
      v.loc = e.loc;
      return v;
    }
    case ast::ExprKind::None: {
      Value v;
      v.kind = ValueKind::None;
      v.loc = e.loc;
      return v;
    }
    case ast::ExprKind::Attribute: return evalAttribute(e);
    case ast::ExprKind::Call: return evalCall(e);
    case ast::ExprKind::Subscript: return evalSubscript(e);
    case ast::ExprKind::Slice:
      report(DiagKind::TypeMismatch, e.loc, "a slice `a:b` is only allowed inside a subscript such as `A[0:32, k]`");
      return Value::error(e.loc);
    case ast::ExprKind::Tuple: return evalTuple(e);
    case ast::ExprKind::Dict:
      report(DiagKind::TypeMismatch, e.loc,
             "a dict `{...}` is only allowed as the argument of `T.annotate_layout({buffer: layout, ...})`");
      return Value::error(e.loc);
    case ast::ExprKind::Lambda:
      report(DiagKind::UnsupportedSyntax, e.loc,
             "`lambda` is only accepted as the index map of a `T.Fragment(...)` or `T.Layout(...)` layout in "
             "`T.annotate_layout`, which tlc ignores (it infers layouts itself); elsewhere write the function out "
             "with `def` or `@T.macro`");
      return Value::error(e.loc);
    case ast::ExprKind::Binary: {
      if (e.operands.size() != 2 || !e.operands[0] || !e.operands[1]) return Value::error(e.loc);
      Value a = eval(*e.operands[0]);
      Value b = eval(*e.operands[1]);
      return binary(e.binaryOp, a, b, e.loc);
    }
    case ast::ExprKind::Unary: {
      if (e.operands.empty() || !e.operands[0]) return Value::error(e.loc);
      return unary(e.unaryOp, eval(*e.operands[0]), e.loc);
    }
    case ast::ExprKind::IfElse: {
      if (e.operands.size() != 3) return Value::error(e.loc);
      Value c = eval(*e.operands[1]);
      ir::Expr cond = expectCondition(c, "the condition of `... if ... else ...`");
      if (!cond) return Value::error(e.loc);
      // A compile-time condition evaluates its arm alone; otherwise each arm
      // sees the loop ranges its side of the condition narrows.
      if (auto k = constIntValue(cond)) return eval(*e.operands[*k ? 0 : 2]);
      Value t = underCondition(cond, false, [&] { return eval(*e.operands[0]); });
      Value f = underCondition(cond, true, [&] { return eval(*e.operands[2]); });
      if (t.isError() || f.isError()) return Value::error(e.loc);
      if (!t.isExpr() || !f.isExpr()) {
        report(DiagKind::TypeMismatch, e.loc,
               "`... if ... else ...` with a runtime condition needs scalar arms, got " + describeValue(t) + " and " +
                   describeValue(f));
        return Value::error(e.loc);
      }
      ir::Expr x, y;
      DType dt;
      bool weak;
      if (!unify(t, f, x, y, dt, weak, e.loc)) return Value::error(e.loc);
      return Value::ofExpr(foldSelect(cond, x, y, e.loc), e.loc);
    }
  }
  return Value::error(e.loc);
}

Value Sema::evalName(const ast::Expr& e) {
  if (scope_) {
    if (const Symbol* sym = scope_->lookup(e.name)) {
      if (sym->isMutableVar) {
        if (!requireKernel(e.loc, "reading `" + e.name + "`")) return Value::error(e.loc);
        return Value::ofExpr(ir::makeLoad(sym->value.buffer, {ir::makeInt(0, DType::Int32, e.loc)}, e.loc), e.loc);
      }
      return relocate(sym->value, e.loc);
    }
  }
  // `tl`: the name TileLang code gives `tilelang` (`import tilelang as tl`).
  if (e.name == "T" || e.name == "tilelang" || e.name == "tl") {
    Value v;
    v.kind = ValueKind::Module;
    v.loc = e.loc;
    return v;
  }
  if (auto t = parseDTypeSpelling(e.name)) return Value::ofDType(*t, e.loc);
  if (const BuiltinInfo* b = findBuiltin(e.name)) return builtinValue(b, e.loc);
  if (primFuncFreeNames_) return bindFreeName(e);
  report(DiagKind::UndefinedName, e.loc, "undefined name `" + e.name + "`" + suggestName(e.name));
  return Value::error(e.loc);
}

std::string Sema::sourceText(SourceLoc loc, const std::string& fallback) const {
  if (!loc.known() || loc.len == 0) return fallback;
  std::string_view line = sources_.lineText(loc.file, loc.line);
  if (loc.col - 1 + loc.len > line.size()) return fallback;
  return std::string(line.substr(loc.col - 1, loc.len));
}

std::string Sema::suggestName(const std::string& name) const {
  std::vector<std::string> candidates;
  for (const Scope* s = scope_; s; s = s->parent()) s->names(candidates);
  for (const BuiltinInfo& b : allBuiltins()) candidates.push_back(b.name);
  return didYouMean(name, candidates);
}

// "; did you mean `T.copy`?" for a misspelled `T.<name>`, or "".
static std::string suggestBuiltin(const std::string& name) {
  std::vector<std::string> candidates;
  for (const BuiltinInfo& b : allBuiltins()) candidates.push_back(b.name);
  std::string best = closestMatch(name, candidates);
  return best.empty() ? "" : "; did you mean `T." + best + "`?";
}

Value Sema::evalAttribute(const ast::Expr& e) {
  if (e.operands.empty() || !e.operands[0]) return Value::error(e.loc);
  Value obj = eval(*e.operands[0]);
  const std::string& attr = e.name;
  switch (obj.kind) {
    case ValueKind::Error: return obj;
    case ValueKind::Module: {
      if (!obj.module) {
        // `tilelang.language.copy`, `tilelang.layout.make_swizzled_layout`: one namespace.
        if (attr == "language" || attr == "layout") return obj;
        if (auto t = parseDTypeSpelling(attr)) return Value::ofDType(*t, e.loc);
        if (const BuiltinInfo* b = findBuiltin(attr)) return builtinValue(b, e.loc);
        report(DiagKind::UndefinedName, e.loc,
               "`T." + attr + "` is not a builtin (see docs/builtins.md)" + suggestBuiltin(attr));
        return Value::error(e.loc);
      }
      const Symbol* sym = obj.module->scope->lookupLocal(attr);
      if (!sym || sym->value.kind == ValueKind::Buffer || sym->value.kind == ValueKind::Error) {
        report(DiagKind::UndefinedName, e.loc, "module `" + obj.module->name + "` has no macro or constant `" + attr + "`");
        return Value::error(e.loc);
      }
      return relocate(sym->value, e.loc);
    }
    case ValueKind::Buffer: {
      if (attr == "shape") {
        Value t;
        t.kind = ValueKind::Tuple;
        t.loc = e.loc;
        for (const ir::Expr& d : obj.buffer->shape) t.elems.push_back(Value::ofExpr(d, e.loc, isConstant(d)));
        return t;
      }
      if (attr == "dtype") return Value::ofDType(obj.buffer->dtype, e.loc);
      report(DiagKind::UndefinedName, e.loc, "a buffer has no attribute `" + attr + "` (it has `shape` and `dtype`)");
      return Value::error(e.loc);
    }
    case ValueKind::DType:
      // TVM's DataType fields: a scalar dtype of `bits` bits (bool: 1), one lane.
      if (attr == "bits" || attr == "lanes") {
        int64_t n = attr == "lanes" ? 1 : obj.dtype == DType::Bool ? 1 : dtypeBits(obj.dtype);
        return Value::ofExpr(ir::makeInt(n, DType::Int32, e.loc), e.loc, true);
      }
      report(DiagKind::UndefinedName, e.loc,
             "a dtype has no attribute `" + attr + "` (it has `bits` and `lanes`, as TVM's `DataType` does)");
      return Value::error(e.loc);
    case ValueKind::Builtin:
      if (obj.builtin->id == BuiltinId::GemmWarpPolicy) {
        if (attr != "Square" && attr != "FullRow" && attr != "FullCol") {
          report(DiagKind::UndefinedName, e.loc,
                 "`T.GemmWarpPolicy` has `Square`, `FullRow` and `FullCol`, not `" + attr + "`");
          return Value::error(e.loc);
        }
        Value v;
        v.kind = ValueKind::String;
        v.str = "GemmWarpPolicy." + attr;
        v.loc = e.loc;
        return v;
      }
      [[fallthrough]];
    default:
      report(DiagKind::UndefinedName, e.loc, describeValue(obj) + " has no attribute `" + attr + "`");
      return Value::error(e.loc);
  }
}

std::optional<std::vector<ir::Expr>> Sema::evalIndices(const ir::Buffer& b, const ast::Expr& sub) {
  std::vector<const ast::Expr*> idx;
  for (size_t i = 1; i < sub.operands.size(); ++i) idx.push_back(sub.operands[i].get());
  if (idx.size() == 1 && idx[0]->kind == ast::ExprKind::Tuple) {
    std::vector<const ast::Expr*> flat;
    for (const auto& x : idx[0]->operands) flat.push_back(x.get());
    idx = flat;
  }
  if (idx.size() != b->shape.size()) {
    report(DiagKind::WrongIndexCount, sub.loc,
           "`" + b->name + "` has " + std::to_string(b->shape.size()) + " dimension" +
               (b->shape.size() == 1 ? "" : "s") + " but is indexed with " + std::to_string(idx.size()))
        .note(b->loc, "`" + b->name + "` declared here with shape " + formatShape(b->shape));
    return std::nullopt;
  }
  std::vector<ir::Expr> out;
  bool ok = true;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (idx[d]->kind == ast::ExprKind::Slice) {
      report(DiagKind::TypeMismatch, idx[d]->loc,
             "a slice selects a region; regions are only allowed as tile-operation arguments (`T.copy`, `T.fill`, "
             "...), index single elements here");
      ok = false;
      continue;
    }
    ir::Expr x = expectInt(eval(*idx[d]), "an index");
    if (!x) {
      ok = false;
      continue;
    }
    auto c = constIntValue(x);
    auto ext = constIntValue(b->shape[d]);
    if (!c && ext) {
      // `F[i + 1]` with `i` a loop variable of constant range: check its whole range.
      const ir::VarRef* ref = ir::as<ir::VarRef>(x);
      int64_t offset = 0;
      if (auto* bin = ir::as<ir::Binary>(x); bin && (bin->op == ir::BinaryOp::Add || bin->op == ir::BinaryOp::Sub)) {
        ref = ir::as<ir::VarRef>(bin->a);
        auto k = constIntValue(bin->b);
        if (!k) ref = nullptr;
        else offset = bin->op == ir::BinaryOp::Add ? *k : -*k;
      }
      auto it = ref ? loopRanges_.find(ref->var.get()) : loopRanges_.end();
      if (it != loopRanges_.end()) {
        int64_t lo = it->second.min + offset, hi = it->second.min + it->second.extent - 1 + offset;
        if (lo < 0 || hi >= *ext) {
          report(DiagKind::IndexOutOfBounds, idx[d]->loc,
                 "this index ranges over " + std::to_string(lo) + ".." + std::to_string(hi) +
                     ", outside dimension " + std::to_string(d) + " of `" + b->name + "` (extent " +
                     std::to_string(*ext) + ")")
              .note(it->second.loopLoc, "`" + sourceText(ref->var->loc, ref->var->name) + "` ranges over " + std::to_string(it->second.min) +
                                            ".." + std::to_string(it->second.min + it->second.extent - 1) + " here")
              .note(b->loc, "`" + b->name + "` declared here with shape " + formatShape(b->shape));
          ok = false;
          continue;
        }
      }
    }
    if (c && (*c < 0 || (ext && *c >= *ext))) {
      report(DiagKind::IndexOutOfBounds, idx[d]->loc,
             "index " + std::to_string(*c) + " is out of bounds for dimension " + std::to_string(d) + " of `" +
                 b->name + "`" + (ext ? " (extent " + std::to_string(*ext) + ")" : ""))
          .note(b->loc, "`" + b->name + "` declared here with shape " + formatShape(b->shape));
      ok = false;
      continue;
    }
    out.push_back(x);
  }
  if (!ok) return std::nullopt;
  return out;
}

Value Sema::evalSubscript(const ast::Expr& e) {
  if (e.operands.empty() || !e.operands[0]) return Value::error(e.loc);
  Value base = eval(*e.operands[0]);
  switch (base.kind) {
    case ValueKind::Error: return base;
    case ValueKind::Tuple: {
      if (e.operands.size() != 2) {
        report(DiagKind::WrongIndexCount, e.loc, "a tuple takes one index");
        return Value::error(e.loc);
      }
      int64_t n = static_cast<int64_t>(base.elems.size());
      // `shape[:-1]`, `shape[1:]`: a compile-time slice of the tuple, as Python's.
      if (const ast::Expr& s = *e.operands[1]; s.kind == ast::ExprKind::Slice) {
        int64_t bound[2] = {0, n};
        for (int b = 0; b < 2; ++b) {
          if (s.operands.size() <= size_t(b) || !s.operands[b]) continue;
          auto v = constInt(*s.operands[b], "a tuple slice bound");
          if (!v) return Value::error(e.loc);
          bound[b] = std::clamp<int64_t>(*v < 0 ? *v + n : *v, 0, n);
        }
        Value t;
        t.kind = ValueKind::Tuple;
        t.loc = e.loc;
        for (int64_t k = bound[0]; k < bound[1]; ++k) t.elems.push_back(relocate(base.elems[k], e.loc));
        return t;
      }
      auto i = constInt(*e.operands[1], "a tuple index");
      if (!i) return Value::error(e.loc);
      int64_t k = *i < 0 ? *i + n : *i;
      if (k < 0 || k >= n) {
        report(DiagKind::IndexOutOfBounds, e.operands[1]->loc,
               "index " + std::to_string(*i) + " is out of range for a tuple of " + std::to_string(n));
        return Value::error(e.loc);
      }
      return relocate(base.elems[k], e.loc);
    }
    case ValueKind::Buffer: {
      auto idx = evalIndices(base.buffer, e);
      if (!idx) return Value::error(e.loc);
      if (!requireKernel(e.loc, "reading `" + base.buffer->name + "`")) return Value::error(e.loc);
      return Value::ofExpr(ir::makeLoad(base.buffer, *idx, e.loc), e.loc);
    }
    case ValueKind::Builtin:
      if (base.builtin->id == BuiltinId::Tensor) {
        report(DiagKind::MisusedBuiltin, e.loc, "`Tensor[...]` is only allowed as a parameter's type");
        return Value::error(e.loc);
      }
      [[fallthrough]];
    default:
      report(DiagKind::TypeMismatch, e.loc, "cannot index " + describeValue(base));
      return Value::error(e.loc);
  }
}

Value Sema::evalTileArg(const ast::Expr& e, const char* op) {
  if (e.kind == ast::ExprKind::Subscript && !e.operands.empty() && e.operands[0]) {
    Value base = eval(*e.operands[0]);
    if (base.isError()) return base;
    if (base.kind == ValueKind::Buffer) {
      const ir::Buffer& b = base.buffer;
      std::vector<const ast::Expr*> idx;
      for (size_t i = 1; i < e.operands.size(); ++i) idx.push_back(e.operands[i].get());
      if (idx.size() == 1 && idx[0]->kind == ast::ExprKind::Tuple) {
        std::vector<const ast::Expr*> flat;
        for (const auto& x : idx[0]->operands) flat.push_back(x.get());
        idx = flat;
      }
      if (idx.size() != b->shape.size()) {
        report(DiagKind::WrongIndexCount, e.loc,
               "`" + b->name + "` has " + std::to_string(b->shape.size()) + " dimension" +
                   (b->shape.size() == 1 ? "" : "s") + " but is indexed with " + std::to_string(idx.size()))
            .note(b->loc, "`" + b->name + "` declared here with shape " + formatShape(b->shape));
        return Value::error(e.loc);
      }
      Value v;
      v.kind = ValueKind::Region;
      v.loc = e.loc;
      v.region.buffer = b;
      v.region.isPoint = true;
      bool ok = true;
      for (size_t d = 0; d < idx.size(); ++d) {
        const ast::Expr& x = *idx[d];
        if (x.kind == ast::ExprKind::Slice) {
          v.region.isPoint = false;
          ir::Expr lo = x.operands.size() > 0 && x.operands[0] ? expectInt(eval(*x.operands[0]), "a slice bound")
                                                                : ir::makeInt(0, DType::Int32, x.loc);
          ir::Expr hi = x.operands.size() > 1 && x.operands[1] ? expectInt(eval(*x.operands[1]), "a slice bound")
                                                                : b->shape[d];
          if (!lo || !hi) {
            ok = false;
            continue;
          }
          DType t = promote(lo->dtype, hi->dtype);
          lo = foldCast(t, lo, x.loc);
          hi = foldCast(t, hi, x.loc);
          ir::Expr ext = foldBinary(ir::BinaryOp::Sub, hi, lo, x.loc);
          // `k * 64:(k + 1) * 64` has the constant extent 64, and so has `start:end` with names bound
          // to those bounds.
          auto c = ir::constantDifference(hi, lo);
          if (!c) c = ir::constantDifference(ir::substitute(hi, letValues_), ir::substitute(lo, letValues_));
          if (c && ir::fitsDType(*c, t)) ext = ir::makeInt(*c, t, x.loc);
          if (auto c = constIntValue(ext); c && *c <= 0) {
            report(DiagKind::ShapeMismatch, x.loc, "the slice `" + formatExpr(lo) + ":" + formatExpr(hi) +
                                                       "` is empty; a region needs at least one element per dimension");
            ok = false;
            continue;
          }
          v.region.mins.push_back(lo);
          v.region.extents.push_back(ext);
        } else {
          ir::Expr i = expectInt(eval(x), "an index");
          if (!i) {
            ok = false;
            continue;
          }
          v.region.mins.push_back(i);
          v.region.extents.push_back(nullptr);
        }
      }
      if (!ok) return Value::error(e.loc);
      if (!v.region.isPoint)
        for (ir::Expr& x : v.region.extents)
          if (!x) x = ir::makeInt(1, DType::Int32, e.loc);
      return v;
    }
    report(DiagKind::TypeMismatch, e.loc,
           std::string("`T.") + op + "` expects a buffer or a buffer region, got an element of " + describeValue(base));
    return Value::error(e.loc);
  }
  Value v = eval(e);
  if (v.isError() || v.kind == ValueKind::Buffer || v.kind == ValueKind::Region) return v;
  report(DiagKind::TypeMismatch, e.loc,
         std::string("`T.") + op + "` expects a buffer or a region such as `A[by * 64, 0:32]`, got " + describeValue(v));
  return Value::error(e.loc);
}

Value Sema::evalTuple(const ast::Expr& e) {
  Value t;
  t.kind = ValueKind::Tuple;
  t.loc = e.loc;
  for (const auto& x : e.operands) {
    bool star = x->kind == ast::ExprKind::Unary && x->unaryOp == ast::UnaryOp::Star && !x->operands.empty();
    Value v = eval(star ? *x->operands[0] : *x);
    if (v.isError()) return v;
    if (!star) {
      t.elems.push_back(v);
      continue;
    }
    if (v.kind != ValueKind::Tuple) {
      report(DiagKind::TypeMismatch, x->loc, "`*` unpacks a tuple or list, but this is " + describeValue(v));
      return Value::error(e.loc);
    }
    t.elems.insert(t.elems.end(), v.elems.begin(), v.elems.end());
  }
  return t;
}

bool Sema::matchArgs(const ast::Expr& call, const std::string& callee, const std::vector<const char*>& params,
                     int required, bool variadic, CallArgs& out) {
  out.slots.assign(params.size(), nullptr);
  out.extra.clear();
  bool ok = true;
  size_t positional = call.operands.size() - 1;
  for (size_t i = 0; i < positional; ++i) {
    const ast::Expr* arg = call.operands[i + 1].get();
    if (variadic) {
      out.extra.push_back(arg);
    } else if (i < params.size()) {
      out.slots[i] = arg;
    } else {
      report(DiagKind::WrongArgumentCount, arg->loc,
             "`" + callee + "` takes at most " + std::to_string(params.size()) + " argument" +
                 (params.size() == 1 ? "" : "s") + ", got " + std::to_string(positional));
      return false;
    }
  }
  for (const ast::Keyword& kw : call.keywords) {
    size_t k = 0;
    while (k < params.size() && kw.name != params[k]) ++k;
    if (k == params.size()) {
      std::string msg = "`" + callee + "` has no parameter `" + kw.name + "`" +
                        didYouMean(kw.name, std::vector<std::string>(params.begin(), params.end()));
      if (params.empty()) msg += "; it takes no keyword arguments";
      report(DiagKind::UnknownKeyword, kw.loc, msg);
      ok = false;
      continue;
    }
    if (out.slots[k]) {
      report(DiagKind::WrongArgumentCount, kw.loc, "argument `" + kw.name + "` of `" + callee + "` is given twice");
      ok = false;
      continue;
    }
    out.slots[k] = kw.value.get();
  }
  for (int k = 0; k < required && k < static_cast<int>(params.size()); ++k) {
    if (!out.slots[k]) {
      report(DiagKind::WrongArgumentCount, call.loc, "`" + callee + "` is missing its argument `" + params[k] + "`");
      ok = false;
    }
  }
  return ok;
}

bool isAstypeCall(const ast::Expr& e) {
  if (e.kind != ast::ExprKind::Call || e.operands.empty() || !e.operands[0]) return false;
  const ast::Expr& callee = *e.operands[0];
  return callee.kind == ast::ExprKind::Attribute && callee.name == "astype" && !callee.operands.empty() &&
         callee.operands[0];
}

Value Sema::evalCall(const ast::Expr& e) {
  if (e.operands.empty() || !e.operands[0]) return Value::error(e.loc);
  const ast::Expr& callee = *e.operands[0];
  // TileLang's `x.astype(dtype)` on a scalar converts like `T.cast(x, dtype)`.
  if (isAstypeCall(e)) {
    Value obj = eval(*callee.operands[0]);
    if (obj.isError()) return obj;
    if (!obj.isExpr()) {
      report(DiagKind::UndefinedName, callee.loc,
             describeValue(obj) + " has no attribute `astype`: it converts a scalar (`x.astype(\"float32\")`); "
                                  "a tile converts element by element in a `T.Parallel` loop, or by `T.copy`");
      return Value::error(e.loc);
    }
    if (e.operands.size() != 2 || !e.keywords.empty()) {
      report(DiagKind::WrongArgumentCount, e.loc, "`astype` takes one argument, the dtype: `x.astype(\"float32\")`");
      return Value::error(e.loc);
    }
    auto t = evalDType(*e.operands[1], "the dtype of `astype`");
    if (!t) return Value::error(e.loc);
    return Value::ofExpr(foldCast(*t, obj.expr, e.loc), e.loc);
  }
  return applyCall(eval(callee), e);
}

Value Sema::applyCall(const Value& callee, const ast::Expr& e) {
  switch (callee.kind) {
    case ValueKind::Error: return callee;
    case ValueKind::Builtin: {
      const BuiltinInfo& b = *callee.builtin;
      std::string name = std::string("T.") + b.name;
      switch (b.category) {
        case BuiltinCategory::Scalar: return callScalarBuiltin(b, e);
        case BuiltinCategory::TileOp:
          if (returnsPrevious(b.id))
            report(DiagKind::MisusedBuiltin, e.loc,
                   "`" + name + "` has a value only as the whole right side of an assignment, with `return_prev=True`: "
                   "`old = " + name + "(dst[i], v, return_prev=True)`");
          else
            report(DiagKind::MisusedBuiltin, e.loc, "`" + name + "` is a statement and has no value");
          return Value::error(e.loc);
        case BuiltinCategory::Loop:
          report(DiagKind::MisusedBuiltin, e.loc,
                 "`" + name + "` can only be the iterator of a loop: `for i in " + name + "(...):`");
          return Value::error(e.loc);
        case BuiltinCategory::Kernel:
          report(DiagKind::MisusedBuiltin, e.loc,
                 b.id == BuiltinId::Kernel ? std::string("`T.Kernel` is only used as `with T.Kernel(...) as (bx, by):`")
                                           : "`" + name + "` is only used as `with " + name + "(...):`");
          return Value::error(e.loc);
        case BuiltinCategory::Alloc:
          report(DiagKind::MisusedBuiltin, e.loc,
                 "`" + name + "` must be assigned to a name: `buf = " + name + "(...)`");
          return Value::error(e.loc);
        case BuiltinCategory::Type:
          report(DiagKind::MisusedBuiltin, e.loc,
                 "`" + name + "(...)` is only allowed as a parameter's type" +
                     (b.id == BuiltinId::Tensor
                          ? std::string("; tlc has no tensor views (`T.Tensor(shape, dtype, X.data)`): tensors are "
                                        "contiguous and row-major, so declare the parameter with the shape the kernel "
                                        "indexes, e.g. `X: T.Tensor((KH * KW * C, F), dtype)`")
                          : std::string()));
          return Value::error(e.loc);
        case BuiltinCategory::Decorator:
          report(DiagKind::MisusedBuiltin, e.loc, "`" + name + "` is only used as a decorator: `@" + name + "`");
          return Value::error(e.loc);
        case BuiltinCategory::Enum:
          report(DiagKind::MisusedBuiltin, e.loc, "`" + name + "` is not callable; name one of its members");
          return Value::error(e.loc);
        case BuiltinCategory::Layout: return callLayoutBuiltin(b, e);
      }
      return Value::error(e.loc);
    }
    case ValueKind::Macro:
      if (!callee.func->isMacro) {
        report(DiagKind::NotCallable, e.loc, "`" + callee.func->name + "` is a kernel; only macros can be called")
            .note(callee.func->loc, "`" + callee.func->name + "` defined here");
        return Value::error(e.loc);
      }
      return callMacro(callee, e);
    case ValueKind::DType: {
      // `float32(x)` converts like `T.cast(x, float32)`.
      if (e.operands.size() != 2 || !e.keywords.empty()) {
        report(DiagKind::WrongArgumentCount, e.loc,
               "a dtype used as a conversion takes one argument: `" + std::string(dtypeName(callee.dtype)) + "(x)`");
        return Value::error(e.loc);
      }
      ir::Expr x = expectScalar(eval(*e.operands[1]), "the converted value");
      if (!x) return Value::error(e.loc);
      return Value::ofExpr(foldCast(callee.dtype, x, e.loc), e.loc);
    }
    default:
      report(DiagKind::NotCallable, e.loc, describeValue(callee) + " is not callable");
      return Value::error(e.loc);
  }
}

}  // namespace tlc::sema
