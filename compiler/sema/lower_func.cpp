// Kernels: the driver of sema (run), compile-time parameters bound by -D or
// defaults, and runtime parameters (global tensors and scalars). A kernel is
// written in one of three forms (classified in tilelang_forms.cpp): a `def`
// with `[compile-time parameters]`, a TileLang kernel factory (its
// parameters are the compile-time parameters, its inner `@T.prim_func` the
// kernel), or a top-level `@T.prim_func` whose free names are bound by -D.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "compiler/parser/parser.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"
#include "compiler/support/suggest.h"

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
  // A kernel chosen by name (when the file has it) is lowered alone.
  bool chosen = false;
  for (const auto& f : main->ast->funcs) chosen |= !f->isMacro && f->name == onlyKernel_;
  for (const auto& f : main->ast->funcs) {
    if (f->isMacro || (chosen && f->name != onlyKernel_)) continue;
    auto form = defForms_.find(f.get());
    if (form != defForms_.end() && form->second.form == DefForm::Invalid) continue;
    if (ir::Func fn = lowerKernel(*f, *main)) out.funcs.push_back(fn);
  }
  // A definition that failed to classify may be the one a -D names, and so
  // may a kernel not lowered.
  bool everyDefinitionSeen = !chosen;
  for (const auto& [def, info] : defForms_) everyDefinitionSeen = everyDefinitionSeen && info.form != DefForm::Invalid;
  for (size_t i = 0; i < defines_.size() && everyDefinitionSeen; ++i)
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
  if (auto t = parseDTypeSpelling(s)) return Value::ofDType(*t, loc);
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

void Sema::bindCompileParam(const std::string& name, const ast::Expr* defaultValue, SourceLoc loc, ir::PrimFunc& fn) {
  if (const Symbol* old = scope_->lookupLocal(name)) {
    report(DiagKind::Redefinition, loc, "compile-time parameter `" + name + "` is declared twice")
        .note(old->declLoc, "first declared here");
    return;
  }
  std::optional<Value> value;
  int defIndex = -1;
  for (size_t i = 0; i < defines_.size(); ++i) {
    if (defines_[i].name != name) continue;
    defIndex = static_cast<int>(i);  // the last one wins; duplicates were reported
    defineUsed_[i] = true;
  }
  std::optional<Value> fallback;
  if (defaultValue) {
    fallback = eval(*defaultValue);
    // TileLang writes dtype parameters as strings: `dtype="float16"`.
    if (fallback->kind == ValueKind::String) {
      if (auto t = parseDTypeSpelling(fallback->str)) {
        fallback = Value::ofDType(*t, fallback->loc);
      } else {
        report(DiagKind::BadDType, defaultValue->loc,
               "the default of `" + name + "` is the string \"" + fallback->str +
                   "\", which names no dtype; a compile-time parameter is a number, True/False or a dtype (" +
                   kDTypeSpellings + ")");
        fallback = Value::error(loc);
      }
    }
  }
  if (defIndex >= 0) {
    SourceLoc dloc = defineLocs_[defIndex];
    value = parseDefineValue(defines_[defIndex].value, loc);
    if (!value) {
      diags_.report(DiagKind::BadDefine, dloc,
                    "cannot read `" + defines_[defIndex].value + "` as the value of `" + name + "`: " +
                        (integerOutOfRange(defines_[defIndex].value)
                             ? "the integer does not fit in int64"
                             : "expected an integer, a float, True/False or a dtype name such as `float16`"))
          .note(loc, "`" + name + "` declared here");
      value = Value::error(loc);
    } else if (fallback && !fallback->isError() &&
               (fallback->kind == ValueKind::DType) != (value->kind == ValueKind::DType)) {
      diags_.report(DiagKind::BadDefine, dloc,
                    "`" + name + "` takes " + (fallback->kind == ValueKind::DType ? "a dtype" : "a number") +
                        " (its default is " + describeValue(*fallback) + "), not `" + defines_[defIndex].value + "`")
          .note(defaultValue->loc, "default given here");
      value = Value::error(loc);
    }
  } else if (fallback) {
    value = fallback;
    if (value->kind == ValueKind::Buffer || value->kind == ValueKind::Region) {
      report(DiagKind::NotCompileTimeConstant, defaultValue->loc,
             "the default of `" + name + "` must be a number or a dtype, got " + describeValue(*value));
      value = Value::error(loc);
    }
  }
  if (value) {
    if (!value->isError()) fn.bindings.push_back(ir::Binding{name, bindingText(*value)});
    value->loc = loc;
    bindName(name, loc, *value);
    return;
  }
  ir::Var var = freshVar(name, DType::Int32, loc);
  symbolic_[var.get()] = SymbolicParam{name, loc, false};
  bindName(name, loc, Value::ofExpr(ir::makeVarRef(var, loc), loc));
}

