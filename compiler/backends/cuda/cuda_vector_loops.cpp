// Vector accesses in plain Parallel nests (cuda_vector_loops.h): the
// analysis that picks the buffers and the run length, and the emission of
// the chunked loop.
#include "compiler/backends/cuda/cuda_vector_loops.h"

#include <algorithm>
#include <unordered_map>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// How the body uses one buffer.
struct BufferUse {
  bool moves = true;  // every access moves with the innermost loop, one element per iteration
  bool loaded = false, stored = false;
  bool loadAfterStore = false;  // some load follows a store in the body
  bool sameIndex = true;        // every access has the first one's indices
  std::vector<Expr> firstIndex;
};

class Planner {
 public:
  explicit Planner(const Var& inner) : inner_(inner) { laneVars_.insert(inner.get()); }

  bool eligible = true;
  std::unordered_map<const BufferNode*, BufferUse> uses;
  std::vector<const BufferNode*> order;

  void stmt(const Stmt& s) {
    if (!s || !eligible) return;
    switch (s->kind) {
      case StmtKind::Seq:
        for (auto& c : as<SeqStmt>(s)->stmts) stmt(c);
        return;
      case StmtKind::Let: {
        auto* l = as<LetStmt>(s);
        exprs(l->value);
        if (laneDependent(l->value)) {
          laneVars_.insert(l->var.get());
          expanded_[l->var.get()] = expand(l->value);
        }
        stmt(l->body);
        return;
      }
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        exprs(i->cond);
        stmt(i->thenBody);
        stmt(i->elseBody);
        return;
      }
      case StmtKind::Store: {
        auto* st = as<StoreStmt>(s);
        for (auto& e : st->indices) exprs(e);
        exprs(st->value);
        access(st->buffer.get(), st->indices, true);
        return;
      }
      case StmtKind::Evaluate: exprs(as<EvaluateStmt>(s)->value); return;
      case StmtKind::Atomic: {
        auto* a = as<AtomicStmt>(s);
        if (a->prev) {  // a previous value is a lane's own: element by element
          eligible = false;
          return;
        }
        for (auto& e : a->indices) exprs(e);
        exprs(a->value);
        use(a->buffer.get()).moves = false;  // read-modify-write: element accesses
        return;
      }
      default: eligible = false; return;  // loops, tile operations, jumps, allocations
    }
  }

 private:
  BufferUse& use(const BufferNode* b) {
    auto [it, fresh] = uses.try_emplace(b);
    if (fresh) order.push_back(b);
    return it->second;
  }

  void exprs(const Expr& e) {
    struct Loads : IRVisitor {
      Planner* p;
      void visitLoad(const Load* l) override {
        IRVisitor::visitLoad(l);
        p->access(l->buffer.get(), l->indices, false);
      }
    } loads;
    loads.p = this;
    if (e) loads.visit(e);
  }

  bool laneDependent(const Expr& e) const {
    UsesVars u(laneVars_);
    u.visit(e);
    return u.found;
  }
  Expr expand(const Expr& e) const { return expanded_.empty() ? e : substitute(e, expanded_); }

  // Whether the index `e` is `inner + u` with `u` the same in every lane.
  bool movesWithInner(const Expr& e) const {
    LinearForm f = linearForm(expand(e));
    bool seen = false;
    std::unordered_set<const VarNode*> inner{inner_.get()};
    for (auto& [term, coeff] : f.terms) {
      auto* r = as<VarRef>(term);
      if (r && r->var == inner_) {
        if (coeff != 1 || seen) return false;
        seen = true;
        continue;
      }
      UsesVars u(inner);
      u.visit(term);
      if (u.found) return false;
    }
    return seen;
  }

  void access(const BufferNode* b, const std::vector<Expr>& idx, bool store) {
    BufferUse& u = use(b);
    if (store) u.stored = true;
    else {
      if (u.stored) u.loadAfterStore = true;
      u.loaded = true;
    }
    if (u.firstIndex.empty() && !idx.empty()) u.firstIndex = idx;
    else if (idx.size() != u.firstIndex.size()) u.sameIndex = false;
    else
      for (size_t d = 0; d < idx.size(); ++d) u.sameIndex &= structurallyEqual(idx[d], u.firstIndex[d]);
    if (idx.empty()) {
      u.moves = false;
      return;
    }
    for (size_t d = 0; d < idx.size(); ++d) {
      static const std::unordered_set<const VarNode*> kNone;
      UsesVars none(kNone);
      none.visit(idx[d]);
      if (none.loads) u.moves = false;  // an address read from memory: computed per lane
      if (d + 1 < idx.size() && laneDependent(idx[d])) u.moves = false;
    }
    if (u.moves && !movesWithInner(idx.back())) u.moves = false;
  }

  Var inner_;
  std::unordered_set<const VarNode*> laneVars_;  // the innermost variable and the lets that depend on it
  VarMap expanded_;                              // those lets, in terms of the innermost variable
};

}  // namespace

