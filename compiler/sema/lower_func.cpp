// Kernels: the driver of sema (run), compile-time parameters bound by -D or
// defaults, and runtime parameters (global tensors and scalars).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "compiler/parser/parser.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

Sema::Sema(SourceManager& sources, DiagnosticEngine& diags, const std::vector<Define>& defines)
    : sources_(sources), diags_(diags), defines_(defines), defineUsed_(defines.size(), false) {
  if (defines_.empty()) return;
  // The defines get a buffer of their own so that errors about them have a location.
  std::string text;
  for (const Define& d : defines_) text += "-D " + d.name + "=" + d.value + "\n";
  uint32_t file = sources_.addBuffer("<command line>", text);
  for (size_t i = 0; i < defines_.size(); ++i) {
    uint32_t len = static_cast<uint32_t>(defines_[i].name.size() + 1 + defines_[i].value.size());
    defineLocs_.push_back(SourceLoc{file, static_cast<uint32_t>(i + 1), 4, len});
  }
}

Sema::ScopeGuard::ScopeGuard(Sema& sema, bool frameRoot, Scope* parent) : s(sema), saved(sema.scope_) {
  s.scopeStore_.push_back(std::make_unique<Scope>(parent ? parent : sema.scope_, frameRoot));
  s.scope_ = s.scopeStore_.back().get();
}
Sema::ScopeGuard::~ScopeGuard() { s.scope_ = saved; }

Diagnostic& Sema::report(DiagKind kind, SourceLoc loc, std::string message) {
  Diagnostic& d = diags_.report(kind, loc, std::move(message));
  for (auto it = macroStack_.rbegin(); it != macroStack_.rend(); ++it)
    d.note(it->callLoc, "in macro `" + it->macro->name + "` expanded here");
  return d;
}

std::optional<ir::Module> Sema::run(uint32_t file) {
  for (size_t i = 0; i < defines_.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (defines_[i].name == defines_[j].name)
        diags_.report(DiagKind::BadDefine, defineLocs_[i], "`" + defines_[i].name + "` is defined twice")
            .note(defineLocs_[j], "first defined here");

  std::unique_ptr<ast::Module> ast = parseModule(sources_, diags_, file);
  ModuleInfo* main = loadModule("", file, std::move(ast));
  declareModule(*main);

  ir::Module out;
  for (const auto& f : main->ast->funcs) {
    if (f->isMacro) continue;
    if (ir::Func fn = lowerKernel(*f, *main)) out.funcs.push_back(fn);
  }
  for (size_t i = 0; i < defines_.size(); ++i)
    if (!defineUsed_[i])
      diags_.report(DiagKind::BadDefine, defineLocs_[i],
                    "no kernel in this file has a compile-time parameter `" + defines_[i].name + "`");
  return out;
}

// Whether a -D value is an integer too large for int64 (not read as a float).
static bool integerOutOfRange(const std::string& s) {
  int64_t i = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), i);
  return r.ec == std::errc::result_out_of_range && r.ptr == s.data() + s.size();
}

// A -D value: an integer, a float, True/False or a dtype name.
static std::optional<Value> parseDefineValue(const std::string& s, SourceLoc loc) {
  int64_t i = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (auto r = std::from_chars(b, e, i); r.ec == std::errc() && r.ptr == e)
    return Value::ofExpr(ir::makeInt(i, i == static_cast<int32_t>(i) ? DType::Int32 : DType::Int64, loc), loc, true);
  if (integerOutOfRange(s)) return std::nullopt;
  double d = 0;
  if (auto r = std::from_chars(b, e, d); r.ec == std::errc() && r.ptr == e && !s.empty() && std::isfinite(d))
    return Value::ofExpr(ir::makeFloat(d, DType::Float32, loc), loc, true);
  if (s == "True" || s == "true") return Value::ofExpr(ir::makeBool(true, loc), loc);
  if (s == "False" || s == "false") return Value::ofExpr(ir::makeBool(false, loc), loc);
  if (auto t = parseDType(s)) return Value::ofDType(*t, loc);
  return std::nullopt;
}

static std::string bindingText(const Value& v) {
  if (v.kind == ValueKind::DType) return std::string(dtypeName(v.dtype));
  if (v.kind == ValueKind::Expr) {
    if (auto* f = ir::as<ir::FloatImm>(v.expr)) {
      // The shortest text that reads back as the same double.
      char buf[40];
      for (int prec = 6; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, f->value);
        if (std::strtod(buf, nullptr) == f->value) break;
      }
      return buf;
    }
    return formatExpr(v.expr);
  }
  return describeValue(v);
}

