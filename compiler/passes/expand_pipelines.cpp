#include "compiler/passes/expand_pipelines.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/loop_jumps.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"

namespace tlc::passes {

using namespace ir;

PipelineExpansion pipelineExpansion(const ForStmt* loop) {
  PipelineExpansion x;
  auto fail = [&](std::string why) {
    x = PipelineExpansion{};
    x.why = std::move(why);
    return x;
  };
  std::vector<Stmt> body = seqStmts(loop->body);
  if (loop->forKind != ForKind::Pipelined || loop->numStages < 2) return fail("it is not a pipelined loop of 2 or more stages");
  if (loop->stage.size() != body.size() || loop->order.size() != body.size())
    return fail("it has no plan with one entry per statement (pipeline-planning makes one)");
  if (jumpsOutOf(loop->body)) return fail("its body leaves the loop early (break or continue)");
  size_t ahead = static_cast<size_t>(std::count(loop->stage.begin(), loop->stage.end(), 0));
  if (ahead == 0 || ahead == body.size()) return fail("its plan loads nothing ahead");
  int64_t later = -1, lastOrder = -1;
  BoundVars bound;
  bound.visit(loop->body);
  for (size_t i = 0; i < body.size(); ++i) {
    if (loop->stage[i] != 0) {
      if (later >= 0 && loop->stage[i] != later) return fail("its later statements do not share one stage");
      if (loop->order[i] <= lastOrder) return fail("its later statements do not keep program order");
      later = loop->stage[i];
      lastOrder = loop->order[i];
      x.consumers.push_back(body[i]);
      continue;
    }
    if (loop->order[i] >= static_cast<int64_t>(ahead)) return fail("its stage-0 statements are not first in `order`");
    auto* c = as<CopyStmt>(body[i]);
    if (!c || c->async || c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared)
      return fail("a stage-0 statement is not a copy from global to shared memory");
    if (!isFullRegion(c->dst)) return fail("a stage-0 copy fills part of its tile");
    UsesVars uses(bound.vars);
    uses.visitRegion(c->src);
    uses.visitRegion(c->dst);
    if (uses.found || !uses.loadsOnlyTablesOf(loop->body))
      return fail("a stage-0 copy's region depends on a value computed in the loop");
    for (const Buffer& t : x.tiles)
      if (t == c->dst.buffer) return fail("two stage-0 copies fill `" + t->name + "`");
    for (const Stmt& before : x.consumers)
      if (accessesBuffer(before, c->dst.buffer.get()))
        return fail("a statement before the copy into `" + c->dst.buffer->name + "` uses it");
    x.producers.push_back(body[i]);
    x.tiles.push_back(c->dst.buffer);
  }
  x.depth = later + 1;
  return x;
}

ExpandedLoop expandLoop(const ForStmt* f, const PipelineExpansion& x, const std::function<Stmt(const Stmt&)>& consumer,
                        std::vector<std::pair<const CopyStmt*, size_t>>* issued) {
  SourceLoc loc = f->loc;
  DType t = f->var->dtype;
  Expr n = f->extent;
  int64_t d = x.depth;
  // The producers of iteration `k := at`, issued asynchronously into the tiles' version `version`.
  auto issue = [&](const Expr& at, const Expr& version) {
    std::vector<Stmt> copies;
    for (size_t i = 0; i < x.producers.size(); ++i) {
      Stmt atK = substitute(x.producers[i], f->var, at);
      auto* c = as<CopyStmt>(atK);
      auto async = std::make_shared<const CopyStmt>(c->src, c->dst, c->loc, true);
      if (issued) issued->emplace_back(async.get(), i);
      copies.push_back(std::move(async));
    }
    return std::make_shared<const VersionStmt>(x.tiles, version, makeSeq(std::move(copies), loc), loc);
  };
  ExpandedLoop out;
  out.commit = std::make_shared<const AsyncCommitStmt>(loc);
  Var p = makeVar(f->var->name + "_pre", t, f->var->loc);
  Expr pe = makeVarRef(p);
  out.prologue = std::make_shared<const ForStmt>(
      p, makeInt(0, t), makeInt(d - 1, t), ForKind::Serial,
      makeSeq({std::make_shared<const IfStmt>(lt(pe, n), issue(add(f->min, pe), pe), nullptr, loc), out.commit}, loc),
      loc);
  Expr k = makeVarRef(f->var);
  Expr iter = sub(k, f->min);
  Expr aheadIter = add(iter, makeInt(d - 1, t));
  std::vector<Stmt> rest;
  for (const Stmt& c : x.consumers) rest.push_back(consumer(c));
  out.wait = std::make_shared<const AsyncWaitStmt>(d - 2, loc);
  out.issue = std::make_shared<const IfStmt>(lt(aheadIter, n), issue(add(k, makeInt(d - 1, t)), floorMod(aheadIter, makeInt(d, t))),
                                             nullptr, loc);
  Stmt consumers =
      std::make_shared<const VersionStmt>(x.tiles, floorMod(iter, makeInt(d, t)), makeSeq(std::move(rest), loc), loc);
  Stmt steady = std::make_shared<const ForStmt>(f->var, f->min, n, ForKind::Serial,
                                                makeSeq({out.wait, out.issue, out.commit, consumers}, loc), loc);
  out.drain = std::make_shared<const AsyncWaitStmt>(0, loc);
  out.stmt = makeSeq({out.prologue, steady, out.drain}, loc);
  return out;
}

Stmt specializeLoop(const ForStmt* f, const PipelineExpansion& x,
                    const std::function<Stmt(const Stmt&)>& consumer) {
  SourceLoc loc = f->loc;
  DType t = f->var->dtype;
  Expr d = makeInt(x.depth, t);
  auto barriers = [&](const char* role) {
    return makeBuffer(f->var->name + "_" + role, DType::UInt64, {makeInt(x.depth)}, MemScope::Barrier, loc);
  };
  Buffer full = barriers("full"), empty = barriers("empty");
  Expr bytes;
  int64_t constBytes = 0;  // the tiles of constant shapes, folded
  for (const Buffer& tile : x.tiles) {
    int64_t size = dtypeBytes(tile->dtype), dim = 0;
    Expr n;
    for (const Expr& d : tile->shape)
      if (constInt(d, &dim))
        size *= dim;
      else
        n = n ? mul(n, makeCast(DType::Int64, d)) : makeCast(DType::Int64, d);
    if (!n) constBytes += size;
    else bytes = bytes ? add(bytes, mul(n, makeInt(size, DType::Int64))) : mul(n, makeInt(size, DType::Int64));
  }
  if (constBytes || !bytes) bytes = bytes ? add(bytes, makeInt(constBytes, DType::Int64)) : makeInt(constBytes, DType::Int64);
  // Iteration i of the loop uses stage i % D; its round i / D is the phase
  // of that stage's barriers it waits for.
  auto stage = [&](const Expr& i) { return floorMod(i, d); };
  auto round = [&](const Expr& i) { return floorDiv(i, d); };
  auto parity = [&](const Expr& r) { return floorMod(r, makeInt(2, t)); };

  Var kp = makeVar(f->var->name + "_load", t, f->var->loc);
  Expr ip = sub(makeVarRef(kp), f->min);
  std::vector<Stmt> copies;
  for (const Stmt& p : x.producers) {
    Stmt atK = substitute(p, f->var, makeVarRef(kp));
    auto* c = as<CopyStmt>(atK);
    copies.push_back(std::make_shared<const CopyStmt>(c->src, c->dst, c->loc, true, BarrierRef{full, stage(ip)}));
  }
  Stmt producer = std::make_shared<const ForStmt>(
      kp, f->min, f->extent, ForKind::Serial,
      makeSeq({std::make_shared<const BarrierWaitStmt>(BarrierRef{empty, stage(ip)},
                                                       parity(add(round(ip), makeInt(1, t))), loc),
               std::make_shared<const BarrierArriveStmt>(BarrierRef{full, stage(ip)}, bytes, loc),
               std::make_shared<const VersionStmt>(x.tiles, stage(ip), makeSeq(std::move(copies), loc), loc)},
              loc),
      loc);

  Expr i = sub(makeVarRef(f->var), f->min);
  std::vector<Stmt> rest;
  for (const Stmt& c : x.consumers) rest.push_back(consumer(c));
  Stmt consumers = std::make_shared<const ForStmt>(
      f->var, f->min, f->extent, ForKind::Serial,
      makeSeq({std::make_shared<const BarrierWaitStmt>(BarrierRef{full, stage(i)}, parity(round(i)), loc),
               std::make_shared<const VersionStmt>(x.tiles, stage(i), makeSeq(std::move(rest), loc), loc),
               std::make_shared<const BarrierArriveStmt>(BarrierRef{empty, stage(i)}, nullptr, loc)},
              loc),
      loc);
  return makeSeq({std::make_shared<const AllocStmt>(full, loc, 1, 1), std::make_shared<const AllocStmt>(empty, loc, 1, 1),
                  std::make_shared<const WarpSpecializeStmt>(kProducerThreads, producer, consumers, loc)},
                 loc);
}

namespace {

// The loops to expand, and the tiles' depths: candidates whose tiles no
// statement outside them touches. Run twice over a body: the first walk
// finds the candidates, the second (`checking`) rejects those whose tiles
// something else accesses, before or after them.
class ChooseLoops : public BufferAccessVisitor {
 public:
  std::map<const ForStmt*, PipelineExpansion> loops;
  std::map<const BufferNode*, const ForStmt*> owner;  // tile -> its candidate loop
  std::set<const ForStmt*> rejected;
  std::set<const BufferNode*> allocated;
  bool checking = false;