bool LaneProbe::same(const Expr& e) const { return !usesVar(atLane(e), lane); }

bool LaneProbe::moves(const Expr& e) const {
  auto d = constantDifference(atLane(e), add(atFirst(e), makeVarRef(lane)));
  return d && *d == 0;
}

bool LaneProbe::edge(const Expr& condition) const {
  auto* c = as<Binary>(condition);
  return c && isComparison(c->op) && c->op != BinaryOp::Eq && c->op != BinaryOp::Ne &&
         ((moves(c->a) && same(c->b)) || (same(c->a) && moves(c->b)));
}

std::optional<VectorNestPlan> planVectorNest(const std::vector<const ForStmt*>& loops, const Stmt& body,
                                             const std::function<bool(const BufferNode*)>& vectorizable) {
  if (loops.empty()) return std::nullopt;
  int64_t extent;
  if (!constInt(loops.back()->extent, &extent) || extent < 2) return std::nullopt;
  Planner p(loops.back()->var);
  p.stmt(body);
  if (!p.eligible) return std::nullopt;
  VectorNestPlan plan;
  int64_t narrowest = 0;
  for (auto* b : p.order) {
    const BufferUse& u = p.uses[b];
    if (!u.moves || !vectorizable(b)) continue;
    // A buffer both read and written: only in place (each element read before it is written).
    if (u.loaded && u.stored && (u.loadAfterStore || !u.sameIndex)) continue;
    plan.buffers.insert(b);
    int64_t bytes = dtypeBytes(b->dtype);
    narrowest = narrowest ? std::min(narrowest, bytes) : bytes;
  }
  if (plan.buffers.empty() || narrowest <= 0 || narrowest > 8) return std::nullopt;
  plan.lanes = 16 / narrowest;
  while (plan.lanes >= 2 && extent % plan.lanes) plan.lanes /= 2;
  if (plan.lanes < 2) return std::nullopt;
  return plan;
}

// ---------------------------------------------------------------------------
// Emission

bool KernelEmitter::vectorAccessible(const BufferNode* b) const {
  auto it = bufs_.find(b);
  if (it == bufs_.end()) return false;
  const BufferInfo& i = it->second;
  // A shared layout qualifies when its aligned 16-byte runs stay contiguous
  // (a 16-byte chunk swizzle): a chunk's run of lanes, aligned, is one.
  return !i.fragment && !i.tile &&
         (i.place == Placement::Global || (i.place == Placement::Shared && (!i.layout || i.layoutRun == 0)));
}

// Copies `lanes` elements of `t` between arrays `dst` and `src` in accesses
// of at most 16 bytes (both aligned to the first access's size).
std::string KernelEmitter::vectorMove(DType t, int64_t lanes, const std::string& dst, const std::string& src) {
  int64_t bytes = dtypeBytes(t) * lanes, piece = std::min<int64_t>(16, bytes), per = piece / dtypeBytes(t);
  std::string out;
  for (int64_t k = 0; k < bytes / piece; ++k) {
    std::string at = k ? " + " + std::to_string(k * per) : "";
    out += (k ? " " : "") + std::string("tlc::copy_vec<") + typeName(t) + ", " + std::to_string(per) + ">(" + dst + at +
           ", " + src + at + ");";
  }
  return out;
}

