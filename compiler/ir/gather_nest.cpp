#include "compiler/ir/gather_nest.h"

#include "compiler/ir/buffer_writes.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/var_uses.h"

namespace tlc::ir {

std::optional<GatherNest> gatherNest(const Stmt& s, const ForStmt* loop) {
  GatherNest g;
  Stmt cur = s;
  while (auto* f = as<ForStmt>(cur)) {
    if (f->forKind != ForKind::Parallel) return std::nullopt;
    g.loops.push_back(f);
    cur = f->body;
  }
  if (g.loops.empty()) return std::nullopt;
  g.outer = g.loops.front();
  while (auto* l = as<LetStmt>(cur)) {
    g.lets.push_back(l);
    cur = l->body;
  }
  g.store = as<StoreStmt>(cur);
  if (!g.store) return std::nullopt;
  const Buffer& tile = g.store->buffer;
  if (tile->scope != MemScope::Shared || tile->shape.size() != g.loops.size()) return std::nullopt;
  for (size_t d = 0; d < g.loops.size(); ++d) {
    int64_t extent = 0, min = -1, size = 0;
    auto* r = as<VarRef>(g.store->indices[d]);
    if (!r || r->var != g.loops[d]->var || !constInt(g.loops[d]->min, &min) || min != 0 ||
        !constInt(g.loops[d]->extent, &extent) || !constInt(tile->shape[d], &size) || extent != size)
      return std::nullopt;
  }
  g.tile = tile.get();
  // What the nest reads: only tables of `loop`, at values that do not change
  // with `loop`'s body (its variables besides the nest's own).
  BoundVars inLoop, inNest;
  inLoop.visit(loop->body);
  inNest.visit(s);
  std::unordered_set<const VarNode*> outside;
  for (const VarNode* v : inLoop.vars)
    if (!inNest.vars.count(v)) outside.insert(v);
  UsesVars uses(outside);
  for (const LetStmt* l : g.lets) uses.visit(l->value);
  uses.visit(g.store->value);
  if (uses.found || !uses.loadsOnlyTablesOf(loop->body)) return std::nullopt;
  return g;
}

Stmt copyAsGatherNest(const CopyStmt* c) {
  const Region &src = c->src, &dst = c->dst;
  const Buffer& tile = dst.buffer;
  if (src.buffer->scope != MemScope::Global || tile->scope != MemScope::Shared || !isFullRegion(dst)) return nullptr;
  std::vector<int> sd = nonUnitDims(src), dd = nonUnitDims(dst);
  if (sd.size() != dd.size()) return nullptr;
  for (size_t k = 0; k < sd.size(); ++k) {
    int64_t a = 0, b = 0;
    if (!constInt(src.ranges[sd[k]].extent, &a) || !constInt(tile->shape[dd[k]], &b) || a != b) return nullptr;
  }
  std::vector<Var> vars;
  for (size_t d = 0; d < tile->shape.size(); ++d) vars.push_back(makeVar(tile->name + "_i" + std::to_string(d)));
  std::vector<Expr> srcIdx, dstIdx;
  for (const Range& r : src.ranges) srcIdx.push_back(r.min);
  for (size_t k = 0; k < sd.size(); ++k) srcIdx[sd[k]] = add(src.ranges[sd[k]].min, makeVarRef(vars[dd[k]]));
  for (const Var& v : vars) dstIdx.push_back(makeVarRef(v));
  // Inside the source: each index in [0, extent).
  Expr inside;
  for (size_t d = 0; d < srcIdx.size(); ++d) {
    Expr e = srcIdx[d], n = src.buffer->shape[d];
    if (e->dtype != n->dtype) {
      DType t = promote(e->dtype, n->dtype);
      e = makeCast(t, e);
      n = makeCast(t, n);
    }
    Expr term = logicalAnd(makeBinary(BinaryOp::Ge, e, makeInt(0, e->dtype)), lt(e, n));
    inside = inside ? logicalAnd(inside, term) : term;
  }
  Expr value = makeLoad(src.buffer, srcIdx, c->loc);
  if (value->dtype != tile->dtype) value = makeCast(tile->dtype, value, c->loc);
  Expr zero = isFloat(tile->dtype) ? makeFloat(0.0, tile->dtype) : makeInt(0, tile->dtype);
  if (inside) value = makeSelect(inside, value, zero, c->loc);
  Stmt nest = std::make_shared<const StoreStmt>(tile, dstIdx, value, c->loc);
  for (size_t d = tile->shape.size(); d-- > 0;)
    nest = std::make_shared<const ForStmt>(vars[d], makeInt(0), tile->shape[d], ForKind::Parallel, nest, c->loc);
  return nest;
}

}  // namespace tlc::ir