// TileLang's `T.dynamic("M")` (and its older name `T.symbolic`): the
// dimension `M`, as an unbound integer parameter of a kernel factory is: the
// value of `-D M=...` if given, else a dimension read from the shapes of the
// tensors passed at run time (lowerKernel checks that a tensor parameter's
// shape uses it). `T.dynamic("M, N")` declares several and gives a tuple.
Value Sema::dynamicDimensions(const ast::Expr& nameExpr, const ast::Expr* dtypeExpr, SourceLoc loc) {
  Value name = eval(nameExpr);
  if (name.isError()) return name;
  if (!currentFunc_) {
    report(DiagKind::MisusedBuiltin, loc,
           "`T.dynamic` declares a dimension of a kernel: call it in a kernel factory's body or in a kernel");
    return Value::error(loc);
  }
  if (name.kind != ValueKind::String) {
    report(DiagKind::TypeMismatch, nameExpr.loc,
           "`T.dynamic` takes the dimension's name as a string, `T.dynamic(\"M\")`, but this is " +
               describeValue(name));
    return Value::error(loc);
  }
  if (dtypeExpr) {
    std::optional<DType> t = evalDType(*dtypeExpr, "the dtype of `T.dynamic`");
    if (!t) return Value::error(loc);
    if (*t != DType::Int32 && *t != DType::Int64) {
      report(DiagKind::BadDType, dtypeExpr->loc,
             "a dynamic dimension is \"int32\" or \"int64\" (both are a tensor dimension, below 2^31), not " +
                 std::string(dtypeName(*t)));
      return Value::error(loc);
    }
  }
  std::vector<std::string> names;
  std::string cur;
  for (char c : name.str + ",") {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) names.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  for (const std::string& n : names)
    if (!std::isalpha(static_cast<unsigned char>(n[0])) && n[0] != '_') names.clear();
  if (names.empty()) {
    report(DiagKind::TypeMismatch, nameExpr.loc,
           "`T.dynamic` takes the names of dimensions, `\"M\"` or `\"M, N\"`, not \"" + name.str + "\"");
    return Value::error(loc);
  }
  std::vector<Value> dims;
  for (const std::string& n : names) dims.push_back(dynamicDimension(n, nameExpr.loc));
  if (dims.size() == 1) return dims[0];
  Value tuple;
  tuple.kind = ValueKind::Tuple;
  tuple.elems = std::move(dims);
  tuple.loc = loc;
  return tuple;
}

Value Sema::dynamicDimension(const std::string& name, SourceLoc loc) {
  if (auto it = dynamicDims_.find(name); it != dynamicDims_.end()) {
    Value v = it->second;
    v.loc = loc;
    return v;
  }
  Value v = Value::error(loc);
  int defIndex = -1;
  for (size_t i = 0; i < defines_.size(); ++i) {
    if (defines_[i].name != name) continue;
    defIndex = static_cast<int>(i);
    defineUsed_[i] = true;
  }
  if (defIndex >= 0) {
    std::optional<Value> parsed = parseDefineValue(defines_[defIndex].value, loc);
    if (parsed && parsed->isExpr() && ir::as<ir::IntImm>(parsed->expr)) {
      v = *parsed;
      currentFunc_->bindings.push_back(ir::Binding{name, bindingText(v)});
    } else {
      diags_.report(DiagKind::BadDefine, defineLocs_[defIndex],
                    "cannot read `" + defines_[defIndex].value + "` as the value of the dynamic dimension `" + name +
                        "`: expected an integer")
          .note(loc, "`" + name + "` declared here");
    }
  } else {
    ir::Var var = freshVar(name, DType::Int32, loc);
    symbolic_[var.get()] = SymbolicParam{name, loc, false};
    dynamicVars_.push_back(var);
    v = Value::ofExpr(ir::makeVarRef(var, loc), loc);
  }
  dynamicDims_[name] = v;
  return v;
}

