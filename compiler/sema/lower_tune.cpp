// Tuning spaces (docs/tuning.md):
//
//   @T.tune(block_M=[64, 128, 256], stages=range(2, 5),
//           where=[block_M * block_N <= 32768, block_K * stages <= 256])
//   def gemm[M, N, K, block_M=128, block_N=128, block_K=32, stages=3, ...](...):
//
// Each keyword but `where` names an integer or bool compile-time parameter
// of the kernel that has a value (its default, or -D) and lists its candidate
// values: constants, evaluated in the module's scope so that the space does
// not depend on the bindings. `where` holds conditions, evaluated here with
// this compilation's bindings: the tuner compiles each candidate with its
// values as -D and keeps it when every condition holds, so a condition sees
// exactly the values the candidate's kernel is built with (defaults computed
// from tuned parameters included).
#include <algorithm>

#include "compiler/parser/parser.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"
#include "compiler/support/suggest.h"

namespace tlc::sema {
namespace {

// How a parameter bound to `v` can be tuned.
enum class TunableKind { Int, Bool, Not };

TunableKind tunableKind(const Value& v) {
  if (!v.isExpr() || !constIntValue(v.expr)) return TunableKind::Not;
  if (v.expr->dtype == DType::Bool) return TunableKind::Bool;
  return isFloat(v.expr->dtype) ? TunableKind::Not : TunableKind::Int;
}

// The value as `-D` spells it.
std::string defineText(const Value& v) {
  int64_t c = *constIntValue(v.expr);
  if (v.expr->dtype == DType::Bool) return c ? "True" : "False";
  return std::to_string(c);
}

}  // namespace

std::optional<std::vector<std::string>> Sema::tuneCandidates(const ast::Expr& list, const std::string& name,
                                                             bool isBool) {
  const char* kind = isBool ? "True or False" : "an integer constant";
  std::vector<std::string> out;
  std::vector<SourceLoc> locs;
  auto add = [&](const std::string& text, SourceLoc loc) {
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] == text) {
        report(DiagKind::BadTuneSpace, loc, "candidate " + text + " of `" + name + "` is listed twice")
            .note(locs[i], "first listed here");
        return false;
      }
    out.push_back(text);
    locs.push_back(loc);
    return true;
  };
  // The candidates are constants: evaluated where the kernel is defined, not
  // with its bindings.
  Scope* saved = scope_;
  scope_ = module_->scope.get();
  bool ok = true;
  if (list.kind == ast::ExprKind::Call && !list.operands.empty()) {
    Value callee = eval(*list.operands[0]);
    if (callee.isError()) {
      ok = false;
    } else if (callee.kind != ValueKind::Builtin || callee.builtin->id != BuiltinId::Range || isBool ||
               !list.keywords.empty() || list.operands.size() < 2 || list.operands.size() > 4) {
      report(DiagKind::BadTuneSpace, list.loc,
             "the candidates of `" + name + "` are a list (`" + name + "=[64, 128]`)" +
                 (isBool ? "" : " or a range (`" + name + "=range(2, 5)`, `range(64, 257, 64)`)"));
      ok = false;
    } else {
      std::vector<int64_t> args;
      for (size_t i = 1; i < list.operands.size() && ok; ++i) {
        auto c = constInt(*list.operands[i], "an argument of the range of `" + name + "`");
        if (c) args.push_back(*c);
        else ok = false;
      }
      if (ok) {
        int64_t lo = args.size() == 1 ? 0 : args[0], hi = args.size() == 1 ? args[0] : args[1];
        int64_t step = args.size() == 3 ? args[2] : 1;
        if (step <= 0) {
          report(DiagKind::BadTuneSpace, list.loc, "the range of `" + name + "` needs a positive step");
          ok = false;
        }
        for (int64_t v = lo; ok && v < hi; v += step) {
          if (out.size() >= 4096) {
            report(DiagKind::BadTuneSpace, list.loc, "the range of `" + name + "` has more than 4096 values");
            ok = false;
            break;
          }
          add(std::to_string(v), list.loc);
        }
      }
    }
  } else if (list.kind == ast::ExprKind::Tuple) {
    for (const ast::ExprPtr& e : list.operands) {
      Value v = eval(*e);
      if (v.isError()) {
        ok = false;
        continue;
      }
      TunableKind k = tunableKind(v);
      if (k != (isBool ? TunableKind::Bool : TunableKind::Int)) {
        report(DiagKind::BadTuneSpace, e->loc,
               "a candidate of `" + name + "` must be " + kind + ", like its value, but this is " + describeValue(v));
        ok = false;
        continue;
      }
      ok = add(defineText(v), e->loc) && ok;
    }
  } else {
    report(DiagKind::BadTuneSpace, list.loc,
           "the candidates of `" + name + "` are a list: `" + name + (isBool ? "=[False, True]`" : "=[64, 128]`"));
    ok = false;
  }
  scope_ = saved;
  if (!ok) return std::nullopt;
  if (out.empty()) {
    report(DiagKind::BadTuneSpace, list.loc, "`" + name + "` has no candidate values: list at least one");
    return std::nullopt;
  }
  return out;
}