 protected:
  std::vector<const ForStmt*> open_;

  void visitAlloc(const AllocStmt* a) override {
    if (a->versions == 1) allocated.insert(a->buffer.get());
  }
  void visitFor(const ForStmt* f) override {
    if (!checking && f->forKind == ForKind::Pipelined) {
      PipelineExpansion x = pipelineExpansion(f);
      if (x.why.empty()) {
        for (const Buffer& t : x.tiles) {
          auto [it, fresh] = owner.emplace(t.get(), f);
          if (!fresh) {  // one tile, two pipelines: neither can version it alone
            rejected.insert(it->second);
            rejected.insert(f);
          }
        }
        loops.emplace(f, std::move(x));
      }
    }
    open_.push_back(f);
    BufferAccessVisitor::visitFor(f);
    open_.pop_back();
  }
  void access(const Buffer& b) {
    if (!checking) return;
    auto it = owner.find(b.get());
    if (it != owner.end() && std::find(open_.begin(), open_.end(), it->second) == open_.end())
      rejected.insert(it->second);
  }
  void read(const Buffer& b) override { access(b); }
  void write(const Buffer& b) override { access(b); }
};

class Expand : public IRMutator {
 public:
  // `specialized`: the warp-specialized form, of the loops that allow it.
  Expand(const ChooseLoops& chosen, bool specialized) : chosen_(chosen), specialized_(specialized) {
    for (const auto& [loop, x] : chosen.loops) {
      bool ok = !chosen.rejected.count(loop) && (!specialized || loop->warpSpecialize);
      for (const Buffer& t : x.tiles) ok &= chosen.allocated.count(t.get()) > 0;
      if (!ok) continue;
      expand_.insert(loop);
      for (const Buffer& t : x.tiles) depth_[t.get()] = x.depth;
    }
  }
  bool empty() const { return expand_.empty(); }

