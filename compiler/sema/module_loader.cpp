// Modules: the compiled file and the stdlib modules it imports.
//
// A module's scope binds its macros and kernels by name, and the names its
// imports introduce. `import tilelang.language as T` (and `import tilelang`,
// `from tilelang.autotuner import *`) are accepted so pasted TileLang code
// keeps working: they bind the builtin namespace (which `tilelang` names even without the import). Import cycles are harmless: a module is registered before its
// own imports are processed, and macro bodies are resolved only when called.
#include <filesystem>

#include "compiler/parser/parser.h"
#include "compiler/sema/sema.h"
#include "compiler/support/suggest.h"

namespace tlc::sema {

// `tilelang` and its submodules (`tilelang.language`, `tilelang.autotuner`,
// ...) name the builtin namespace; so do TVM's `tvm` and `tvm.tir`, whose
// `tir.const`, `tir.reinterpret` and `tir.Select` TileLang's helpers call.
static bool isTileLangModule(const std::string& name) {
  return name == "tilelang" || name.rfind("tilelang.", 0) == 0 || name == "T" || name == "tvm" ||
         name.rfind("tvm.", 0) == 0;
}

ModuleInfo* Sema::loadModule(const std::string& name, uint32_t file, std::unique_ptr<ast::Module> ast) {
  auto m = std::make_unique<ModuleInfo>();
  m->name = name;
  m->file = file;
  m->ast = std::move(ast);
  m->scope = std::make_unique<Scope>(nullptr, true);
  ModuleInfo* raw = m.get();
  modules_.push_back(std::move(m));
  if (!name.empty()) modulesByName_[name] = raw;
  return raw;
}

const ModuleInfo* Sema::importModule(const std::string& name, SourceLoc loc, uint32_t fromFile) {
  if (auto it = modulesByName_.find(name); it != modulesByName_.end()) return it->second;
  namespace fs = std::filesystem;
  std::string rel = name;
  for (char& c : rel)
    if (c == '.') c = '/';
  rel += ".tl";
  std::vector<std::string> dirs = stdlibSearchPath(sources_, fromFile);
  for (const std::string& dir : dirs) {
    fs::path path = fs::path(dir) / rel;
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    std::string error;
    uint32_t file = 0;
    if (fs::is_regular_file(path, ec))
      file = sources_.addFile(path.string(), error);
    else
      error = "it is not a regular file";
    if (file == 0) {
      report(DiagKind::FileNotReadable, loc, "cannot read module `" + name + "` from " + path.string() + ": " + error);
      return nullptr;
    }
    std::unique_ptr<ast::Module> ast = parseModule(sources_, diags_, file);
    ModuleInfo* m = loadModule(name, file, std::move(ast));
    declareModule(*m);
    return m;
  }
  std::string searched;
  for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  report(DiagKind::ImportNotFound, loc, "no module `" + name + "`: `" + rel + "` is not in the stdlib search path")
      .note(loc, "searched: " + searched + " (set TLC_STDLIB_PATH to add directories)");
  return nullptr;
}

// `import a.b.c` binds `a` to a package whose scope binds `b`, and so on,
// so that `a.b.c.f` resolves as in Python.
void Sema::bindDotted(ModuleInfo& m, const std::string& dotted, const Value& leaf, SourceLoc loc) {
  Scope* scope = m.scope.get();
  size_t start = 0;
  std::string prefix;
  while (true) {
    size_t dot = dotted.find('.', start);
    std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    prefix += (prefix.empty() ? "" : ".") + part;
    if (dot == std::string::npos) {
      if (!scope->lookupLocal(part)) scope->define(part, Symbol{leaf, loc, false});
      return;
    }
    const Symbol* sym = scope->lookupLocal(part);
    if (!sym) {
      ModuleInfo* pkg = loadModule("", 0, nullptr);
      pkg->name = prefix;
      Value v;
      v.kind = ValueKind::Module;
      v.module = pkg;
      v.loc = loc;
      scope->define(part, Symbol{v, loc, false});
      sym = scope->lookupLocal(part);
    }
    if (sym->value.kind != ValueKind::Module || !sym->value.module) {
      report(DiagKind::Redefinition, loc, "`" + part + "` is already defined and is not a package")
          .note(sym->declLoc, "`" + part + "` defined here");
      return;
    }
    scope = sym->value.module->scope.get();
    start = dot + 1;
  }
}

void Sema::declareModule(ModuleInfo& m) {
  Scope& scope = *m.scope;
  auto bind = [&](const std::string& name, Value v, SourceLoc loc) {
    if (const Symbol* old = scope.lookupLocal(name)) {
      report(DiagKind::Redefinition, loc, "`" + name + "` is already defined in this module")
          .note(old->declLoc, "`" + name + "` first defined here");
      return;
    }
    scope.define(name, Symbol{std::move(v), loc, false});
  };
  for (const ast::Import& imp : m.ast->imports) {
    // `from tilelang.autotuner import *`: builtins resolve without it.
    if (imp.names.size() == 1 && imp.names[0] == "*") {
      if (!isTileLangModule(imp.module))
        report(DiagKind::UnsupportedSyntax, imp.loc,
               "`from " + imp.module + " import *` is not supported; name the macros you import");
      continue;
    }
    Value modValue;
    modValue.kind = ValueKind::Module;
    modValue.loc = imp.loc;
    if (isTileLangModule(imp.module)) {
      modValue.module = nullptr;
    } else {
      const ModuleInfo* target = importModule(imp.module, imp.loc, m.file);
      if (!target) {
        // Bind the names anyway so their uses do not report again.
        if (imp.names.empty()) bind(imp.alias.empty() ? imp.module : imp.alias, Value::error(imp.loc), imp.loc);
        for (const std::string& n : imp.names) bind(n, Value::error(imp.loc), imp.loc);
        continue;
      }
      modValue.module = target;
      for (const std::string& n : imp.names) {
        const Symbol* sym = target->scope->lookupLocal(n);
        if (!sym || sym->value.kind != ValueKind::Macro) {
          report(DiagKind::UndefinedName, imp.loc, "module `" + imp.module + "` has no macro `" + n + "`");
          bind(n, Value::error(imp.loc), imp.loc);
          continue;
        }
        bind(n, sym->value, imp.loc);
      }
    }
    if (imp.names.empty()) {
      if (!imp.alias.empty() || isTileLangModule(imp.module) || imp.module.find('.') == std::string::npos) {
        std::string bound = imp.alias;
        if (bound.empty()) bound = imp.module == "tilelang.language" ? "T" : imp.module;
        bind(bound, modValue, imp.loc);
      } else {
        bindDotted(m, imp.module, modValue, imp.loc);
      }
    } else if (isTileLangModule(imp.module)) {
      for (const std::string& n : imp.names) {
        // `from tvm import tir`, `from tilelang import language`: the namespace itself.
        if (n == "tir" || n == "language" || n == "tl") {
          bind(n, modValue, imp.loc);
          continue;
        }
        const BuiltinInfo* b = findBuiltin(n);
        if (!b) {
          std::vector<std::string> builtins;
          for (const BuiltinInfo& info : allBuiltins()) builtins.push_back(info.name);
          report(DiagKind::UndefinedName, imp.loc,
                 "`" + imp.module + "` has no builtin `" + n + "`" + didYouMean(n, builtins));
          continue;
        }
        Value v;
        v.kind = ValueKind::Builtin;
        v.builtin = b;
        v.loc = imp.loc;
        bind(n, v, imp.loc);
      }
    }
  }
  // An imported module's numeric constants (`pi = 3.14159...`) are its
  // attributes (`math.pi`); the compiled file's globals are bound per kernel
  // (bindGlobals).
  if (!m.name.empty())
    for (const ast::StmtPtr& g : m.ast->globals) {
      if (!g || g->kind != ast::StmtKind::Assign || !g->target || g->target->kind != ast::ExprKind::Name ||
          !g->value)
        continue;
      const ast::Expr* v = g->value.get();
      bool negative = v->kind == ast::ExprKind::Unary && v->unaryOp == ast::UnaryOp::Neg && !v->operands.empty();
      if (negative) v = v->operands[0].get();
      if (!v || (v->kind != ast::ExprKind::Int && v->kind != ast::ExprKind::Float)) continue;
      Value c = eval(*g->value);
      if (!c.isError()) bind(g->target->name, c, g->target->loc);
    }
  classifyDefinitions(m);
  for (const auto& f : m.ast->funcs) {
    Value v;
    v.kind = ValueKind::Macro;
    v.func = f.get();
    v.funcModule = &m;
    v.loc = f->loc;
    bind(f->name, v, f->loc);
  }
}

}  // namespace tlc::sema