// The C condition under which the run of `V` elements of `b` from `first` lies
// inside one row of the buffer (no element another thread's iterations own)
// and is aligned for vector accesses.
std::string KernelEmitter::runReadable(const Buffer& b, const std::vector<Expr>& first, int64_t V) {
  const Expr& col = first.back();
  Expr inside = logicalAnd(inBounds(b, first), lt(add(col, makeInt(V - 1, col->dtype)), b->shape.back()));
  return expr(inside) + " && tlc::aligned(&" + access(b, first) + ", " +
         std::to_string(std::min<int64_t>(16, dtypeBytes(b->dtype) * V)) + ")";
}

void KernelEmitter::ensureVectorLoads(const std::vector<Expr>& exprs) {
  if (vecNest_->straight) return;
  struct Collect : IRVisitor {
    std::vector<const Load*> loads;
    void visitLoad(const Load* l) override {
      IRVisitor::visitLoad(l);
      loads.push_back(l);
    }
  } c;
  for (auto& e : exprs)
    if (e) c.visit(e);
  for (const Load* l : c.loads) {
    auto it = vecNest_->loadOf.find(l);
    if (it == vecNest_->loadOf.end()) continue;
    VectorRun& run = vecNest_->loads[it->second];
    const Buffer& b = l->buffer;
    int64_t V = vecNest_->lanes;
    open("if (!" + run.ok + ")");
    // The run's first column; the run is read when runReadable.
    Var col = makeVar(run.name + "_col", l->indices.back()->dtype);
    line("const " + typeName(col->dtype) + " " + varName(col) + " = " +
         expr(sub(l->indices.back(), makeCast(col->dtype, makeVarRef(vecNest_->laneVar)))) + ";");
    std::vector<Expr> first = l->indices;
    first.back() = makeVarRef(col);
    open("if (" + runReadable(b, first, V) + ")");
    line(vectorMove(b->dtype, V, run.name, "&" + access(b, first)));
    line(run.ok + " = true;");
    close();
    close();
  }
}

// See the header. The conditions' conjuncts either do not depend on the lane
// (evaluated at the first lane) or compare one side that moves with the lane,
// one element per lane, with one that does not (evaluated at the first and
// the last lane: they then hold between). The body's lets are inlined.
std::string KernelEmitter::wholeChunkCondition(const std::vector<const ForStmt*>& nest, const Stmt& body,
                                               const Var& first, VectorNest& vn) {
  const ForStmt* inner = nest.back();
  int64_t extent = 0;
  if (!constInt(inner->extent, &extent)) return "";
  const int64_t V = vn.lanes;
  // The body's lets (inlined), its ifs and their conditions' conjuncts.
  struct Walk : IRVisitor {
    std::unordered_map<const VarNode*, Expr> lets;
    std::vector<Expr> terms;
    std::unordered_set<const IfStmt*> taken;
    bool ok = true;
    void visitLet(const LetStmt* l) override {
      lets[l->var.get()] = substitute(l->value, lets);
      visit(l->body);
    }
    void visitIf(const IfStmt* i) override {
      conjuncts(substitute(i->cond, lets), &terms);
      taken.insert(i);
      visit(i->thenBody);
    }
    void visitFor(const ForStmt*) override { ok = false; }
  } walk;
  walk.visit(body);
  if (!walk.ok) return "";
  // The analysis: the chunk's first iteration inner.min + run * V, lane l.
  Var run = makeVar("run"), lane = makeVar("lane");
  std::vector<passes::VarRange> ranges;
  for (size_t d = 0; d + 1 < nest.size(); ++d) ranges.push_back({nest[d]->var, nest[d]->min, nest[d]->extent});
  ranges.push_back({run, makeInt(0), makeInt(extent / V)});
  ranges.push_back({lane, makeInt(0), makeInt(V)});
  auto cast = [&](Expr e) { return e->dtype == inner->var->dtype ? e : makeCast(inner->var->dtype, e); };
  Expr symFirst = cast(add(inner->min, mul(makeVarRef(run), makeInt(V))));
  auto at = [&](const Expr& e, const Expr& j) { return passes::simplifyExpr(substitute(e, inner->var, j), ranges); };
  LaneProbe probe{[&](const Expr& e) { return at(e, cast(add(symFirst, makeVarRef(lane)))); },
                  [&](const Expr& e) { return at(e, symFirst); }, lane};
  // The emitted form: the inner variable at the first (or last) lane of the chunk.
  Expr firstJ = cast(add(inner->min, makeVarRef(first)));
  Expr lastJ = cast(add(firstJ, makeInt(V - 1, inner->var->dtype)));
  Expr whole = makeBool(true);
  for (const Expr& t : walk.terms) {
    std::unordered_set<const VarNode*> none;
    UsesVars reads(none);
    reads.visit(t);
    if (reads.loads) return "";
    if (probe.same(t)) {
      whole = logicalAnd(whole, substitute(t, inner->var, firstJ));
      continue;
    }
    if (!probe.edge(t)) return "";
    whole = logicalAnd(whole, logicalAnd(substitute(t, inner->var, firstJ), substitute(t, inner->var, lastJ)));
  }
  std::string out = expr(whole);
  // Every vector load's run inside its buffer's row, and aligned.
  for (auto& r : vn.loads) {
    const Load* l = r.load;
    std::vector<Expr> idx;
    for (const Expr& e : l->indices) idx.push_back(substitute(substitute(e, walk.lets), inner->var, firstJ));
    out += " && " + runReadable(l->buffer, idx, V);
    r.first = "&" + access(l->buffer, idx);
  }
  vn.taken = std::move(walk.taken);
  return out;
}

