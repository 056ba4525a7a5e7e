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
//     compiles ahead of time and the caller passes every tensor.
// The same file reads TileLang's dtype strings and checks macro parameters
// typed `T.SharedBuffer(shape, dtype)` and the like.
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

std::string decoratorName(BuiltinId id) {
  switch (id) {
    case BuiltinId::PrimFunc: return "`@T.prim_func`";
    case BuiltinId::MacroDecorator: return "`@T.macro`";
    case BuiltinId::Tune: return "`@T.tune`";
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
  if (d.kind == ast::ExprKind::Call && id != BuiltinId::Jit && id != BuiltinId::Tune) {
    report(DiagKind::BadDecorator, d.loc, decoratorName(id) + " takes no arguments");
    return std::nullopt;
  }
  return id;
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
    for (size_t k = 0; k < decorators.size(); ++k) {
      const auto& [id, loc] = decorators[k];
      if (id == BuiltinId::Jit) {
        jit = &loc;
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
    if (jit && !bad && info.form != DefForm::Invalid)
      diags_.report(DiagKind::IgnoredDecorator, *jit,
                    "`@tilelang.jit` is ignored: tlc compiles the kernel ahead of time (`tlc build`, `tlc run`, "
                    "`--target`), and the caller passes every tensor, outputs included (`out_idx` has no effect)");
    if (bad) info.form = def.isMacro ? DefForm::Macro : DefForm::Invalid;
    defForms_[&def] = info;
  }
  scope_ = saved;
}

// A factory's nested definitions: one `@T.prim_func` (the kernel) and any
// number of macros; its `return` names the prim_func.
void Sema::classifyFactory(ast::FuncDef& def, DefInfo& info) {
  bool ok = true;
  const ast::Stmt* ret = nullptr;
  for (const ast::StmtPtr& s : def.body) {
    if (!s) continue;
    if (s->kind == ast::StmtKind::Return) ret = s.get();
    if (!isDef(*s)) continue;
    ast::FuncDef& inner = *s->def;
    bool primFunc = false, macro = inner.isMacro;
    for (const ast::ExprPtr& d : inner.decorators) {
      auto id = evalDecorator(*d);
      if (!id) {
        ok = false;
      } else if (*id == BuiltinId::Jit || *id == BuiltinId::Tune) {
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
      if (info.primFunc) {
        report(DiagKind::BadKernelFactory, inner.loc,
               "kernel factory `" + def.name + "` defines a second `@T.prim_func`; a factory makes one kernel")
            .note(info.primFunc->loc, "the first `@T.prim_func` is here");
        ok = false;
      } else {
        info.primFunc = &inner;
      }
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
  const std::string& kernel = info.primFunc->name;
  if (!ret || !ret->value || ret->value->kind != ast::ExprKind::Name || ret->value->name != kernel) {
    Diagnostic& d = report(DiagKind::BadKernelFactory, ret ? ret->loc : def.loc,
                           "kernel factory `" + def.name + "` must return its `@T.prim_func`: end it with `return " +
                               kernel + "`");
    d.note(info.primFunc->loc, "`" + kernel + "` defined here");
    ok = false;
  }
  if (!ok) info.form = DefForm::Invalid;
}

// The factory's own statements, in the factory's scope: assignments bind
// compile-time values (`shape = [M, N]`, `accum_dtype = "float"`), macros
// are bound so that they see those names.
void Sema::lowerFactoryPrelude(const ast::FuncDef& factory, ModuleInfo& m) {
  for (const ast::StmtPtr& s : factory.body) {
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
      case ast::StmtKind::Assign: lowerAssign(*s); continue;
      case ast::StmtKind::Pass:
      case ast::StmtKind::Return: continue;
      default:
        report(DiagKind::BadKernelFactory, s->loc,
               "a kernel factory's body holds assignments, definitions and its `return`; kernel code goes in the "
               "`@T.prim_func`");
        continue;
    }
  }
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
    case BuiltinId::AllocFragment: allowed = {"local.fragment"}; break;
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