std::optional<TuneCondition> Sema::tuneCondition(const ast::Expr& cond) {
  Value v = eval(cond);
  if (v.isError()) return std::nullopt;
  ir::Expr b = expectBool(v, "a tuning condition");
  if (!b) return std::nullopt;
  std::optional<int64_t> c = constIntValue(b);
  if (!c) {
    report(DiagKind::BadTuneSpace, cond.loc,
           "a tuning condition must be decided at compile time, from compile-time parameters; this one depends on "
           "values known only when the kernel runs (a dynamic dimension or a runtime parameter)");
    return std::nullopt;
  }
  return TuneCondition{sourceText(cond.loc, "condition"), cond.loc, *c != 0};
}

void Sema::lowerTuneSpace(const ast::Expr* decl, const std::vector<std::pair<std::string, SourceLoc>>& compileNames,
                          const ir::PrimFunc& fn) {
  if (!decl && !tuning_) return;
  TuneSpace space;
  space.kernel = fn.name;
  space.declared = decl != nullptr;
  space.loc = decl ? decl->loc : fn.loc;
  std::vector<std::string> names;
  for (const auto& [name, loc] : compileNames) {
    names.push_back(name);
    const Symbol* s = scope_->lookup(name);
    if (s && tunableKind(s->value) != TunableKind::Not) space.tunable.emplace_back(name, defineText(s->value));
  }
  bool ok = true;
  if (decl && (decl->kind != ast::ExprKind::Call || decl->operands.size() > 1)) {
    report(DiagKind::BadTuneSpace, decl->kind == ast::ExprKind::Call ? decl->operands[1]->loc : decl->loc,
           "`@T.tune` takes keyword arguments: the candidates of each tuned parameter and the conditions, "
           "`@T.tune(block_M=[64, 128], where=[block_M * block_N <= 32768])`");
    ok = false;
  }
  auto addCondition = [&](const ast::Expr& e) {
    if (auto c = tuneCondition(e)) space.conditions.push_back(*c);
    else ok = false;
  };
  if (decl && ok) {
    for (const ast::Keyword& kw : decl->keywords) {
      if (kw.name == "where") {
        if (kw.value->kind == ast::ExprKind::Tuple)
          for (const ast::ExprPtr& e : kw.value->operands) addCondition(*e);
        else
          addCondition(*kw.value);
        continue;
      }
      const Symbol* s = std::find(names.begin(), names.end(), kw.name) != names.end() ? scope_->lookup(kw.name) : nullptr;
      if (!s) {
        report(DiagKind::BadTuneSpace, kw.loc,
               "`" + kw.name + "` is not a compile-time parameter of `" + fn.name + "`" + didYouMean(kw.name, names))
            .note(fn.loc, "`" + fn.name + "` defined here");
        ok = false;
        continue;
      }
      TunableKind k = tunableKind(s->value);
      if (k == TunableKind::Not) {
        if (s->value.isError()) {
          ok = false;
          continue;
        }
        std::string why = s->value.kind == ValueKind::DType ? "a dtype changes what the kernel computes"
                          : s->value.isExpr() && !constIntValue(s->value.expr) && !isFloat(s->value.expr->dtype)
                              ? "it has no value here (a dynamic dimension, sized by the caller); a tuned parameter "
                                "needs a default, which builds without `--tuned` use"
                              : "only integer and bool parameters are tuned";
        report(DiagKind::BadTuneSpace, kw.loc, "`" + kw.name + "` cannot be tuned: " + why)
            .note(s->declLoc, "`" + kw.name + "` declared here");
        ok = false;
        continue;
      }
      auto values = tuneCandidates(*kw.value, kw.name, k == TunableKind::Bool);
      if (!values) {
        ok = false;
        continue;
      }
      space.params.push_back(TuneParam{kw.name, *values, kw.loc});
    }
  }
  if (!tuning_ || !ok) return;
  bool extra = tuning_->kernel.empty() ? tuning_->spaces.empty() : tuning_->kernel == fn.name;
  for (size_t i = 0; extra && i < tuning_->extraConditions.size(); ++i) {
    uint32_t file = sources_.addBuffer("<--where " + std::to_string(i + 1) + ">", tuning_->extraConditions[i] + "\n");
    ast::ExprPtr cond = parseExpressionFile(sources_, diags_, file);
    if (cond) addCondition(*cond);
  }
  tuning_->spaces.push_back(std::move(space));
}

}  // namespace tlc::sema
