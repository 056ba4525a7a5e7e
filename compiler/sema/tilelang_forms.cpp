// TileLang's spellings of definitions, so that a TileLang kernel pastes whole.
//
// classifyDefinitions gives each top-level definition its form (DefForm):
//   - `@T.macro def f(...)` is a macro, as `macro f(...)`;
//   - `@T.prim_func def main(...)` is a kernel whose free names are
//     compile-time parameters bound by -D (bindFreeName, lower_func.cpp);
//   - a `def` whose body holds definitions is a kernel factory: its
//     parameters (`M, N, block_M=128, dtype="float16"`) are the kernel's
//     compile-time parameters, its body's assignments are evaluated at
//     compile time, its `@T.macro`s see its names, and the `@T.prim_func` it
//     returns is the kernel, named after the factory;
//   - `@tilelang.jit(...)` on a factory is ignored with a warning: tlc
//     compiles ahead of time and the caller passes every tensor; so is
//     `@tilelang.autotune(...)`: tlc's tuning space is `@T.tune`.
// The same file reads TileLang's dtype strings and checks macro parameters
// typed `T.SharedBuffer(shape, dtype)` and the like.
#include <functional>

#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

const char* const kDTypeSpellings =
    "\"bool\", \"int8\"..\"int64\", \"uint8\"..\"uint64\", \"float16\" (\"half\"), \"bfloat16\", \"float32\" "
    "(\"float\"), \"float64\" (\"double\"), \"float8_e4m3\" (\"float8_e4m3fn\"), \"float8_e5m2\"";

std::optional<DType> parseDTypeSpelling(std::string_view name) {
  if (auto t = parseDType(name)) return t;
  if (name == "float") return DType::Float32;
  if (name == "half") return DType::Float16;
  if (name == "double") return DType::Float64;
  if (name == "int") return DType::Int32;
  if (name == "float8_e4m3fn") return DType::Float8E4M3;
  return std::nullopt;
}

namespace {

bool isDef(const ast::Stmt& s) { return s.kind == ast::StmtKind::Def && s.def; }

// The `return` statements of a factory's body, in its `if` branches too.
void collectReturns(const ast::Block& block, std::vector<const ast::Stmt*>& out) {
  for (const ast::StmtPtr& s : block) {
    if (!s) continue;
    if (s->kind == ast::StmtKind::Return) out.push_back(s.get());
    if (s->kind != ast::StmtKind::If) continue;
    collectReturns(s->body, out);
    collectReturns(s->orelse, out);
  }
}

const ast::FuncDef* findPrimFunc(const ast::FuncDef& factory, const std::string& name) {
  for (const ast::StmtPtr& s : factory.body)
    if (s && isDef(*s) && s->def->name == name && !s->def->isMacro) return s->def.get();
  return nullptr;
}

// `return main`, or `return a if cond else b` with prim_funcs on both sides.
bool returnsPrimFunc(const ast::FuncDef& factory, const ast::Expr* e) {
  if (!e) return false;
  if (e->kind == ast::ExprKind::Name) return findPrimFunc(factory, e->name) != nullptr;
  return e->kind == ast::ExprKind::IfElse && e->operands.size() == 3 &&
         returnsPrimFunc(factory, e->operands[0].get()) && returnsPrimFunc(factory, e->operands[2].get());
}

std::string decoratorName(BuiltinId id) {
  switch (id) {
    case BuiltinId::PrimFunc: return "`@T.prim_func`";
    case BuiltinId::MacroDecorator: return "`@T.macro`";
    case BuiltinId::Tune: return "`@T.tune`";
    case BuiltinId::Autotune: return "`@tilelang.autotune`";
    default: return "`@tilelang.jit`";
  }
}

}  // namespace

