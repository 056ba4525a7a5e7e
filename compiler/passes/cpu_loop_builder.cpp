#include "compiler/passes/cpu_loop_builder.h"

#include "compiler/passes/cpu_index_math.h"

namespace tlc::cpu {

using namespace ir;

Stmt makeFor(const Var& v, Expr min, Expr extent, ForKind kind, Stmt body, SourceLoc loc) {
  return std::make_shared<const ForStmt>(v, std::move(min), std::move(extent), kind, std::move(body), loc);
}

Stmt buildLoopNest(const std::vector<LoopDim>& dims, ForKind kind,
                   const std::function<Stmt(const std::vector<Expr>&)>& body, SourceLoc loc) {
  std::vector<Var> vars;
  std::vector<Expr> refs;
  for (const LoopDim& d : dims) {
    Var v = makeVar(d.name, d.lo->dtype == d.hi->dtype ? d.lo->dtype : promote(d.lo->dtype, d.hi->dtype), loc);
    vars.push_back(v);
    refs.push_back(makeVarRef(v, loc));
  }
  Stmt s = body(refs);
  for (size_t k = dims.size(); k-- > 0;) {
    Expr lo = dims[k].lo, hi = dims[k].hi;
    DType t = vars[k]->dtype;
    int64_t c;
    if (lo->dtype != t) lo = constInt(lo, &c) ? makeInt(c, t) : makeCast(t, lo);
    if (hi->dtype != t) hi = constInt(hi, &c) ? makeInt(c, t) : makeCast(t, hi);
    s = makeFor(vars[k], lo, sub(hi, lo), kind, s, loc);
  }
  return s;
}

Expr zeroOf(DType t) {
  if (t == DType::Bool) return makeBool(false);
  if (isFloat(t)) return makeFloat(0.0, t);
  return makeInt(0, t);
}

Stmt guarded(const Expr& cond, Stmt then, SourceLoc loc) {
  if (isTrue(cond)) return then;
  return std::make_shared<const IfStmt>(cond, std::move(then), nullptr, loc);
}

}  // namespace tlc::cpu