 protected:
  const ChooseLoops& chosen_;
  bool specialized_;
  std::set<const ForStmt*> expand_;
  std::map<const BufferNode*, int64_t> depth_;

  Stmt mutateAlloc(const AllocStmt* a, const Stmt& self) override {
    auto it = depth_.find(a->buffer.get());
    if (it == depth_.end()) return self;
    return std::make_shared<const AllocStmt>(a->buffer, a->loc, it->second);
  }

  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    if (!expand_.count(f)) return IRMutator::mutateFor(f, self);
    auto consumer = [this](const Stmt& c) { return mutate(c); };
    if (specialized_) return specializeLoop(f, chosen_.loops.at(f), consumer);
    return expandLoop(f, chosen_.loops.at(f), consumer).stmt;
  }
};

}  // namespace

namespace {

Module expand(const Module& m, bool specialized) {
  return rewriteBodies(m, [specialized](const PrimFunc& f) {
    ChooseLoops chosen;
    chosen.visit(f.body);
    chosen.checking = true;
    chosen.visit(f.body);
    Expand expand(chosen, specialized);
    return expand.empty() ? f.body : expand.mutate(f.body);
  });
}

}  // namespace

Module expandPipelines(const Module& m, PassContext&) { return expand(m, false); }

Module warpSpecializePipelines(const Module& m, PassContext&) { return expand(m, true); }

bool rejectAsyncStatements(const Module& m, DiagnosticEngine& diags, const std::string& target) {
  struct FirstAsync : IRVisitor {
    const StmtNode* found = nullptr;
    std::string what;
    static const char* construct(const Stmt& s) {
      auto* a = as<AllocStmt>(s);
      auto* c = as<CopyStmt>(s);
      if (a && a->buffer && a->buffer->scope == MemScope::Barrier) return "a barrier allocation";
      if (a && a->versions != 1) return "a versioned allocation";
      if (c && c->async) return "`copy_async`";
      switch (s->kind) {
        case StmtKind::Version: return "a `version` block";
        case StmtKind::AsyncCommit: return "`commit_group`";
        case StmtKind::AsyncWait: return "`wait_group`";
        case StmtKind::BarrierArrive: return "`barrier_arrive`";
        case StmtKind::BarrierWait: return "`barrier_wait`";
        case StmtKind::WarpSpecialize: return "`warp_specialize`";
        default: return nullptr;
      }
    }
    void visit(const Stmt& s) override {
      if (found || !s) return;
      if (const char* w = construct(s)) {
        found = s.get();
        what = w;
        return;
      }
      IRVisitor::visit(s);
    }
  };
  bool ok = true;
  for (const Func& f : m.funcs) {
    FirstAsync first;
    first.visit(f->body);
    if (!first.found) continue;
    ok = false;
    diags.report(DiagKind::AsyncUnsupported, first.found->loc,
                 first.what + " in `@" + f->name + "`: the " + target +
                     " target compiles Pipelined loops itself and does not take expanded pipelines (expand-pipelines "
                     "output); give it the module before that pass");
  }
  return ok;
}

}  // namespace tlc::passes