// The decorator `@T.prim_func`, `@T.macro` or `@tilelang.jit(...)`, or
// nullopt after reporting anything else.
std::optional<BuiltinId> Sema::evalDecorator(const ast::Expr& d) {
  const ast::Expr* callee = d.kind == ast::ExprKind::Call && !d.operands.empty() ? d.operands[0].get() : &d;
  Value v = eval(*callee);
  if (v.isError()) return std::nullopt;
  if (v.kind != ValueKind::Builtin || v.builtin->category != BuiltinCategory::Decorator) {
    report(DiagKind::BadDecorator, d.loc,
           "unknown decorator: a definition takes `@T.prim_func` (a kernel), `@T.macro` (a helper inlined at each "
           "call), `@tilelang.jit(...)` (on a kernel factory) or `@T.tune(...)` (a kernel's tuning space), but this "
           "is " +
               describeValue(v));
    return std::nullopt;
  }
  BuiltinId id = v.builtin->id;
  if (d.kind == ast::ExprKind::Call && id != BuiltinId::Jit && id != BuiltinId::Tune && id != BuiltinId::Autotune) {
    report(DiagKind::BadDecorator, d.loc, decoratorName(id) + " takes no arguments");
    return std::nullopt;
  }
  return id;
}

// Whether a body returns a value and launches no kernel (no `with` at any depth).
static bool isPythonHelper(const ast::Block& body) {
  bool returns = false;
  std::function<bool(const ast::Block&)> walk = [&](const ast::Block& b) {
    for (const ast::StmtPtr& s : b) {
      if (!s) continue;
      if (s->kind == ast::StmtKind::With) return false;
      if (s->kind == ast::StmtKind::Return && s->value) returns = true;
      if (!walk(s->body) || !walk(s->orelse)) return false;
    }
    return true;
  };
  return walk(body) && returns;
}