static void collectShapeVars(const ir::Expr& e, const std::map<const ir::VarNode*, SymbolicParam>& symbolic,
                             std::vector<ir::Var>& out) {
  if (auto* v = ir::as<ir::VarRef>(e)) {
    if (symbolic.count(v->var.get())) {
      for (const ir::Var& seen : out)
        if (seen == v->var) return;
      out.push_back(v->var);
    }
  } else if (auto* b = ir::as<ir::Binary>(e)) {
    collectShapeVars(b->a, symbolic, out);
    collectShapeVars(b->b, symbolic, out);
  } else if (auto* u = ir::as<ir::Unary>(e)) {
    collectShapeVars(u->a, symbolic, out);
  } else if (auto* c = ir::as<ir::Cast>(e)) {
    collectShapeVars(c->value, symbolic, out);
  } else if (auto* s = ir::as<ir::Select>(e)) {
    collectShapeVars(s->cond, symbolic, out);
    collectShapeVars(s->t, symbolic, out);
    collectShapeVars(s->f, symbolic, out);
  } else if (auto* c = ir::as<ir::Call>(e)) {
    for (const ir::Expr& a : c->args) collectShapeVars(a, symbolic, out);
  }
}

ir::Func Sema::lowerKernel(const ast::FuncDef& def, ModuleInfo& m) {
  usedNames_.clear();
  symbolic_.clear();
  loopRanges_.clear();
  macroExpansions_ = 0;
  failedMacros_.clear();
  kernelLets_ = 0;
  inKernel_ = false;
  macroStack_.clear();
  module_ = &m;
  scope_ = nullptr;
  ScopeGuard guard(*this, true, m.scope.get());
  auto fn = std::make_shared<ir::PrimFunc>();
  fn->name = def.name;
  fn->loc = def.loc;

  // Compile-time parameters, in order: each may use the ones before it.
  for (const ast::CompileParam& cp : def.compileParams) {
    if (const Symbol* old = scope_->lookupLocal(cp.name)) {
      report(DiagKind::Redefinition, cp.loc, "compile-time parameter `" + cp.name + "` is declared twice")
          .note(old->declLoc, "first declared here");
      continue;
    }
    std::optional<Value> value;
    int defIndex = -1;
    for (size_t i = 0; i < defines_.size(); ++i) {
      if (defines_[i].name != cp.name) continue;
      defIndex = static_cast<int>(i);  // the last one wins; duplicates were reported
      defineUsed_[i] = true;
    }
    std::optional<Value> fallback;
    if (cp.defaultValue) fallback = eval(*cp.defaultValue);
    if (defIndex >= 0) {
      SourceLoc dloc = defineLocs_[defIndex];
      value = parseDefineValue(defines_[defIndex].value, cp.loc);
      if (!value) {
        diags_.report(DiagKind::BadDefine, dloc,
                      "cannot read `" + defines_[defIndex].value + "` as the value of `" + cp.name + "`: " +
                          (integerOutOfRange(defines_[defIndex].value)
                               ? "the integer does not fit in int64"
                               : "expected an integer, a float, True/False or a dtype name such as `float16`"))
            .note(cp.loc, "`" + cp.name + "` declared here");
        value = Value::error(cp.loc);
      } else if (fallback && !fallback->isError() &&
                 (fallback->kind == ValueKind::DType) != (value->kind == ValueKind::DType)) {
        diags_.report(DiagKind::BadDefine, dloc,
                      "`" + cp.name + "` takes " + (fallback->kind == ValueKind::DType ? "a dtype" : "a number") +
                          " (its default is " + describeValue(*fallback) + "), not `" + defines_[defIndex].value + "`")
            .note(cp.defaultValue->loc, "default given here");
        value = Value::error(cp.loc);
      }
    } else if (fallback) {
      value = fallback;
      if (value->kind == ValueKind::Buffer || value->kind == ValueKind::Region) {
        report(DiagKind::NotCompileTimeConstant, cp.defaultValue->loc,
               "the default of `" + cp.name + "` must be a number or a dtype, got " + describeValue(*value));
        value = Value::error(cp.loc);
      }
    }
    if (value) {
      if (!value->isError()) fn->bindings.push_back(ir::Binding{cp.name, bindingText(*value)});
      value->loc = cp.loc;
      bindName(cp.name, cp.loc, *value);
      continue;
    }
    ir::Var var = freshVar(cp.name, DType::Int32, cp.loc);
    symbolic_[var.get()] = SymbolicParam{cp.name, cp.loc, false};
    bindName(cp.name, cp.loc, Value::ofExpr(ir::makeVarRef(var, cp.loc), cp.loc));
  }

  // Runtime parameters.
  for (const ast::Param& p : def.params) {
    if (const Symbol* old = scope_->lookupLocal(p.name)) {
      report(DiagKind::Redefinition, p.loc, "parameter `" + p.name + "` is already declared")
          .note(old->declLoc, "first declared here");
      continue;
    }
    if (!p.annotation) {
      report(DiagKind::TypeMismatch, p.loc,
             "parameter `" + p.name + "` needs a type: `" + p.name + ": Tensor[(M, N), float16]` or `" + p.name +
                 ": int32`");
      bindName(p.name, p.loc, Value::error(p.loc));
      continue;
    }
    const ast::Expr& ann = *p.annotation;
    Value tensorType;
    if (ann.kind == ast::ExprKind::Subscript) {
      tensorType = eval(*ann.operands[0]);
      if (tensorType.isError()) {
        bindName(p.name, p.loc, Value::error(p.loc));
        continue;
      }
    }
    if (tensorType.kind == ValueKind::Builtin && tensorType.builtin->id == BuiltinId::Tensor) {
      std::vector<const ast::Expr*> idx;
      for (size_t i = 1; i < ann.operands.size(); ++i) idx.push_back(ann.operands[i].get());
      if (idx.size() == 1 && idx[0]->kind == ast::ExprKind::Tuple && idx[0]->operands.size() == 2) {
        idx = {idx[0]->operands[0].get(), idx[0]->operands[1].get()};
      }
      if (idx.size() != 2) {
        report(DiagKind::WrongArgumentCount, ann.loc, "a tensor type is written `Tensor[(dim, ...), dtype]`");
        bindName(p.name, p.loc, Value::error(p.loc));
        continue;
      }
      std::vector<ir::Expr> shape;
      bool ok = true;
      std::vector<const ast::Expr*> dims;
      if (idx[0]->kind == ast::ExprKind::Tuple) {
        for (const auto& d : idx[0]->operands) dims.push_back(d.get());
      } else {
        dims.push_back(idx[0]);
      }
      if (dims.empty()) {
        report(DiagKind::ShapeMismatch, idx[0]->loc, "a tensor needs at least one dimension");
        ok = false;
      }
      for (const ast::Expr* d : dims) {
        ir::Expr x = expectInt(eval(*d), "a tensor dimension");
        if (!x) {
          ok = false;
          continue;
        }
        if (auto c = constIntValue(x); c && *c < 1) {
          report(DiagKind::ShapeMismatch, d->loc,
                 "tensor dimensions must be positive, but this one is " + std::to_string(*c));
          ok = false;
        } else if (c && !checkInt32Extent(*c, d->loc, "the tensor dimension")) {
          ok = false;
        }
        shape.push_back(foldCast(DType::Int32, x, d->loc));
      }
      for (const ir::Expr& d : shape) {
        std::vector<ir::Var> vars;
        collectShapeVars(d, symbolic_, vars);
        for (const ir::Var& v : vars) symbolic_[v.get()].inShape = true;
      }
      std::optional<DType> dt = evalDType(*idx[1], "the element type of `" + p.name + "`");
      if (!ok || !dt) {
        bindName(p.name, p.loc, Value::error(p.loc));
        continue;
      }
      for (const ir::Expr& d : shape) collectShapeVars(d, symbolic_, fn->shapeVars);
      ir::Buffer buf = ir::makeBuffer(uniqueName(p.name), *dt, shape, ir::MemScope::Global, p.loc);
      fn->params.push_back(ir::Param{p.name, buf, nullptr, p.loc});
      bindName(p.name, p.loc, Value::ofBuffer(buf, p.loc));
      continue;
    }
    std::optional<DType> dt = evalDType(ann, "the type of parameter `" + p.name + "`");
    if (!dt) {
      bindName(p.name, p.loc, Value::error(p.loc));
      continue;
    }
    ir::Var var = freshVar(p.name, *dt, p.loc);
    fn->params.push_back(ir::Param{p.name, nullptr, var, p.loc});
    bindName(p.name, p.loc, Value::ofExpr(ir::makeVarRef(var, p.loc), p.loc));
  }

  // An unbound parameter must be a shape dimension of some tensor.
  for (const ast::CompileParam& cp : def.compileParams) {
    const Symbol* sym = scope_->lookupLocal(cp.name);
    if (!sym || !sym->value.isExpr()) continue;
    auto* ref = ir::as<ir::VarRef>(sym->value.expr);
    if (!ref) continue;
    auto it = symbolic_.find(ref->var.get());
    if (it == symbolic_.end() || it->second.inShape || it->second.reported || it->second.name != cp.name) continue;
    report(DiagKind::UnboundCompileParam, cp.loc,
           "compile-time parameter `" + cp.name + "` has no value: bind it with `-D " + cp.name +
               "=...` or give it a default (only an integer parameter used in a tensor shape may stay unbound)");
    Symbol s = *sym;
    s.value = Value::error(cp.loc);
    scope_->define(cp.name, s);
  }

  StmtBuilder body;
  builder_ = &body;
  lowerBlockInto(def.body);
  fn->body = body.finish(def.loc);
  builder_ = nullptr;
  return fn;
}

}  // namespace tlc::sema
