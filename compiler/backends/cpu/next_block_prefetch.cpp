#include "compiler/backends/cpu/next_block_prefetch.h"

#include <optional>

#include "compiler/backends/cpu/contiguous_access.h"
#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/linear_form.h"

namespace tlc::cpu {

using namespace ir;

namespace {

bool sameAccess(const Load* a, const Load* b) {
  return a->buffer == b->buffer && structurallyEqual(a->indices, b->indices);
}

// The loads of an innermost Vectorized loop's body; nullopt when it is not one.
std::optional<std::vector<const Load*>> innermostLoads(const ForStmt& loop) {
  struct Scan : IRVisitor {
    std::vector<const Load*> loads;
    bool innermost = true;
    void visitLoad(const Load* l) override {
      loads.push_back(l);
      IRVisitor::visitLoad(l);
    }
    void visitFor(const ForStmt* f) override {
      innermost = false;
      IRVisitor::visitFor(f);
    }
  } scan;
  if (loop.forKind != ForKind::Vectorized) return std::nullopt;
  scan.visit(loop.body);
  if (!scan.innermost) return std::nullopt;
  return scan.loads;
}

// The global loads of `loads` that `read` accepts and the block owns, without duplicates.
template <typename Accept>
std::vector<const Load*> ownedReads(const std::vector<const Load*>& loads, const std::vector<const VarNode*>& blockVars,
                                    Accept read) {
  std::vector<const Load*> out;
  for (const Load* l : loads) {
    if (l->buffer->scope != MemScope::Global || !read(*l) || !ownedByBlock(l->indices, blockVars)) continue;
    bool seen = false;
    for (const Load* o : out) seen = seen || sameAccess(o, l);
    if (!seen) out.push_back(l);
  }
  return out;
}

}  // namespace

std::vector<const Load*> nextBlockPrefetches(const ForStmt& loop, const std::vector<const VarNode*>& blockVars) {
  std::optional<std::vector<const Load*>> loads = innermostLoads(loop);
  if (!loads) return {};
  return ownedReads(*loads, blockVars, [&](const Load& l) { return contiguousIn(l.indices, loop.var.get()); });
}

ChunkedReads chunkedNextBlockPrefetches(const ForStmt& loop, const std::vector<const VarNode*>& blockVars) {
  auto* inner = as<ForStmt>(loop.body);
  int64_t lanes = 0, first = -1;
  if (loop.forKind != ForKind::Serial || !inner || !constInt(inner->extent, &lanes) || lanes < 1 ||
      !constInt(inner->min, &first) || first != 0)
    return {};
  std::optional<std::vector<const Load*>> loads = innermostLoads(*inner);
  if (!loads) return {};
  const VarNode *c = loop.var.get(), *l = inner->var.get();
  auto chunked = [&](const Load& load) {
    if (load.indices.empty()) return false;
    for (size_t d = 0; d + 1 < load.indices.size(); ++d)
      if (usesVar(load.indices[d], c) || usesVar(load.indices[d], l)) return false;
    std::optional<int64_t> cl = coefficientOf(load.indices.back(), l), cc = coefficientOf(load.indices.back(), c);
    return cl && *cl == 1 && cc && *cc == lanes;
  };
  ChunkedReads out;
  out.loads = ownedReads(*loads, blockVars, chunked);
  if (!out.loads.empty()) {
    out.vectorLoop = inner;
    out.lanes = lanes;
  }
  return out;
}

bool ownedByBlock(const std::vector<Expr>& indices, const std::vector<const VarNode*>& blockVars) {
  if (blockVars.empty()) return false;
  for (const VarNode* b : blockVars) {
    bool used = false;
    for (const Expr& i : indices) used = used || usesVar(i, b);
    if (!used) return false;
  }
  return true;
}

}  // namespace tlc::cpu
