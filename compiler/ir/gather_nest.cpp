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

}  // namespace tlc::ir
