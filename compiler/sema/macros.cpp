// Macro expansion.
//
// A macro call is inlined: arguments are evaluated in the caller's scope,
// buffers and regions are passed by reference, scalars by value (a runtime
// scalar is bound once with a LetStmt so the macro sees the value at the
// call). The body is lowered in a fresh frame whose parent is the scope of
// the macro's own module (for a macro defined in a kernel factory, the
// factory's scope), so it sees its parameters, its module's macros and
// imports, and never the caller's locals. A parameter's default is evaluated
// in that scope; a parameter typed `T.SharedBuffer(...)` and the like is
// checked against its argument (checkMacroAnnotation). Its statements go into the
// caller's block. A final `return expr` gives the call its value.
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

Value Sema::callMacro(const Value& callee, const ast::Expr& call) {
  const ast::FuncDef& macro = *callee.func;
  if (failedMacros_.count(&macro)) return Value::error(call.loc);
  for (const MacroFrame& f : macroStack_) {
    if (f.macro == &macro) {
      report(DiagKind::MacroRecursion, call.loc,
             "macro `" + macro.name + "` calls itself (directly or through other macros); macros are inlined, so they "
                                      "cannot recurse")
          .note(macro.loc, "`" + macro.name + "` defined here");
      return Value::error(call.loc);
    }
  }
  if (macroStack_.size() >= kMaxMacroDepth) {
    report(DiagKind::MacroRecursion, call.loc,
           "macro expansion nested deeper than " + std::to_string(kMaxMacroDepth) + " levels: " + macroChain(macro) +
               "; macros are inlined, so call chains this deep must be flattened (call the inner macros directly, or "
               "turn a level into a loop)")
        .note(macroStack_.front().callLoc, "the outermost macro call is here");
    return Value::error(call.loc);
  }
  if (++macroExpansions_ > kMaxMacroExpansions) {
    if (macroExpansions_ == kMaxMacroExpansions + 1)
      report(DiagKind::MacroRecursion, call.loc,
             "more than " + std::to_string(kMaxMacroExpansions) +
                 " macro expansions in one kernel; macros that call other macros several times grow exponentially")
          .note(macro.loc, "`" + macro.name + "` defined here");
    return Value::error(call.loc);
  }
  std::vector<std::string> names;
  for (const ast::Param& p : macro.params) names.push_back(p.name);
  std::vector<const char*> params;
  for (const std::string& n : names) params.push_back(n.c_str());
  int required = 0;
  while (required < static_cast<int>(params.size()) && !macro.params[required].defaultValue) ++required;
  CallArgs args;
  if (!matchArgs(call, macro.name, params, required, false, args)) return Value::error(call.loc);
  Scope* lexical = callee.funcScope ? callee.funcScope
                                    : (callee.funcModule ? callee.funcModule : module_)->scope.get();

  std::vector<Value> values;
  bool ok = true;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!args.slots[i]) {
      const ast::Expr* def = macro.params[i].defaultValue.get();
      if (!def) {
        report(DiagKind::WrongArgumentCount, call.loc, "`" + macro.name + "` is missing its argument `" + names[i] + "`");
        ok = false;
        continue;
      }
      Scope* saved = scope_;
      scope_ = lexical;
      values.push_back(eval(*def));
      scope_ = saved;
      if (values.back().isError()) ok = false;
      continue;
    }
    const ast::Expr& a = *args.slots[i];
    bool hasSlice = false;
    if (a.kind == ast::ExprKind::Subscript)
      for (size_t k = 1; k < a.operands.size(); ++k)
        hasSlice = hasSlice || (a.operands[k] && a.operands[k]->kind == ast::ExprKind::Slice);
    Value v = hasSlice ? evalTileArg(a, "copy") : eval(a);
    if (v.isError()) ok = false;
    Scope* saved = scope_;
    scope_ = lexical;  // annotations name the macro's own scope (`T.SharedBuffer((block_M, K), dtype)`)
    if (!checkMacroAnnotation(macro.params[i], v)) ok = false;
    scope_ = saved;
    if (v.isExpr() && !isConstant(v.expr) && !ir::as<ir::VarRef>(v.expr)) {
      ir::Var var = freshVar(names[i], v.expr->dtype, a.loc);
      bindLet(var, v.expr, a.loc);
      v = Value::ofExpr(ir::makeVarRef(var, a.loc), a.loc, false);
    }
    values.push_back(v);
  }
  if (!ok) return Value::error(call.loc);

  if (macro.compileParams.size()) {
    report(DiagKind::NotCallable, macro.compileParams.front().loc,
           "macros take no compile-time parameters; pass the values as arguments")
        .note(call.loc, "called here");
    return Value::error(call.loc);
  }

  ModuleInfo* savedModule = module_;
  ScopeGuard guard(*this, true, lexical);
  for (size_t i = 0; i < values.size(); ++i) bindName(names[i], macro.params[i].loc, values[i]);
  int errorsBefore = diags_.errorCount();
  macroStack_.push_back(MacroFrame{&macro, call.loc, false, Value()});
  // A macro's break or continue belongs to a loop of the macro.
  std::vector<LoopFrame> callerLoops = std::move(loops_);
  loops_.clear();
  Value result;
  result.kind = ValueKind::None;
  result.loc = call.loc;
  for (size_t i = 0; i < macro.body.size(); ++i) {
    const ast::Stmt* s = macro.body[i].get();
    if (!s) continue;
    if (s->kind == ast::StmtKind::Return && i + 1 == macro.body.size()) {
      if (s->value) {
        result = eval(*s->value);
        result.loc = call.loc;
      }
      continue;
    }
    lowerStmt(*s);
  }
  loops_ = std::move(callerLoops);
  macroStack_.pop_back();
  module_ = savedModule;
  if (diags_.errorCount() != errorsBefore) failedMacros_.insert(&macro);
  return result;
}

// `m0 → m1 → … → m63 → m64` for the macro stack plus `next`: the first and
// last few names of a long chain.
std::string Sema::macroChain(const ast::FuncDef& next) const {
  std::vector<const std::string*> names;
  for (const MacroFrame& f : macroStack_) names.push_back(&f.macro->name);
  names.push_back(&next.name);
  constexpr size_t kShown = 3;
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names.size() > 2 * kShown + 1 && i == kShown) {
      out += " → …";
      i = names.size() - kShown - 1;
      continue;
    }
    out += (i ? " → " : "") + *names[i];
  }
  return out;
}

}  // namespace tlc::sema