// A thread with several chunks loads the runs of a group of them first when
// some run is in global memory and every chunk can be tested whole up front. A group holds at most 64 bytes of
// runs (16 registers), so that the arrays do not cost the kernel blocks per
// SM; the group divides the thread's chunks.
int64_t KernelEmitter::batchedChunks(const Expr& totalChunks, const VectorNest& vn, const std::string& whole) const {
  constexpr int64_t kGroupBytes = 64;
  int64_t total = 0;
  if (whole.empty() || vn.loads.empty() || noUnroll_ || !constInt(totalChunks, &total) || total % threads_) return 0;
  int64_t perThread = total / threads_, bytes = 0;
  if (perThread < 2 || perThread > 64) return 0;
  bool global = false;
  for (auto& r : vn.loads) {
    bytes += dtypeBytes(r.load->buffer->dtype) * vn.lanes;
    global |= bufs_.at(r.load->buffer.get()).place == Placement::Global;
  }
  if (!global) return 0;  // shared memory's latency is short
  for (int64_t g = std::min(perThread, kGroupBytes / bytes); g >= 2; --g)
    if (perThread % g == 0) return g;
  return 0;
}

bool KernelEmitter::emitVectorNest(const std::vector<const ForStmt*>& nest, const Stmt& body) {
  auto plan = planVectorNest(nest, body, [&](const BufferNode* b) { return vectorAccessible(b); });
  if (!plan) return false;
  const int64_t V = plan->lanes;
  int64_t extent;
  constInt(nest.back()->extent, &extent);
  VectorNest vn;
  vn.lanes = V;
  // The body's vector accesses: loads of one address share a run.
  struct Scan : IRVisitor {
    const VectorNestPlan& plan;
    VectorNest& vn;
    KernelEmitter& em;
    Scan(const VectorNestPlan& p, VectorNest& v, KernelEmitter& e) : plan(p), vn(v), em(e) {}
    void visitLoad(const Load* l) override {
      IRVisitor::visitLoad(l);
      if (!plan.buffers.count(l->buffer.get()) || vn.loadOf.count(l)) return;
      for (size_t k = 0; k < vn.loads.size(); ++k) {
        auto* o = vn.loads[k].load;
        bool same = o->buffer == l->buffer && o->indices.size() == l->indices.size();
        for (size_t d = 0; same && d < l->indices.size(); ++d) same = structurallyEqual(o->indices[d], l->indices[d]);
        if (same) {
          vn.loadOf[l] = k;
          return;
        }
      }
      vn.loadOf[l] = vn.loads.size();
      vn.loads.push_back({l, nullptr, em.fresh("vld_" + em.bufs_[l->buffer.get()].name), "", ""});
    }
    void visitStore(const StoreStmt* s) override {
      IRVisitor::visitStore(s);
      if (!plan.buffers.count(s->buffer.get())) return;
      vn.storeOf[s] = vn.stores.size();
      vn.stores.push_back({nullptr, s, em.fresh("vst_" + em.bufs_[s->buffer.get()].name), "", ""});
    }
  } scan(*plan, vn, *this);
  scan.visit(body);

  // Chunks of V innermost iterations, spread over the threads.
  Expr chunksPerRow = makeInt(extent / V);
  Expr total = chunksPerRow;
  for (size_t d = 0; d + 1 < nest.size(); ++d) total = mul(total, nest[d]->extent);
  Var firstVar = makeVar("run_first");
  markNonNegative(firstVar);
  Var laneVar = makeVar("lane");
  markNonNegative(laneVar);
  vn.laneVar = laneVar;
  vn.lane = varName(laneVar);
  const ForStmt* inner = nest.back();
  for (const ForStmt* l : nest)
    if (isNonNegative(l->min)) markNonNegative(l->var);
  // A chunk whose lanes all pass the body's conditions and whose loads are
  // whole runs goes straight: its vectors loaded first, no test per lane.
  // Any other chunk (an edge of the tensor) runs the lanes one by one.
  std::string whole = wholeChunkCondition(nest, body, firstVar, vn);
  std::unordered_set<const IfStmt*> taken = std::move(vn.taken);
  // The chunk's variables: those of the nest and its first column.
  auto defineChunk = [&](const Var& chunk) {
    defineNestVars(nest, nest.size() - 1, floorDiv(makeVarRef(chunk), chunksPerRow));
    Expr runFirst = mul(floorMod(makeVarRef(chunk), chunksPerRow), makeInt(V));
    line("const int " + varName(firstVar) + " = " + expr(runFirst) + ";");
  };
  auto declareLoads = [&](bool arrays) {
    for (auto& r : vn.loads) {
      r.ok = fresh(r.name + "_ok");
      if (arrays)
        line("__align__(16) " + typeName(r.load->buffer->dtype) + " " + r.name + "[" + std::to_string(V) + "];");
      line("bool " + r.ok + " = false;");
    }
  };
  auto lanes = [&] {
    open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + vn.lane + " = 0; " + vn.lane + " < " +
         std::to_string(V) + "; ++" + vn.lane + ")");
    Expr j = add(add(inner->min, makeVarRef(firstVar)), makeVarRef(laneVar));
    if (j->dtype != inner->var->dtype) j = makeCast(inner->var->dtype, j);
    line("const " + typeName(inner->var->dtype) + " " + varName(inner->var) + " = " + expr(j) + ";");
    vecNest_ = &vn;
    ++parallelDepth_;
    emitThread(body);
    --parallelDepth_;
    vecNest_ = nullptr;
    close();
  };
  auto declareStores = [&] {
    for (auto& r : vn.stores) {
      std::string T = typeName(r.store->buffer->dtype);
      r.ok = fresh(r.name + "_mask");
      line("__align__(16) " + T + " " + r.name + "[" + std::to_string(V) + "];");
      line("unsigned " + r.ok + " = 0u;");
      line(T + "* " + r.name + "_at = nullptr;");
    }
  };
  // The lanes of a whole chunk, its runs loaded.
  auto straightLanes = [&] {
    vn.straight = true;
    vn.taken = taken;
    lanes();
    vn.straight = false;
    vn.taken.clear();
  };
  auto storeRuns = [&] {
    std::string full = std::to_string((1ull << V) - 1) + "u";
    for (auto& r : vn.stores) {
      DType t = r.store->buffer->dtype;
      std::string at = r.name + "_at";
      open("if (" + r.ok + " == " + full + " && tlc::aligned(" + at + ", " +
           std::to_string(std::min<int64_t>(16, dtypeBytes(t) * V)) + "))");
      line(vectorMove(t, V, at, r.name));
      close("} else {");
      ++indent_;
      line("#pragma unroll");
      const std::string& l = vn.lane;
      line("for (int " + l + " = 0; " + l + " < " + std::to_string(V) + "; ++" + l + ") if ((" + r.ok + " >> " + l +
           ") & 1u) " + at + "[" + l + "] = " + r.name + "[" + l + "];");
      close();
    }
  };
  // A chunk not known whole: its lanes one by one, each run loaded at the
  // first lane that reads it.
  auto edgeChunk = [&] {
    declareLoads(true);
    declareStores();
    lanes();
    storeRuns();
  };

  int64_t group = batchedChunks(total, vn, whole);
  if (!group) {
    Var chunk = openLoop(total, true, "chunk");
    defineChunk(chunk);
    if (whole.empty()) {
      edgeChunk();
    } else {
      declareLoads(true);
      declareStores();
      open("if (" + whole + ")");
      for (auto& r : vn.loads) line(vectorMove(r.load->buffer->dtype, V, r.name, r.first));
      straightLanes();
      close("} else {");
      ++indent_;
      lanes();
      close();
      storeRuns();
    }
    close();
    return true;
  }
  // Several chunks per thread: the runs of `group` whole chunks are loaded
  // before any of them is computed and stored, so that their loads (and the
  // index loads their addresses need) are in flight together instead of one
  // chunk's latency after another's; the group's other chunks (edges) then
  // run one at a time. Iterations of a Parallel nest are independent, and a
  // buffer the nest both reads and writes as vectors is read and written at
  // one element per iteration, so no chunk's store reaches a run another
  // chunk loads. Which chunks are whole is a bit mask, so that no array of
  // the thread's is indexed by a loop counter.
  int64_t perThread = 0;
  constInt(total, &perThread);
  perThread /= threads_;
  const std::string G = std::to_string(group), Vs = std::to_string(V);
  auto unrolled = [&](const std::string& k, int64_t count, bool unroll) {
    open(std::string(unroll ? "#pragma unroll" : "#pragma unroll 1") + "\n" + std::string(indent_ * 2, ' ') +
         "for (int " + k + " = 0; " + k + " < " + std::to_string(count) + "; ++" + k + ")");
  };
  std::string kb = fresh("kb"), kk = fresh("kk"), wholeMask = fresh("whole");
  Var chunk = makeVar("chunk");
  markNonNegative(chunk);
  std::string first = perThread > group ? kb + " * " + G + " + " + kk : kk;
  std::string isWhole = "((" + wholeMask + " >> " + kk + ") & 1u)";
  auto defineGroupChunk = [&] {
    line("const int " + varName(chunk) + " = (" + first + ") * " + std::to_string(threads_) + " + tid;");
    defineChunk(chunk);
  };
  if (perThread > group) unrolled(kb, perThread / group, true);
  else open("");
  line("unsigned " + wholeMask + " = 0u;");
  for (auto& r : vn.loads)
    line("__align__(16) " + typeName(r.load->buffer->dtype) + " " + r.name + "_all[" + G + "][" + Vs + "];");
  unrolled(kk, group, true);
  defineGroupChunk();
  // (The test in a variable and the mask set unconditionally: the group's
  // tests and loads then compile to predicated code with every load issued
  // before the first use.)
  std::string w = fresh("w");
  line("const bool " + w + " = " + whole + ";");
  line(wholeMask + " |= (unsigned)" + w + " << " + kk + ";");
  open("if (" + w + ")");
  for (auto& r : vn.loads) line(vectorMove(r.load->buffer->dtype, V, r.name + "_all[" + kk + "]", r.first));
  close();
  close();
  unrolled(kk, group, true);
  open("if (" + isWhole + ")");
  defineGroupChunk();
  for (auto& r : vn.loads)
    line(typeName(r.load->buffer->dtype) + "* const " + r.name + " = " + r.name + "_all[" + kk + "];");
  declareStores();
  straightLanes();
  storeRuns();
  close();
  close();
  unrolled(kk, group, false);
  open("if (!" + isWhole + ")");
  defineGroupChunk();
  edgeChunk();
  close();
  close();
  close();
  return true;
}

}  // namespace tlc::cuda