void Sema::classifyDefinitions(ModuleInfo& m) {
  Scope* saved = scope_;
  scope_ = m.scope.get();
  for (const auto& f : m.ast->funcs) {
    ast::FuncDef& def = *f;
    DefInfo info;
    info.form = def.isMacro ? DefForm::Macro : DefForm::Kernel;
    std::vector<std::pair<BuiltinId, SourceLoc>> decorators;
    bool bad = false;
    for (const ast::ExprPtr& d : def.decorators) {
      if (auto id = evalDecorator(*d)) decorators.emplace_back(*id, d->loc);
      else bad = true;
    }
    bool hasDefs = false;
    for (const ast::StmtPtr& s : def.body) hasDefs = hasDefs || (s && isDef(*s));
    const SourceLoc* jit = nullptr;
    const SourceLoc* autotune = nullptr;
    for (size_t k = 0; k < decorators.size(); ++k) {
      const auto& [id, loc] = decorators[k];
      if (id == BuiltinId::Jit || id == BuiltinId::Autotune) {
        (id == BuiltinId::Jit ? jit : autotune) = &loc;
        continue;
      }
      if (id == BuiltinId::Tune) {
        if (info.tune) {
          report(DiagKind::BadTuneSpace, loc, "`" + def.name + "` has a second `@T.tune`: list every tuned parameter in one")
              .note(info.tune->loc, "the first `@T.tune` is here");
          bad = true;
        }
        info.tune = def.decorators[k].get();
        continue;
      }
      DefForm want = id == BuiltinId::PrimFunc ? DefForm::PrimFunc : DefForm::Macro;
      if (info.form != DefForm::Kernel && info.form != want) {
        report(DiagKind::BadDecorator, loc,
               decoratorName(id) + " conflicts with " + (def.isMacro ? "the `macro` keyword" : "another decorator") +
                   " of `" + def.name + "`");
        bad = true;
      }
      info.form = want;
    }
    // A plain Python helper (`def _u8_to_f16(val, pos, dtype): ... return
    // expr`): no decorator, no compile-time parameters, no kernel, a value
    // returned; kernel code calls it, so it is a macro.
    if (info.form == DefForm::Kernel && decorators.empty() && !bad && !hasDefs && def.compileParams.empty() &&
        isPythonHelper(def.body))
      info.form = DefForm::Macro;
    if (info.form == DefForm::Macro) def.isMacro = true;
    if (hasDefs && info.form != DefForm::Kernel) {
      report(DiagKind::BadKernelFactory, def.loc,
             "`" + def.name + "` is a " + (info.form == DefForm::Macro ? "macro" : "`@T.prim_func`") +
                 " and cannot hold definitions; only a kernel factory (an undecorated `def` or one under "
                 "`@tilelang.jit`) defines its `@T.prim_func` and macros inside");
      bad = true;
    } else if (hasDefs) {
      info.form = DefForm::Factory;
      classifyFactory(def, info);
    } else if (jit && info.form == DefForm::Kernel) {
      report(DiagKind::BadKernelFactory, *jit,
             "`@tilelang.jit` decorates a kernel factory: a `def` that defines an inner `@T.prim_func` and returns it, "
             "but `" + def.name + "` defines none")
          .note(def.loc, "`" + def.name + "` defined here");
      bad = true;
    }
    if (info.tune && (info.form == DefForm::Macro || info.form == DefForm::PrimFunc)) {
      report(DiagKind::BadTuneSpace, info.tune->loc,
             info.form == DefForm::Macro
                 ? "`@T.tune` declares the tuning space of a kernel; a macro is tuned with the kernel that calls it"
                 : "a top-level `@T.prim_func` declares no compile-time parameters to tune: write `def " + def.name +
                       "[params](...)` or a kernel factory");
      bad = true;
    }
    if (jit && info.form == DefForm::Macro) {
      report(DiagKind::BadDecorator, *jit, "`@tilelang.jit` compiles kernels; a macro cannot take it");
      bad = true;
    }
    if (autotune && info.form != DefForm::Factory && info.form != DefForm::Kernel) {
      report(DiagKind::BadDecorator, *autotune, "`@tilelang.autotune` tunes a kernel factory; `" + def.name +
                                                    "` is a " + (info.form == DefForm::Macro ? "macro" : "`@T.prim_func`"));
      bad = true;
    }
    if (autotune && !bad && info.form != DefForm::Invalid)
      diags_.report(DiagKind::IgnoredDecorator, *autotune,
                    "`@tilelang.autotune` is ignored: `tlc tune` searches the space a kernel declares with "
                    "`@T.tune(block_M=[64, 128], ...)` over its compile-time parameters (docs/tuning.md)");
    if (jit && !bad && info.form != DefForm::Invalid)
      diags_.report(DiagKind::IgnoredDecorator, *jit,
                    "`@tilelang.jit` is ignored: tlc compiles the kernel ahead of time (`tlc build`, `tlc run`, "
                    "`--target`), and the caller passes every tensor, outputs included (`out_idx` has no effect)");
    if (bad) info.form = def.isMacro ? DefForm::Macro : DefForm::Invalid;
    defForms_[&def] = info;
  }
  scope_ = saved;
}