// A free name of a top-level `@T.prim_func`: its -D binding, once per kernel.
Value Sema::bindFreeName(const ast::Expr& e) {
  const std::string& name = e.name;
  if (auto it = freeNames_.find(name); it != freeNames_.end()) {
    Value v = it->second;
    v.loc = e.loc;
    return v;
  }
  int defIndex = -1;
  for (size_t i = 0; i < defines_.size(); ++i)
    if (defines_[i].name == name) defIndex = static_cast<int>(i);
  Value v = Value::error(e.loc);
  if (defIndex < 0) {
    std::vector<std::string> bound;
    for (const Define& d : defines_) bound.push_back(d.name);
    std::string hint = didYouMean(name, bound);
    if (hint.empty()) hint = suggestName(name);
    report(DiagKind::UnboundCompileParam, e.loc,
           "`" + name + "` is not defined: in the `@T.prim_func` `" + currentFunc_->name +
               "`, a free name is a compile-time parameter; bind it with `-D " + name + "=...`" + hint)
        .note(currentFunc_->loc, "`" + currentFunc_->name + "` defined here");
  } else {
    for (size_t i = 0; i < defines_.size(); ++i)
      if (defines_[i].name == name) defineUsed_[i] = true;
    std::optional<Value> parsed = parseDefineValue(defines_[defIndex].value, e.loc);
    if (!parsed) {
      diags_.report(DiagKind::BadDefine, defineLocs_[defIndex],
                    "cannot read `" + defines_[defIndex].value + "` as the value of `" + name +
                        "`: expected an integer, a float, True/False or a dtype name such as `float16`")
          .note(e.loc, "`" + name + "` used here");
    } else {
      v = *parsed;
      currentFunc_->bindings.push_back(ir::Binding{name, bindingText(v)});
    }
  }
  freeNames_[name] = v;
  v.loc = e.loc;
  return v;
}

// `Tensor[shape, dtype]`, `T.Tensor(shape, dtype)`, `T.Buffer(...)`,
// `T.SharedBuffer(...)`, ...: the builtin and its two operands, or nullopt
// when `ann` is no buffer type (errors in the callee are reported).
std::optional<Sema::BufferType> Sema::bufferTypeOf(const ast::Expr& ann, bool& failed) {
  failed = false;
  if ((ann.kind != ast::ExprKind::Subscript && ann.kind != ast::ExprKind::Call) || ann.operands.empty()) return std::nullopt;
  Value head = eval(*ann.operands[0]);
  if (head.isError()) {
    failed = true;
    return std::nullopt;
  }
  if (head.kind != ValueKind::Builtin || head.builtin->category != BuiltinCategory::Type) return std::nullopt;
  BufferType t;
  t.id = head.builtin->id;
  t.name = head.builtin->name;
  std::vector<const ast::Expr*> args;
  for (size_t i = 1; i < ann.operands.size(); ++i) args.push_back(ann.operands[i].get());
  if (ann.kind == ast::ExprKind::Call) {
    CallArgs matched;
    if (!matchArgs(ann, "T." + t.name, head.builtin->params, head.builtin->required, false, matched)) {
      failed = true;
      return std::nullopt;
    }
    args = matched.slots;
  } else if (args.size() == 1 && args[0]->kind == ast::ExprKind::Tuple && args[0]->operands.size() == 2) {
    args = {args[0]->operands[0].get(), args[0]->operands[1].get()};
  }
  if (args.size() != 2 || !args[0] || !args[1]) {
    report(DiagKind::WrongArgumentCount, ann.loc,
           "a buffer type is written `" + t.name + "[(dim, ...), dtype]` or `T." + t.name + "((dim, ...), dtype)`");
    failed = true;
    return std::nullopt;
  }
  t.shape = args[0];
  t.dtype = args[1];
  return t;
}

// The dimensions of a buffer type: a tuple (or list) of integers, one
// integer, or a name bound to a tuple. Empty after reporting an error.
std::vector<ir::Expr> Sema::bufferTypeShape(const ast::Expr& shapeExpr) {
  Value shape = eval(shapeExpr);
  if (shape.isError()) return {};
  std::vector<Value> dims = shape.kind == ValueKind::Tuple ? shape.elems : std::vector<Value>{shape};
  if (dims.empty()) {
    report(DiagKind::ShapeMismatch, shapeExpr.loc, "a tensor needs at least one dimension");
    return {};
  }
  std::vector<ir::Expr> out;
  bool ok = true;
  for (const Value& d : dims) {
    SourceLoc dloc = shape.kind == ValueKind::Tuple && d.loc.known() ? d.loc : shapeExpr.loc;
    ir::Expr x = expectInt(d, "a tensor dimension");
    if (!x) {
      ok = false;
      continue;
    }
    if (auto c = constIntValue(x); c && *c < 1) {
      report(DiagKind::ShapeMismatch, dloc, "tensor dimensions must be positive, but this one is " + std::to_string(*c));
      ok = false;
    } else if (c && !checkInt32Extent(*c, dloc, "the tensor dimension")) {
      ok = false;
    }
    out.push_back(foldCast(DType::Int32, x, dloc));
  }
  if (!ok) return {};
  return out;
}

