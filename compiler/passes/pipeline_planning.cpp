#include "compiler/passes/pipeline_planning.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/buffer_writes.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/gather_nest.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/var_uses.h"

namespace tlc::passes {

using namespace ir;

namespace {

// The buffers a statement reads.
class ReadScan : public BufferAccessVisitor {
 public:
  std::set<const BufferNode*> reads;

 protected:
  void read(const Buffer& b) override { reads.insert(b.get()); }
};

// Whether a copy region of `loop` changes with values computed in its body:
// a variable it binds, or memory other than tables it never writes.
bool regionDepends(const Region& r, const std::unordered_set<const VarNode*>& vars, const ForStmt* loop) {
  UsesVars uses(vars);
  uses.visitRegion(r);
  return uses.found || !uses.loadsOnlyTablesOf(loop->body);
}

// The statement at `k`, filling `dst` from `src` (null for a gather nest,
// whose sources `loop` never writes), can run ahead of the statements before
// it: none of them writes what it reads or reads what it writes (its tile
// would then be the next iteration's, not the one program order gives them).
bool hoistable(const std::vector<Stmt>& body, size_t k, const BufferNode* dst, const BufferNode* src) {
  for (size_t i = 0; i < k; ++i) {
    ReadScan r;
    r.visit(body[i]);
    if (r.reads.count(dst)) return false;
    for (auto* b : collectBufferWrites(body[i]).buffers)
      if (b == src || b == dst) return false;
  }
  return true;
}

std::set<const BufferNode*> readsOf(const Stmt& s) {
  ReadScan r;
  r.visit(s);
  return r.reads;
}

using BufferSet = std::set<const BufferNode*>;

// The shared tiles `s` certainly overwrites whole (copies and fills of the
// whole buffer, in a statement list); loops may run no iteration.
BufferSet overwrites(const Stmt& s) {
  BufferSet out;
  for (const Stmt& x : seqStmts(s)) {
    const Region* dst = nullptr;
    if (auto* c = as<CopyStmt>(x)) dst = &c->dst;
    if (auto* f = as<FillStmt>(x)) dst = &f->dst;
    if (dst && dst->buffer->scope == MemScope::Shared && isFullRegion(*dst)) out.insert(dst->buffer.get());
  }
  return out;
}

// The buffers whose values on entry to `s` may be read (`live`: those whose
// values after `s` may be); records in `out`, for every loop under `s`, the
// buffers whose values after it may be read.
BufferSet liveBefore(const Stmt& s, const BufferSet& live, ReadsAfterLoops& out) {
  if (auto* seq = as<SeqStmt>(s)) {
    BufferSet l = live;
    for (size_t i = seq->stmts.size(); i-- > 0;) l = liveBefore(seq->stmts[i], l, out);
    return l;
  }
  if (auto* f = as<ForStmt>(s)) {
    out[f] = live;
    // An iteration's values reach the next one: what the body reads before
    // writing it is live after every iteration.
    BufferSet after = live;
    ReadsAfterLoops ignored;
    for (auto* b : liveBefore(f->body, {}, ignored)) after.insert(b);
    BufferSet in = liveBefore(f->body, after, out);
    in.insert(live.begin(), live.end());  // no iteration at all
    return in;
  }
  if (auto* i = as<IfStmt>(s)) {
    BufferSet in = liveBefore(i->thenBody, live, out);
    BufferSet other = i->elseBody ? liveBefore(i->elseBody, live, out) : live;
    in.insert(other.begin(), other.end());
    return in;
  }
  if (auto* l = as<LetStmt>(s)) return liveBefore(l->body, live, out);
  if (auto* k = as<KernelStmt>(s)) return liveBefore(k->body, live, out);
  BufferSet in = readsOf(s);
  BufferSet killed = overwrites(s);
  for (auto* b : live)
    if (!killed.count(b)) in.insert(b);
  return in;
}

std::vector<int64_t> defaultStages(const ForStmt* f, const std::vector<Stmt>& body,
                                   const std::set<const BufferNode*>& readAfter) {
  BoundVars bound;
  bound.visit(f->body);
  const BufferWrites loopWrites = collectBufferWrites(f->body);
  std::vector<bool> ahead(body.size(), false);
  // `whole`: tiles every iteration's stage-0 statement overwrites entirely, so
  // that what later statements write into them never reaches another
  // iteration: each iteration may keep its own version of them.
  std::unordered_set<const BufferNode*> dsts, whole;
  for (size_t k = 0; k < body.size(); ++k) {
    const BufferNode *dst = nullptr, *src = nullptr;
    if (auto* c = as<CopyStmt>(body[k])) {
      if (c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared) continue;
      if (regionDepends(c->src, bound.vars, f) || regionDepends(c->dst, bound.vars, f)) continue;
      dst = c->dst.buffer.get();
      src = c->src.buffer.get();
      if (isFullRegion(c->dst)) whole.insert(dst);
    } else if (auto g = gatherNest(body[k], f)) {
      dst = g->tile;
      whole.insert(dst);
    } else {
      continue;
    }
    // Not ahead: a tile read after the loop (it must hold the last
    // iteration's tile, not another version), or a copy from a tensor the
    // loop writes (an iteration may read what the one before it wrote).
    if (readAfter.count(dst) || (src && loopWrites.buffers.count(src))) continue;
    if (dsts.count(dst) || !hoistable(body, k, dst, src)) continue;
    ahead[k] = true;
    dsts.insert(dst);
  }
  size_t producers = std::count(ahead.begin(), ahead.end(), true);
  bool pipelined = producers > 0 && producers < body.size();
  for (size_t i = 0; pipelined && i < body.size(); ++i)
    if (!ahead[i])
      for (auto* b : collectBufferWrites(body[i]).buffers)
        if (dsts.count(b) && !whole.count(b)) pipelined = false;
  std::vector<int64_t> stage(body.size(), 0);
  if (pipelined)
    for (size_t i = 0; i < body.size(); ++i)
      if (!ahead[i]) stage[i] = f->numStages - 1;
  return stage;
}

// The default order: the stage-0 statements first, then the others, each in program order.
std::vector<int64_t> defaultOrder(const std::vector<int64_t>& stage) {
  std::vector<int64_t> order(stage.size());
  int64_t next = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < stage.size(); ++i)
      if ((stage[i] == 0) == (pass == 0)) order[i] = next++;
  return order;
}

class Planner : public IRMutator {
 public:
  Planner(PassContext& ctx, const Stmt& body) : ctx_(ctx), readsAfter_(readsAfterLoops(body)) {}

