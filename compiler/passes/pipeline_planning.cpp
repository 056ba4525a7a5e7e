#include "compiler/passes/pipeline_planning.h"

#include <algorithm>
#include <optional>
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
    if (collectBufferReads(body[i]).count(dst)) return false;
    for (auto* b : collectBufferWrites(body[i]).buffers)
      if (b == src || b == dst) return false;
  }
  return true;
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

// What `s` does to the set of live buffers, as liveness in = gen + (out -
// kill): `gen`, the buffers it may read before overwriting them; `kill`,
// those it certainly overwrites whole first.
struct Transfer {
  BufferSet gen, kill;
};

Transfer transferOf(const Stmt& s) {
  if (auto* seq = as<SeqStmt>(s)) {
    Transfer t;  // of the statements after i, composed backwards
    for (size_t i = seq->stmts.size(); i-- > 0;) {
      Transfer x = transferOf(seq->stmts[i]);
      for (auto* b : t.gen)
        if (!x.kill.count(b)) x.gen.insert(b);
      x.kill.insert(t.kill.begin(), t.kill.end());
      t = std::move(x);
    }
    return t;
  }
  // A loop may run no iteration: it kills nothing, and what its body reads
  // first is read first by some iteration.
  if (auto* f = as<ForStmt>(s)) return {transferOf(f->body).gen, {}};
  if (auto* i = as<IfStmt>(s)) {
    Transfer t = transferOf(i->thenBody), e = i->elseBody ? transferOf(i->elseBody) : Transfer{};
    t.gen.insert(e.gen.begin(), e.gen.end());
    BufferSet both;
    for (auto* b : t.kill)
      if (e.kill.count(b)) both.insert(b);
    t.kill = std::move(both);
    return t;
  }
  if (auto* l = as<LetStmt>(s)) return transferOf(l->body);
  if (auto* k = as<KernelStmt>(s)) return transferOf(k->body);
  return {collectBufferReads(s), overwrites(s)};
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
    for (auto* b : transferOf(f->body).gen) after.insert(b);
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
  BufferSet in = collectBufferReads(s);
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

// Whether `f` carries a plan in TileLang's form: groups of statements, or
// -1 entries (statements TileLang's producer warps issue).
bool tileLangForm(const ForStmt& f) {
  auto producer = [](const std::vector<int64_t>& l) { return std::count(l.begin(), l.end(), -1) > 0; };
  return !f.group.empty() || producer(f.order) || producer(f.stage);
}

// Maps a plan in TileLang's form onto the `n` statements of `f`'s body: a
// statement takes its group's stage and order, -1 stages become 0 (the
// producers' tiles load ahead), and the statements run by their groups'
// order, the producers' first, program order breaking ties. "" or why the
// plan does not fit.
std::string mapTileLangPlan(ForStmt& f, size_t n) {
  std::vector<size_t> groupOf;  // per statement
  if (f.group.empty()) {
    for (size_t i = 0; i < std::max(f.order.size(), f.stage.size()); ++i) groupOf.push_back(i);
  } else {
    for (size_t g = 0; g < f.group.size(); ++g) groupOf.insert(groupOf.end(), f.group[g].size(), g);
  }
  if (groupOf.size() != n)
    return std::string(f.group.empty() ? "its `order`/`stage` list " : "its `group` lists ") +
           std::to_string(groupOf.size()) + " statements, but tlc's loop body has " + std::to_string(n) +
           " (tlc counts each tile operation, `T.Parallel` nest and scalar assignment that reads memory as one)";
  std::vector<int64_t> stage, order;
  for (size_t j = 0; j < n && !f.stage.empty(); ++j) stage.push_back(std::max<int64_t>(f.stage[groupOf[j]], 0));
  if (!f.order.empty()) {
    std::vector<size_t> byOrder(n);
    for (size_t j = 0; j < n; ++j) byOrder[j] = j;
    std::stable_sort(byOrder.begin(), byOrder.end(),
                     [&](size_t a, size_t b) { return f.order[groupOf[a]] < f.order[groupOf[b]]; });
    order.resize(n);
    for (size_t r = 0; r < n; ++r) order[byOrder[r]] = (int64_t)r;
  }
  f.stage = std::move(stage);
  f.order = std::move(order);
  f.group.clear();
  return "";
}

// What is wrong with a plan: a message and notes at the statements involved.
struct PlanProblem {
  std::string message;
  std::vector<std::pair<SourceLoc, std::string>> notes = {};
};

// tlc's pipelines load tiles ahead in stage 0 (the loads defaultStages
// picks) and run the other statements in one later stage, in program order
// (the backends' form, cuda_kernel_analysis.cpp's pipelineSchedule); a
// TileLang plan mapped onto the statements (`f`) is used only in that form:
// why it is not, or nullopt.
std::optional<PlanProblem> tlcPipelineForm(const ForStmt* f, const std::vector<Stmt>& body,
                                           const std::set<const BufferNode*>& after) {
  size_t n = body.size();
  if (f->stage.empty() || std::count(f->stage.begin(), f->stage.end(), 0) == (long)n) return std::nullopt;
  std::vector<int64_t> loads = defaultStages(f, body, after);
  if (std::count(loads.begin(), loads.end(), 0) == (long)n)
    return PlanProblem{"tlc loads no tile of this loop ahead (a copy from global to shared memory, or a gather, that "
                       "nothing before it in the body uses), so it runs unpipelined"};
  size_t ahead = std::count(f->stage.begin(), f->stage.end(), 0);
  int64_t later = -1, lastOrder = -1;
  for (size_t i = 0; i < n; ++i) {
    int64_t order = f->order.empty() ? (int64_t)i : f->order[i];
    std::string st = "statement " + std::to_string(i) + " (stage " + std::to_string(f->stage[i]) + ")";
    std::string why;
    if (f->stage[i] == 0 && loads[i] != 0) {
      why = st + " is not a tile tlc can load ahead";
    } else if (f->stage[i] == 0 && order >= (int64_t)ahead) {
      why = "tlc issues the stage-0 loads first, but " + st + " comes later in `order`";
    } else if (f->stage[i] != 0 && later >= 0 && f->stage[i] != later) {
      why = "tlc runs the statements after the stage-0 loads in one stage, but " + st + " differs";
    } else if (f->stage[i] != 0 && order <= lastOrder) {
      why = "tlc runs the statements after the stage-0 loads in program order, but " + st + " is not";
    }
    if (!why.empty()) return PlanProblem{why, {{body[i]->loc, "statement " + std::to_string(i) + " is this one"}}};
    if (f->stage[i] != 0) {
      later = f->stage[i];
      lastOrder = order;
    }
  }
  return std::nullopt;
}

class Planner : public IRMutator {
 public:
  Planner(PassContext& ctx, const Stmt& body) : ctx_(ctx), readsAfter_(readsAfterLoops(body)) {}

 protected:
  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    Stmt s = IRMutator::mutateFor(n, self);
    auto* f = as<ForStmt>(s);
    if (f->forKind != ForKind::Pipelined) return s;
    std::vector<Stmt> body = seqStmts(f->body);
    const std::set<const BufferNode*>& after = readsAfter_[n];
    if (tileLangForm(*f)) {
      // TileLang's plan, for TileLang's statements: where it does not fit
      // tlc's, the loop runs tlc's own plan (a plan changes no value).
      auto mapped = std::make_shared<ForStmt>(*f);
      std::string why = mapTileLangPlan(*mapped, body.size());
      std::optional<PlanProblem> problem;
      if (why.empty() && mapped->numStages >= 2) problem = checkPlan(mapped.get(), body, after);
      if (why.empty() && mapped->numStages >= 2 && !problem) problem = tlcPipelineForm(mapped.get(), body, after);
      if (problem) why = problem->message;
      if (!why.empty() && mapped->numStages >= 2) {
        Diagnostic& d = ctx_.diags.report(DiagKind::PipelinePlanIgnored, f->loc,
                                          "this loop's TileLang pipeline plan does not fit tlc's: " + why +
                                              "; the loop runs tlc's own plan instead, which loads the tiles it can "
                                              "ahead and runs the other statements in program order");
        if (problem)
          for (const auto& [loc, text] : problem->notes) d.note(loc, text);
      }
      if (!why.empty()) {
        mapped->order.clear();
        mapped->stage.clear();
        mapped->group.clear();
      }
      s = mapped;
      f = mapped.get();
    } else if (f->numStages >= 2 && (!f->stage.empty() || !f->order.empty())) {
      if (std::optional<PlanProblem> problem = checkPlan(f, body, after)) {
        Diagnostic& d = ctx_.diags.report(DiagKind::PipelinePlanInvalid, f->loc, problem->message);
        for (const auto& [loc, text] : problem->notes) d.note(loc, text);
        return s;
      }
    }
    if (f->numStages < 2) return s;
    return withDefaultPlan(f, after);
  }

 private:
  // Checks the lists the user gave (either may be empty).
  std::optional<PlanProblem> checkPlan(const ForStmt* f, const std::vector<Stmt>& body,
                                       const std::set<const BufferNode*>& after) {
    size_t n = body.size();
    for (auto* list : {&f->stage, &f->order}) {
      if (list->empty() || list->size() == n) continue;
      return PlanProblem{std::string("pipeline `") + (list == &f->stage ? "stage" : "order") + "` has " +
                         std::to_string(list->size()) + " entries but the loop body has " + std::to_string(n) +
                         " statements; give one entry per statement"};
    }
    if (!f->order.empty()) {
      std::vector<int64_t> sorted = f->order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < n; ++i)
        if (sorted[i] != (int64_t)i)
          return PlanProblem{"pipeline `order` must list each statement index 0.." + std::to_string(n - 1) +
                             " exactly once"};
    }
    if (f->stage.empty()) return std::nullopt;
    int64_t last = *std::max_element(f->stage.begin(), f->stage.end());
    for (size_t j = 0; j < n; ++j) {
      std::set<const BufferNode*> reads = collectBufferReads(body[j]);
      // Statement i writes what j reads: j cannot run in an earlier stage
      // (when i comes after j, j reads what i wrote in an earlier iteration).
      for (size_t i = 0; i < n; ++i) {
        if (i == j || f->stage[j] >= f->stage[i]) continue;
        for (auto* b : collectBufferWrites(body[i]).buffers) {
          if (!reads.count(b)) continue;
          std::string when = i < j ? "" : " in the iteration before";
          return PlanProblem{"pipeline statement " + std::to_string(j) + " (stage " + std::to_string(f->stage[j]) +
                                 ") reads `" + b->name + "`, which statement " + std::to_string(i) + " (stage " +
                                 std::to_string(f->stage[i]) + ") writes" + when +
                                 ": a statement cannot run ahead of what it reads; give it a stage >= " +
                                 std::to_string(f->stage[i]),
                             {{body[i]->loc, "`" + b->name + "` written here"}, {body[j]->loc, "and read here"}}};
        }
      }
      // A tile filled ahead has one version per stage: after the loop it
      // would not hold the last iteration's tile.
      if (f->stage[j] < last)
        for (auto* b : collectBufferWrites(body[j]).buffers)
          if (b->scope == MemScope::Shared && after.count(b))
            return PlanProblem{"pipeline statement " + std::to_string(j) + " (stage " + std::to_string(f->stage[j]) +
                                   ") fills `" + b->name + "` ahead, but `" + b->name +
                                   "` is read after the loop, where it must hold the last iteration's tile; give the "
                                   "statement stage " + std::to_string(last) + " or read a copy of the tile after "
                                   "the loop",
                               {{body[j]->loc, "`" + b->name + "` filled here"}}};
    }
    return std::nullopt;
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