// A factory's nested definitions: `@T.prim_func`s and macros; each `return`
// (one, or one per branch of compile-time `if`s) names a prim_func, or
// chooses one (`return a if cond else b`), and the one the factory's
// parameters reach is the kernel.
void Sema::classifyFactory(ast::FuncDef& def, DefInfo& info) {
  bool ok = true;
  for (const ast::StmtPtr& s : def.body) {
    if (!s || !isDef(*s)) continue;
    ast::FuncDef& inner = *s->def;
    bool primFunc = false, macro = inner.isMacro;
    for (const ast::ExprPtr& d : inner.decorators) {
      auto id = evalDecorator(*d);
      if (!id) {
        ok = false;
      } else if (*id == BuiltinId::Jit || *id == BuiltinId::Tune || *id == BuiltinId::Autotune) {
        report(id == BuiltinId::Jit ? DiagKind::BadDecorator : DiagKind::BadTuneSpace, d->loc,
               decoratorName(*id) + " goes on the kernel factory `" + def.name + "`, not inside it");
        ok = false;
      } else {
        (*id == BuiltinId::PrimFunc ? primFunc : macro) = true;
      }
    }
    if (primFunc && macro) {
      report(DiagKind::BadDecorator, inner.loc, "`" + inner.name + "` cannot be both a `@T.prim_func` and a macro");
      ok = false;
    } else if (macro) {
      inner.isMacro = true;
    } else if (primFunc) {
      if (!info.primFunc) info.primFunc = &inner;
    } else {
      report(DiagKind::BadKernelFactory, inner.loc,
             "a definition inside kernel factory `" + def.name +
                 "` is either `@T.prim_func` (the kernel) or `@T.macro` (a helper)");
      ok = false;
    }
  }
  if (!info.primFunc) {
    if (ok)
      report(DiagKind::BadKernelFactory, def.loc,
             "kernel factory `" + def.name + "` defines no `@T.prim_func`; its kernel is the `@T.prim_func` it returns");
    info.form = DefForm::Invalid;
    return;
  }
  std::vector<const ast::Stmt*> returns;
  collectReturns(def.body, returns);
  if (returns.empty()) {
    report(DiagKind::BadKernelFactory, def.loc,
           "kernel factory `" + def.name + "` must return its `@T.prim_func`: end it with `return " +
               info.primFunc->name + "`")
        .note(info.primFunc->loc, "`" + info.primFunc->name + "` defined here");
    ok = false;
  }
  for (const ast::Stmt* r : returns) {
    if (returnsPrimFunc(def, r->value.get())) continue;
    report(DiagKind::BadKernelFactory, r->loc,
           "a kernel factory returns one of its `@T.prim_func`s, such as `return " + info.primFunc->name + "`")
        .note(info.primFunc->loc, "`" + info.primFunc->name + "` defined here");
    ok = false;
  }
  if (!ok) info.form = DefForm::Invalid;
}

// The factory's own statements, in order, in the factory's scope, as Python
// runs them: assignments bind compile-time values (`shape = [M, N]`,
// `accum_dtype = "float"`) and may rebind a name (`dtype = "float16"` over a
// parameter, `if scale is None: scale = ...`), macros are bound so that they
// see those names, `assert` checks the parameters, an `if` on a compile-time
// condition runs one branch, and the first `return` reached names the kernel.
// Returns that `@T.prim_func`, or null after reporting.
const ast::FuncDef* Sema::lowerFactoryPrelude(const ast::FuncDef& factory, ModuleInfo& m) {
  int errors = diags_.errorCount();
  if (const ast::FuncDef* kernel = lowerFactoryBlock(factory, factory.body, m)) return kernel;
  if (diags_.errorCount() == errors)
    report(DiagKind::BadKernelFactory, factory.loc,
           "kernel factory `" + factory.name + "` reaches no `return` with these parameters, so it makes no kernel");
  return nullptr;
}

const ast::FuncDef* Sema::lowerFactoryBlock(const ast::FuncDef& factory, const ast::Block& block, ModuleInfo& m) {
  for (const ast::StmtPtr& s : block) {
    if (!s) continue;
    switch (s->kind) {
      case ast::StmtKind::Def:
        if (s->def && s->def->isMacro) {
          Value v;
          v.kind = ValueKind::Macro;
          v.func = s->def.get();
          v.funcModule = &m;
          v.funcScope = scope_;
          v.loc = s->def->loc;
          if (const Symbol* old = scope_->lookupLocal(s->def->name)) {
            report(DiagKind::Redefinition, s->def->loc, "`" + s->def->name + "` is already defined")
                .note(old->declLoc, "first defined here");
            continue;
          }
          bindName(s->def->name, s->def->loc, v);
        }
        continue;
      case ast::StmtKind::Assign:
        // Python rebinds: the new value replaces the old for what follows.
        if (s->target && s->target->kind == ast::ExprKind::Name) scope_->erase(s->target->name);
        lowerAssign(*s);
        continue;
      case ast::StmtKind::Assert:
        if (!checkAssert(*s)) return nullptr;
        continue;
      case ast::StmtKind::If: {
        std::optional<bool> taken = s->value ? constBool(*s->value, "the condition of an `if` in a kernel factory")
                                             : std::nullopt;
        if (!taken) return nullptr;
        if (const ast::FuncDef* kernel = lowerFactoryBlock(factory, *taken ? s->body : s->orelse, m)) return kernel;
        continue;
      }
      case ast::StmtKind::Pass: continue;
      case ast::StmtKind::Return: {
        const ast::Expr* e = s->value.get();
        while (e->kind == ast::ExprKind::IfElse) {
          std::optional<bool> c = constBool(*e->operands[1], "the condition of the returned `... if ... else ...`");
          if (!c) return nullptr;
          e = (*c ? e->operands[0] : e->operands[2]).get();
        }
        return findPrimFunc(factory, e->name);
      }
      default:
        report(DiagKind::BadKernelFactory, s->loc,
               "a kernel factory's body holds assignments, definitions, `if`s and `assert`s on its parameters, and "
               "its `return`; kernel code goes in the `@T.prim_func`");
        continue;
    }
  }
  return nullptr;
}