 protected:
  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    Stmt s = IRMutator::mutateFor(n, self);
    auto* f = as<ForStmt>(s);
    if (f->forKind != ForKind::Pipelined || f->numStages < 2) return s;
    std::vector<Stmt> body = seqStmts(f->body);
    const std::set<const BufferNode*>& after = readsAfter_[n];
    if ((!f->stage.empty() || !f->order.empty()) && !userPlanOk(f, body, after)) return s;
    return withDefaultPlan(f, after);
  }

 private:
  void error(const ForStmt* f, const std::string& msg) {
    ctx_.diags.report(DiagKind::PipelinePlanInvalid, f->loc, msg);
  }

  // Checks the lists the user gave (either may be empty).
  bool userPlanOk(const ForStmt* f, const std::vector<Stmt>& body, const std::set<const BufferNode*>& after) {
    size_t n = body.size();
    for (auto* list : {&f->stage, &f->order}) {
      if (list->empty() || list->size() == n) continue;
      error(f, std::string("pipeline `") + (list == &f->stage ? "stage" : "order") + "` has " +
                   std::to_string(list->size()) + " entries but the loop body has " + std::to_string(n) +
                   " statements; give one entry per statement");
      return false;
    }
    if (!f->order.empty()) {
      std::vector<int64_t> sorted = f->order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < n; ++i)
        if (sorted[i] != (int64_t)i) {
          error(f, "pipeline `order` must list each statement index 0.." + std::to_string(n - 1) + " exactly once");
          return false;
        }
    }
    if (f->stage.empty()) return true;
    int64_t last = *std::max_element(f->stage.begin(), f->stage.end());
    for (size_t j = 0; j < n; ++j) {
      std::set<const BufferNode*> reads = readsOf(body[j]);
      // Statement i writes what j reads: j cannot run in an earlier stage
      // (when i comes after j, j reads what i wrote in an earlier iteration).
      for (size_t i = 0; i < n; ++i) {
        if (i == j || f->stage[j] >= f->stage[i]) continue;
        for (auto* b : collectBufferWrites(body[i]).buffers) {
          if (!reads.count(b)) continue;
          std::string when = i < j ? "" : " in the iteration before";
          ctx_.diags
              .report(DiagKind::PipelinePlanInvalid, f->loc,
                      "pipeline statement " + std::to_string(j) + " (stage " + std::to_string(f->stage[j]) +
                          ") reads `" + b->name + "`, which statement " + std::to_string(i) + " (stage " +
                          std::to_string(f->stage[i]) + ") writes" + when +
                          ": a statement cannot run ahead of what it reads; give it a stage >= " +
                          std::to_string(f->stage[i]))
              .note(body[i]->loc, "`" + b->name + "` written here")
              .note(body[j]->loc, "and read here");
          return false;
        }
      }
      // A tile filled ahead has one version per stage: after the loop it
      // would not hold the last iteration's tile.
      if (f->stage[j] < last)
        for (auto* b : collectBufferWrites(body[j]).buffers)
          if (b->scope == MemScope::Shared && after.count(b)) {
            ctx_.diags
                .report(DiagKind::PipelinePlanInvalid, f->loc,
                        "pipeline statement " + std::to_string(j) + " (stage " + std::to_string(f->stage[j]) +
                            ") fills `" + b->name + "` ahead, but `" + b->name +
                            "` is read after the loop, where it must hold the last iteration's tile; give the "
                            "statement stage " + std::to_string(last) + " or read a copy of the tile after the loop")
                .note(body[j]->loc, "`" + b->name + "` filled here");
            return false;
          }
    }
    return true;
  }

  PassContext& ctx_;
  ReadsAfterLoops readsAfter_;
};

}  // namespace

ReadsAfterLoops readsAfterLoops(const Stmt& body) {
  ReadsAfterLoops out;
  liveBefore(body, {}, out);
  return out;
}

std::shared_ptr<ForStmt> withDefaultPlan(const ForStmt* f, const std::set<const BufferNode*>& readAfter) {
  std::vector<Stmt> body = seqStmts(f->body);
  auto planned = std::make_shared<ForStmt>(*f);
  if (planned->stage.empty()) planned->stage = defaultStages(f, body, readAfter);
  if (planned->order.empty() && f->stage.empty()) planned->order = defaultOrder(planned->stage);
  if (planned->order.empty())
    for (size_t i = 0; i < body.size(); ++i) planned->order.push_back((int64_t)i);
  return planned;
}

Module planPipelines(const Module& m, PassContext& ctx) {
  return rewriteBodies(m, [&](const PrimFunc& f) { return Planner(ctx, f.body).mutate(f.body); });
}

}  // namespace tlc::passes
