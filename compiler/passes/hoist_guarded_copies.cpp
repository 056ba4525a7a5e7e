#include "compiler/passes/hoist_guarded_copies.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/buffer_writes.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/pipeline_planning.h"

namespace tlc::passes {

using namespace ir;

namespace {

class Hoist : public IRMutator {
 public:
  explicit Hoist(ReadsAfterLoops after) : after_(std::move(after)) {}

 protected:
  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    Stmt out = IRMutator::mutateFor(f, self);
    if (f->forKind != ForKind::Pipelined || f->numStages < 2 || !f->order.empty() || !f->stage.empty() ||
        !f->group.empty())
      return out;
    auto* loop = as<ForStmt>(out);
    BoundVars bound;
    bound.visit(loop->body);
    const Loop facts{f, *loop, bound.vars, collectBufferWrites(loop->body).buffers};
    std::vector<Stmt> body = seqStmts(loop->body), rewritten;
    bool changed = false;
    for (size_t i = 0; i < body.size(); ++i) {
      auto* guard = as<IfStmt>(body[i]);
      if (!guard || guard->elseBody) {
        rewritten.push_back(body[i]);
        continue;
      }
      std::vector<Stmt> hoisted, kept;
      for (const Stmt& s : seqStmts(guard->thenBody))
        (hoistable(facts, body, i, *guard, kept, s) ? hoisted : kept).push_back(s);
      if (hoisted.empty()) {
        rewritten.push_back(body[i]);
        continue;
      }
      changed = true;
      // A condition a producer can evaluate ahead (it uses nothing the body
      // binds and reads only tables) goes with the copies as their
      // `used_when`: a target may then skip them where it is false.
      if (evaluableAhead(facts, [&](UsesVars& u) { u.visit(guard->cond); }))
        for (Stmt& h : hoisted) {
          auto* c = as<CopyStmt>(h);
          h = std::make_shared<const CopyStmt>(c->src, c->dst, c->loc, c->async, c->barrier, guard->cond);
        }
      rewritten.insert(rewritten.end(), hoisted.begin(), hoisted.end());
      if (!kept.empty())
        rewritten.push_back(std::make_shared<const IfStmt>(guard->cond, makeSeq(std::move(kept), guard->loc), nullptr,
                                                           guard->loc, guard->likely));
    }
    if (!changed) return out;
    auto g = std::make_shared<ForStmt>(loop->var, loop->min, loop->extent, loop->forKind,
                                       makeSeq(std::move(rewritten), loop->loc), loop->loc);
    g->copyLoopAttributes(*loop);
    return g;
  }

 private:
  ReadsAfterLoops after_;

  // What the checks ask of a loop, computed once per loop: the original
  // node (readsAfterLoops' key), the rewritten one, the variables its body
  // binds and the buffers it writes.
  struct Loop {
    const ForStmt* original;
    const ForStmt& loop;
    std::unordered_set<const VarNode*> bound;
    std::set<const BufferNode*> written;
  };

  // Whether the expressions `visit` shows use nothing the body binds and
  // read no memory but tables: values a copy ahead of the body may use.
  static bool evaluableAhead(const Loop& l, const std::function<void(UsesVars&)>& visit) {
    UsesVars uses(l.bound);
    visit(uses);
    return !uses.found && uses.loadsOnlyTablesOf(l.loop.body);
  }

  // Whether copy `s`, in the block of `guard` (the loop body's statement
  // `at`) after the block's statements `before`, may move before `guard`.
  bool hoistable(const Loop& l, const std::vector<Stmt>& body, size_t at, const IfStmt& guard,
                 const std::vector<Stmt>& before, const Stmt& s) const {
    auto* c = as<CopyStmt>(s);
    if (!c || c->async || c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared ||
        !isFullRegion(c->dst))
      return false;
    const BufferNode* tile = c->dst.buffer.get();
    auto readAfter = after_.find(l.original);
    if (readAfter != after_.end() && readAfter->second.count(tile)) return false;
    for (size_t j = 0; j < body.size(); ++j)
      if (j != at && accessesBuffer(body[j], tile)) return false;
    for (const Stmt& b : before)
      if (accessesBuffer(b, tile)) return false;
    for (const Stmt& t : seqStmts(guard.thenBody))
      if (t != s && collectBufferWrites(t).buffers.count(tile)) return false;
    if (collectBufferReads(guard.cond).count(tile)) return false;
    if (l.written.count(c->src.buffer.get())) return false;
    return evaluableAhead(l, [&](UsesVars& u) {
      u.visitRegion(c->src);
      u.visitRegion(c->dst);
    });
  }
};

}  // namespace

Module hoistGuardedCopies(const Module& m, PassContext&) {
  return rewriteBodies(m, [](const PrimFunc& f) { return Hoist(readsAfterLoops(f.body)).mutate(f.body); });
}

}  // namespace tlc::passes