// `assert cond, "message"` in a factory or a kernel: the condition folds at
// compile time; a false one is an error at the assert, with the message.
bool Sema::checkAssert(const ast::Stmt& s) {
  std::optional<bool> holds = constBool(*s.value, "the condition of `assert`");
  if (!holds) return false;
  if (*holds) return true;
  std::string message;
  if (s.target) {
    Value v = eval(*s.target);
    if (v.kind == ValueKind::String) message = ": " + v.str;
  }
  report(DiagKind::AssertionFailed, s.loc, "assertion failed with these compile-time parameters" + message);
  return false;
}

// TileLang's `memory_order=`: tlc's atomics are relaxed.
bool Sema::checkMemoryOrder(const std::string& fname, const ast::Expr& order) {
  Value v = eval(order);
  if (v.isError()) return false;
  if (v.kind == ValueKind::String && v.str == "relaxed") return true;
  report(DiagKind::TypeMismatch, order.loc,
         "`" + fname + "` is a relaxed atomic on every target: `memory_order` may only be \"relaxed\", but this is " +
             (v.kind == ValueKind::String ? "\"" + v.str + "\"" : describeValue(v)) +
             "; order other memory accesses with the kernel's structure (a second kernel launched after this one)");
  return false;
}

// `A_s: T.SharedBuffer((block_M, block_K), dtype)` on a macro parameter:
// the argument is a buffer (or a region) of that scope, rank, dtype and, for
// constant dimensions, extents.
bool Sema::checkMacroAnnotation(const ast::Param& p, const Value& arg) {
  if (!p.annotation || arg.isError()) return true;
  bool failed = false;
  std::optional<BufferType> type = bufferTypeOf(*p.annotation, failed);
  if (failed) return false;
  if (!type) return true;  // a scalar annotation documents the parameter
  if (arg.kind != ValueKind::Buffer && arg.kind != ValueKind::Region) {
    report(DiagKind::TypeMismatch, arg.loc,
           "macro parameter `" + p.name + "` is a buffer (`" + type->name + "`), but the argument is " +
               describeValue(arg))
        .note(p.loc, "`" + p.name + "` declared here");
    return false;
  }
  const ir::Buffer& buf = arg.kind == ValueKind::Buffer ? arg.buffer : arg.region.buffer;
  std::optional<ir::MemScope> scope;
  switch (type->id) {
    case BuiltinId::SharedBuffer: scope = ir::MemScope::Shared; break;
    case BuiltinId::FragmentBuffer: scope = ir::MemScope::Fragment; break;
    case BuiltinId::LocalBuffer: scope = ir::MemScope::Local; break;
    default: break;  // Tensor / Buffer: any scope, as TileLang's T.Buffer
  }
  if (scope && buf->scope != *scope) {
    report(DiagKind::ScopeViolation, arg.loc,
           "macro parameter `" + p.name + "` is a `T." + type->name + "`, but `" + buf->name + "` is a " +
               ir::memScopeName(buf->scope) + " buffer")
        .note(p.loc, "`" + p.name + "` declared here")
        .note(buf->loc, "`" + buf->name + "` declared here");
    return false;
  }
  std::optional<DType> dt = evalDType(*type->dtype, "the element type of `" + p.name + "`");
  if (!dt) return false;
  if (*dt != buf->dtype) {
    report(DiagKind::TypeMismatch, arg.loc,
           "macro parameter `" + p.name + "` holds " + std::string(dtypeName(*dt)) + ", but `" + buf->name +
               "` holds " + std::string(dtypeName(buf->dtype)))
        .note(p.loc, "`" + p.name + "` declared here");
    return false;
  }
  std::vector<ir::Expr> shape = bufferTypeShape(*type->shape);
  if (shape.empty()) return false;
  std::vector<ir::Expr> actual = buf->shape;
  if (arg.kind == ValueKind::Region && !arg.region.isPoint) actual = arg.region.extents;
  bool match = shape.size() == actual.size();
  for (size_t d = 0; match && d < shape.size(); ++d) {
    auto want = constIntValue(shape[d]), have = constIntValue(actual[d]);
    if (want && have && *want != *have) match = false;
  }
  if (!match) {
    report(DiagKind::ShapeMismatch, arg.loc,
           "macro parameter `" + p.name + "` has shape " + formatShape(shape) + ", but the argument has shape " +
               formatShape(actual))
        .note(p.loc, "`" + p.name + "` declared here");
    return false;
  }
  return true;
}