void Sema::lowerRuntimeParams(const std::vector<ast::Param>& params, ir::PrimFunc& fn) {
  for (const ast::Param& p : params) {
    if (const Symbol* old = scope_->lookupInFrame(p.name)) {
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
    if (p.defaultValue) {
      report(DiagKind::TypeMismatch, p.defaultValue->loc,
             "kernel parameter `" + p.name + "` cannot have a default: the caller passes every argument; make it a "
             "compile-time parameter instead");
      bindName(p.name, p.loc, Value::error(p.loc));
      continue;
    }
    const ast::Expr& ann = *p.annotation;
    bool failed = false;
    std::optional<BufferType> type = bufferTypeOf(ann, failed);
    if (failed) {
      bindName(p.name, p.loc, Value::error(p.loc));
      continue;
    }
    if (type) {
      if (type->id != BuiltinId::Tensor) {
        report(DiagKind::ScopeViolation, ann.loc,
               "a kernel parameter is a global tensor: write `T.Tensor(...)` or `T.Buffer(...)`; `T." + type->name +
                   "` types a macro parameter");
        bindName(p.name, p.loc, Value::error(p.loc));
        continue;
      }
      std::vector<ir::Expr> shape = bufferTypeShape(*type->shape);
      for (const ir::Expr& d : shape) {
        std::vector<ir::Var> vars;
        collectShapeVars(d, symbolic_, vars);
        for (const ir::Var& v : vars) symbolic_[v.get()].inShape = true;
      }
      std::optional<DType> dt = evalDType(*type->dtype, "the element type of `" + p.name + "`");
      if (shape.empty() || !dt) {
        bindName(p.name, p.loc, Value::error(p.loc));
        continue;
      }
      for (const ir::Expr& d : shape) collectShapeVars(d, symbolic_, fn.shapeVars);
      ir::Buffer buf = ir::makeBuffer(uniqueName(p.name), *dt, shape, ir::MemScope::Global, p.loc);
      fn.params.push_back(ir::Param{p.name, buf, nullptr, p.loc});
      bindName(p.name, p.loc, Value::ofBuffer(buf, p.loc));
      continue;
    }
    std::optional<DType> dt = evalDType(ann, "the type of parameter `" + p.name + "`");
    if (!dt) {
      bindName(p.name, p.loc, Value::error(p.loc));
      continue;
    }
    ir::Var var = freshVar(p.name, *dt, p.loc);
    fn.params.push_back(ir::Param{p.name, nullptr, var, p.loc});
    bindName(p.name, p.loc, Value::ofExpr(ir::makeVarRef(var, p.loc), p.loc));
  }
}

// An unbound parameter must be a shape dimension of some tensor.
void Sema::checkUnboundParams(const std::vector<std::pair<std::string, SourceLoc>>& names, Scope& scope) {
  for (const auto& [name, loc] : names) {
    const Symbol* sym = scope.lookupLocal(name);
    if (!sym || !sym->value.isExpr()) continue;
    auto* ref = ir::as<ir::VarRef>(sym->value.expr);
    if (!ref) continue;
    auto it = symbolic_.find(ref->var.get());
    if (it == symbolic_.end() || it->second.inShape || it->second.reported || it->second.name != name) continue;
    report(DiagKind::UnboundCompileParam, loc,
           "compile-time parameter `" + name + "` has no value: bind it with `-D " + name +
               "=...` or give it a default (only an integer parameter used in a tensor shape may stay unbound)");
    Symbol s = *sym;
    s.value = Value::error(loc);
    scope.define(name, s);
  }
}

// The module's `NAME = value` assignments, in order, into the current scope
// (around the kernel's, so that its parameters shadow them and their
// defaults see them, as in Python): a name bound to a constant is a
// compile-time parameter with that default (`-D NAME=...` overrides it)
// unless the kernel has a parameter of that name; other values
// (`T.dynamic("m")`, tuples, strings that name no dtype) are bound as an
// assignment in the kernel binds them.
void Sema::bindGlobals(const ast::FuncDef& def, bool factory, ModuleInfo& m, ir::PrimFunc& fn) {
  std::set<std::string> own;
  for (const ast::CompileParam& cp : def.compileParams) own.insert(cp.name);
  if (factory)
    for (const ast::Param& p : def.params) own.insert(p.name);
  for (const ast::StmtPtr& s : m.ast->globals) {
    // One that failed for an earlier kernel is reported once: it is skipped.
    if (!s || s->kind != ast::StmtKind::Assign || !s->target || failedGlobals_.count(s.get())) continue;
    const ast::Expr& target = *s->target;
    int errors = diags_.errorCount();
    if (target.kind == ast::ExprKind::Name) scope_->erase(target.name);  // Python rebinds
    // A string that names no dtype is a plain string, not a parameter.
    const ast::Expr& v = *s->value;
    bool constant = v.kind != ast::ExprKind::Call && (v.kind != ast::ExprKind::String || parseDTypeSpelling(v.name));
    if (target.kind == ast::ExprKind::Name && !own.count(target.name) && constant)
      bindCompileParam(target.name, &v, target.loc, fn);
    else
      lowerAssign(*s);
    if (diags_.errorCount() > errors) failedGlobals_.insert(s.get());
  }
}

ir::Func Sema::lowerKernel(const ast::FuncDef& def, ModuleInfo& m) {
  usedNames_.clear();
  symbolic_.clear();
  loopRanges_.clear();
  macroExpansions_ = 0;
  failedMacros_.clear();
  kernelLets_ = 0;
  letValues_.clear();
  inKernel_ = false;
  macroStack_.clear();
  freeNames_.clear();
  dynamicDims_.clear();
  dynamicVars_.clear();
  module_ = &m;
  scope_ = nullptr;
  auto fn = std::make_shared<ir::PrimFunc>();
  fn->name = def.name;
  fn->loc = def.loc;
  currentFunc_ = fn.get();
  auto form = defForms_.find(&def);
  DefForm kind = form == defForms_.end() ? DefForm::Kernel : form->second.form;
  ScopeGuard globals(*this, true, m.scope.get());
  bindGlobals(def, kind == DefForm::Factory, m, *fn);
  ScopeGuard guard(*this, true);
  Scope& kernelScope = *scope_;

  // The module's names, then the compile-time parameters, in order: each
  // may use the ones before it.
  std::vector<std::pair<std::string, SourceLoc>> compileNames;
  for (const ast::CompileParam& cp : def.compileParams) {
    bindCompileParam(cp.name, cp.defaultValue.get(), cp.loc, *fn);
    compileNames.emplace_back(cp.name, cp.loc);
  }
  if (kind == DefForm::Factory) {
    for (const ast::Param& p : def.params) {
      bindCompileParam(p.name, p.defaultValue.get(), p.loc, *fn);
      compileNames.emplace_back(p.name, p.loc);
    }
  }

  StmtBuilder body;
  builder_ = &body;
  const ast::FuncDef* kernel = &def;
  std::optional<ScopeGuard> inner;
  if (kind == DefForm::Factory) {
    kernel = lowerFactoryPrelude(def, m);
    if (!kernel) {
      builder_ = nullptr;
      currentFunc_ = nullptr;
      return nullptr;
    }
    inner.emplace(*this, true);  // the prim_func's names may shadow the factory's
  }
  primFuncFreeNames_ = kind == DefForm::PrimFunc;
  lowerRuntimeParams(kernel->params, *fn);
  checkUnboundParams(compileNames, kernelScope);
  lowerTuneSpace(form == defForms_.end() ? nullptr : form->second.tune, compileNames, *fn);
  lowerBlockInto(kernel->body);
  for (const ir::Var& v : dynamicVars_) {
    const SymbolicParam& p = symbolic_[v.get()];
    if (!p.inShape)
      report(DiagKind::UnboundCompileParam, p.loc,
             "dynamic dimension `" + p.name + "` is in no tensor parameter's shape, so no tensor gives its value at "
             "run time: use it in a parameter such as `A: T.Tensor((" + p.name + ", K), dtype)` (declared before the "
             "`@T.prim_func`) or bind it with `-D " + p.name + "=...`");
  }
  primFuncFreeNames_ = false;
  fn->body = body.finish(def.loc);
  builder_ = nullptr;
  currentFunc_ = nullptr;
  return fn;
}

}  // namespace tlc::sema