// tlc picks each copy's and loop's vector width from the tile's layout and
// alignment, so a width is only checked.
bool Sema::checkCoalescedWidth(const ast::Expr* width) {
  if (!width) return true;
  auto w = constInt(*width, "`coalesced_width`");
  if (!w) return false;
  if (*w < 1) {
    report(DiagKind::OutOfRange, width->loc, "`coalesced_width` must be positive, but it is " + std::to_string(*w));
    return false;
  }
  return true;
}

// The CUDA backend chooses the warp grid of each tensor-core gemm from the
// tile shape and thread count; a policy is checked and has no other effect.
bool Sema::checkWarpPolicy(const ast::Expr* policy) {
  if (!policy) return true;
  Value v = eval(*policy);
  if (v.isError()) return false;
  if (v.kind != ValueKind::String || v.str.rfind("GemmWarpPolicy.", 0) != 0) {
    report(DiagKind::TypeMismatch, policy->loc,
           "`policy` of `T.gemm` is `T.GemmWarpPolicy.Square`, `.FullRow` or `.FullCol`, but this is " +
               describeValue(v));
    return false;
  }
  return true;
}

// tlc's shared memory is always sized at launch, so "shared" and
// "shared.dyn" are the same scope.
bool Sema::checkAllocScope(const BuiltinInfo& alloc, const ast::Expr* scope) {
  if (!scope) return true;
  Value v = eval(*scope);
  if (v.isError()) return false;
  std::vector<std::string> allowed;
  switch (alloc.id) {
    case BuiltinId::AllocShared: allowed = {"shared", "shared.dyn"}; break;
    // TileLang's `T.alloc_fragment(shape, dtype, "local")` is a thread's own buffer (`T.alloc_local`).
    case BuiltinId::AllocFragment: allowed = {"local.fragment", "local"}; break;
    default: allowed = {"local"}; break;
  }
  for (const std::string& a : allowed)
    if (v.kind == ValueKind::String && v.str == a) return true;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "\"" : " or \"") + a + "\"";
  report(DiagKind::TypeMismatch, scope->loc,
         "`scope` of `T." + std::string(alloc.name) + "` is " + list + ", but this is " +
             (v.kind == ValueKind::String ? "\"" + v.str + "\"" : describeValue(v)));
  return false;
}

}  // namespace tlc::sema
