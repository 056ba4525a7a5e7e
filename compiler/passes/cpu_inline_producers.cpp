#include "compiler/passes/cpu_inline_producers.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/equality.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/cpu_access_sets.h"
#include "compiler/passes/cpu_index_math.h"
#include "compiler/support/diagnostics.h"
#include "compiler/passes/cpu_intrinsics.h"

namespace tlc::cpu {

using namespace ir;

namespace {

bool isBlockLocal(const Buffer& b) {
  return b->scope == MemScope::Shared || b->scope == MemScope::Fragment || b->scope == MemScope::Local;
}

// A nest of loops storing each element of a block-local buffer once, the
// store under lets of its own (values a read of the buffer under a select
// binds, see InlineReads).
struct Producer {
  const StoreStmt* store = nullptr;
  std::vector<const ForStmt*> loops;  // outermost first
  std::vector<const LetStmt*> lets;   // outermost first
  // For each loop, the buffer dimension its variable indexes.
  std::vector<size_t> dims;
  // The innermost loop's body: the lets and the store.
  const Stmt& body() const { return loops.back()->body; }
};

std::optional<Producer> matchProducer(const Stmt& s) {
  Producer p;
  Stmt cur = s;
  while (auto* f = as<ForStmt>(cur)) {
    if (f->forKind == ForKind::Pipelined) return std::nullopt;
    p.loops.push_back(f);
    cur = f->body;
  }
  while (auto* l = as<LetStmt>(cur)) {
    p.lets.push_back(l);
    cur = l->body;
  }
  p.store = as<StoreStmt>(cur);
  if (!p.store || p.loops.empty() || !isBlockLocal(p.store->buffer)) return std::nullopt;
  // An atomic's previous value (cpu-lower-atomics) is stored where the update runs.
  if (auto* c = as<Call>(p.store->value); c && cpu_intrinsics::isAtomic(c->callee)) return std::nullopt;
  const Buffer& b = p.store->buffer;
  size_t k = 0;
  for (size_t d = 0; d < b->shape.size(); ++d) {
    const Expr& idx = p.store->indices[d];
    int64_t c = 0, extent = 0;
    if (auto* v = as<VarRef>(idx)) {
      if (k == p.loops.size() || v->var != p.loops[k]->var || !constInt(p.loops[k]->min, &c) || c != 0 ||
          !sameExpr(p.loops[k]->extent, b->shape[d]))
        return std::nullopt;
      p.dims.push_back(d);
      ++k;
    } else if (!(constInt(idx, &c) && c == 0 && constInt(b->shape[d], &extent) && extent == 1)) {
      return std::nullopt;
    }
  }
  if (k != p.loops.size()) return std::nullopt;
  return p;
}

// Whether every load of the producer's buffer in its value reads the element it stores.
bool readsOwnElementOnly(const Producer& p) {
  struct V : IRVisitor {
    const Producer& p;
    bool ok = true;
    explicit V(const Producer& pr) : p(pr) {}
    void visitLoad(const Load* l) override {
      if (l->buffer == p.store->buffer && !structurallyEqual(l->indices, p.store->indices)) ok = false;
      IRVisitor::visitLoad(l);
    }
  } v(p);
  v.visit(p.body());
  return v.ok;
}

// Float operations and calls in an expression (index arithmetic is free).
struct Cost {
  int floatOps = 0;
  bool calls = false;
  bool cheap() const { return !calls && floatOps <= 3; }
};

template <class Node>
Cost costOf(const Node& e) {
  struct V : IRVisitor {
    Cost c;
    void visitCall(const Call* n) override {
      c.calls = true;
      IRVisitor::visitCall(n);
    }
    void visitBinary(const Binary* n) override {
      c.floatOps += isFloat(n->a->dtype);
      IRVisitor::visitBinary(n);
    }
    void visitUnary(const Unary* n) override {
      c.floatOps += isFloat(n->dtype);
      IRVisitor::visitUnary(n);
    }
    void visitCast(const Cast* n) override {
      c.floatOps += isFloat(n->dtype) || isFloat(n->value->dtype);
      IRVisitor::visitCast(n);
    }
    void visitSelect(const Select* n) override {
      c.floatOps += 1;
      IRVisitor::visitSelect(n);
    }
  } v;
  v.visit(e);
  return v.c;
}

// Whether every load in `e` walks memory contiguously (or stays put) as `w` steps by one.
template <class Node>
bool contiguousAlong(const Node& e, const Var& w) {
  struct V : IRVisitor {
    const VarNode* w;
    bool ok = true;
    void visitLoad(const Load* l) override {
      for (size_t d = 0; d + 1 < l->indices.size(); ++d) ok = ok && coefficientOf(l->indices[d], w) == 0;
      if (!l->indices.empty()) {
        auto c = coefficientOf(l->indices.back(), w);
        ok = ok && c && (*c == 0 || *c == 1);
      }
      IRVisitor::visitLoad(l);
    }
  } v;
  v.w = w.get();
  v.visit(e);
  return v.ok;
}

// Whether the load walks its buffer's last dimension element by element as `w` steps by one.
bool walksRow(const Load& l, const Var& w) {
  if (l.indices.empty()) return false;
  for (size_t d = 0; d + 1 < l.indices.size(); ++d)
    if (coefficientOf(l.indices[d], w.get()) != 0) return false;
  return coefficientOf(l.indices.back(), w.get()) == 1;
}

// The producer's lets and value with its loop variables replaced by a
// read's indices (the lets' variables fresh).
struct Instance {
  std::vector<std::pair<Var, Expr>> lets;
  Expr value;
  // Whether its loads walk memory contiguously along `w` (contiguousAlong).
  bool contiguous(const Var& w) const {
    for (const auto& l : lets)
      if (!cpu::contiguousAlong(l.second, w)) return false;
    return cpu::contiguousAlong(value, w);
  }
};

Instance instantiate(const Producer& p, const std::vector<Expr>& indices) {
  VarMap map;
  for (size_t k = 0; k < p.loops.size(); ++k) {
    const Var& v = p.loops[k]->var;
    const Expr& i = indices[p.dims[k]];
    map[v.get()] = i->dtype == v->dtype ? i : makeCast(v->dtype, i);
  }
  Instance in;
  for (const LetStmt* l : p.lets) {
    Var v = makeVar(l->var->name, l->var->dtype, l->var->loc);
    in.lets.push_back({v, substitute(l->value, map)});
    map[l->var.get()] = makeVarRef(v, l->loc);
  }
  in.value = substitute(p.store->value, map);
  return in;
}

// The loads of a buffer in a statement, with the loops around each (inside
// the statement), whether only some evaluations reach it (in a branch of a
// select, which loads lazily), and whether it is in a store or an evaluate
// (where lets can bind values in front of it).
struct ReadSite {
  const Load* load;
  std::vector<const ForStmt*> loops;
  bool lazy = false, bindable = false;
  bool copied = false;  // the whole value of a store (or one arm of a select that is)
};

std::vector<ReadSite> readSites(const Stmt& s, const BufferNode* x) {
  struct V : IRVisitor {
    const BufferNode* x;
    std::vector<const ForStmt*> loops;
    std::vector<ReadSite> sites;
    int lazy = 0;
    bool bindable = false;
    const Load* copy = nullptr;  // the load a store's value is
    explicit V(const BufferNode* b) : x(b) {}
    void visitFor(const ForStmt* f) override {
      loops.push_back(f);
      IRVisitor::visitFor(f);
      loops.pop_back();
    }
    void visitStore(const StoreStmt* n) override {
      bindable = true;
      Expr v = n->value;
      if (auto* sel = as<Select>(v)) v = sel->t;
      copy = as<Load>(v);
      IRVisitor::visitStore(n);
      copy = nullptr;
      bindable = false;
    }
    void visitEvaluate(const EvaluateStmt* n) override {
      bindable = true;
      IRVisitor::visitEvaluate(n);
      bindable = false;
    }
    void visitSelect(const Select* n) override {
      visit(n->cond);
      ++lazy;
      visit(n->t);
      visit(n->f);
      --lazy;
    }
    void visitLoad(const Load* l) override {
      if (l->buffer.get() == x) sites.push_back({l, loops, lazy > 0, bindable, l == copy});
      IRVisitor::visitLoad(l);
    }
  } v(x);
  v.visit(s);
  return v.sites;
}

// Whether `i` lies in [0, extent) for every value of the loop variables it
// uses, all of them among `loops` with constant bounds.
bool provablyInside(const Expr& i, int64_t extent, const std::vector<const ForStmt*>& loops) {
  LinearForm f = linearForm(i);
  int64_t lo = f.constant, hi = f.constant;
  for (const auto& [term, coeff] : f.terms) {
    auto* ref = as<VarRef>(term);
    const ForStmt* loop = nullptr;
    for (const ForStmt* l : loops) loop = ref && l->var == ref->var ? l : loop;
    int64_t mn = 0, ext = 0;
    if (!loop || !constInt(loop->min, &mn) || !constInt(loop->extent, &ext) || ext <= 0) return false;
    int64_t a = coeff * mn, b = coeff * (mn + ext - 1);
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return lo >= 0 && hi < extent;
}

// Whether the indices of a read lie inside its buffer for every iteration
// of the loops around it.
bool readInside(const Buffer& x, const std::vector<Expr>& indices, const std::vector<const ForStmt*>& loops) {
  for (size_t d = 0; d < x->shape.size(); ++d) {
    int64_t extent = 0;
    if (!constInt(x->shape[d], &extent) || !provablyInside(indices[d], extent, loops)) return false;
  }
  return true;
}

// Replaces the reads of the producer's buffer by its value. A read that only
// some evaluations reach (a branch of a select, which loads lazily) would put
// the value's loads under the select's condition, where the vectorizer can
// only mask them; when its indices lie inside the buffer, the value is bound
// by a let around the statement instead, computed for every element as the
// producer did. The producer's own lets are bound in front of the statement
// too (consumers() admits such producers only where that is possible).
class InlineReads : public IRMutator {
 public:
  explicit InlineReads(const Producer& p) : p_(p) {}
  using IRMutator::mutate;

  Stmt mutate(const Stmt& s) override {
    if (auto* f = as<ForStmt>(s)) {
      loops_.push_back(f);
      Stmt out = IRMutator::mutate(s);
      loops_.pop_back();
      return out;
    }
    if (!s || (s->kind != StmtKind::Store && s->kind != StmtKind::Evaluate)) return IRMutator::mutate(s);
    std::vector<std::pair<Var, Expr>> saved;
    saved.swap(lets_);
    bindable_ = true;
    Stmt out = IRMutator::mutate(s);
    bindable_ = false;
    for (size_t i = lets_.size(); i-- > 0;)
      out = std::make_shared<const LetStmt>(lets_[i].first, lets_[i].second, out, s->loc);
    lets_.swap(saved);
    return out;
  }

 protected:
  Expr mutateSelect(const Select* n, const Expr& self) override {
    Expr c = mutate(n->cond);
    ++lazy_;
    Expr t = mutate(n->t), f = mutate(n->f);
    --lazy_;
    if (c == n->cond && t == n->t && f == n->f) return self;
    return makeSelect(c, t, f, n->loc);
  }
  Expr mutateLoad(const Load* n, const Expr& self) override {
    Expr e = IRMutator::mutateLoad(n, self);
    auto* l = as<Load>(e);
    const Buffer& x = p_.store->buffer;
    if (!l || l->buffer != x) return e;
    Instance in = instantiate(p_, l->indices);
    bool bind = bindable_ && lazy_ > 0 && readInside(x, l->indices, loops_);
    TLC_CHECK(in.lets.empty() || (bindable_ && (lazy_ == 0 || bind)), "cpu-inline-producers: a let without a place");
    if (!bind) {
      lets_.insert(lets_.end(), in.lets.begin(), in.lets.end());
      return in.value;
    }
    for (const auto& [var, read] : boundReads_)
      if (structurallyEqual(read, l->indices))
        for (const auto& bound : lets_)
          if (bound.first.get() == var) return makeVarRef(bound.first, n->loc);
    lets_.insert(lets_.end(), in.lets.begin(), in.lets.end());
    Var v = makeVar(x->name + "_v", x->dtype, n->loc);
    lets_.push_back({v, in.value});
    boundReads_.push_back({v.get(), l->indices});
    return makeVarRef(v, n->loc);
  }

 private:
  const Producer& p_;
  std::vector<const ForStmt*> loops_;
  std::vector<std::pair<Var, Expr>> lets_;
  std::vector<std::pair<const VarNode*, std::vector<Expr>>> boundReads_;
  int lazy_ = 0;
  bool bindable_ = false;
};

// How a statement first touches x: not at all, by overwriting all of it
// (a producer that does not read it), or by reading it.
enum class First { None, Kills, Reads };

First firstAccess(const Stmt& s, const BufferNode* x) {
  auto readsIn = [&](const Expr& e) { return e && accessSetsOf(e).readsOf(x) > 0; };
  if (auto p = matchProducer(s); p && p->store->buffer.get() == x && accessSetsOf(p->body()).readsOf(x) == 0)
    return First::Kills;
  switch (s->kind) {
    case StmtKind::Seq:
      for (const Stmt& c : as<SeqStmt>(s)->stmts)
        if (First f = firstAccess(c, x); f != First::None) return f;
      return First::None;
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      if (readsIn(i->cond)) return First::Reads;
      First t = firstAccess(i->thenBody, x), e = i->elseBody ? firstAccess(i->elseBody, x) : First::None;
      if (t == First::Reads || e == First::Reads) return First::Reads;
      return t == First::Kills && e == First::Kills ? First::Kills : First::None;
    }
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      if (readsIn(f->min) || readsIn(f->extent)) return First::Reads;
      // The body may run zero times: it never kills for sure.
      return firstAccess(f->body, x) == First::Reads ? First::Reads : First::None;
    }
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      return readsIn(l->value) ? First::Reads : firstAccess(l->body, x);
    }
    default: {
      AccessSets a = accessSetsOf(s);
      return a.readsOf(x) > 0 || a.opaque.count(x) ? First::Reads : First::None;
    }
  }
}

// One step from a statement to a child statement list or body.
struct Step {
  const StmtNode* node;
  size_t child;  // Seq: the statement's index; If: 0 then, 1 else; others: 0
};
using Path = std::vector<Step>;

First firstAccessIn(const std::vector<Stmt>& stmts, size_t from, size_t to, const BufferNode* x) {
  for (size_t i = from; i < to && i < stmts.size(); ++i)
    if (First f = firstAccess(stmts[i], x); f != First::None) return f;
  return First::None;
}

// Whether nothing can read the values x holds at the end of the list that
// `path` leads to: walks out through the statements that follow, and for
// loops, the next iterations, up to the list that allocates x.
bool deadAfter(const Path& path, const BufferNode* x) {
  for (size_t level = path.size(); level-- > 0;) {
    const Step& st = path[level];
    if (st.node->kind == StmtKind::Kernel) return true;
    if (st.node->kind == StmtKind::For) {
      // The next iteration runs the body again from its start; after the
      // last one, what follows the loop runs.
      if (firstAccess(static_cast<const ForStmt*>(st.node)->body, x) == First::Reads) return false;
      continue;
    }
    if (st.node->kind != StmtKind::Seq) continue;
    auto* seq = static_cast<const SeqStmt*>(st.node);
    if (First f = firstAccessIn(seq->stmts, st.child + 1, seq->stmts.size(), x); f != First::None)
      return f == First::Kills;
    for (const Stmt& s : seq->stmts)
      if (auto* a = as<AllocStmt>(s); a && a->buffer.get() == x) return true;  // out of scope
  }
  return true;
}

class Inliner {
 public:
  explicit Inliner(const Stmt& body) : counts_(accessSetsOf(body)) {}

  // Rewrites the first producer that can be inlined; null when there is none.
  Stmt once(const Stmt& s) {
    path_.clear();
    return search(s);
  }
  std::unordered_set<const BufferNode*> eliminated;

 private:
  Stmt search(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Seq: {
        auto* seq = as<SeqStmt>(s);
        if (auto out = tryList(seq)) return out;
        for (size_t i = 0; i < seq->stmts.size(); ++i) {
          path_.push_back({seq, i});
          Stmt c = search(seq->stmts[i]);
          path_.pop_back();
          if (!c) continue;
          std::vector<Stmt> stmts = seq->stmts;
          stmts[i] = c;
          return makeSeq(stmts, s->loc);
        }
        return nullptr;
      }
      case StmtKind::Kernel: {
        auto* k = as<KernelStmt>(s);
        path_.push_back({k, 0});
        Stmt b = search(k->body);
        path_.pop_back();
        if (!b) return nullptr;
        return std::make_shared<const KernelStmt>(k->grid, k->blockVars, k->threads, b, k->loc, k->swizzle);
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        path_.push_back({f, 0});
        Stmt b = search(f->body);
        path_.pop_back();
        if (!b) return nullptr;
        auto out = std::make_shared<ForStmt>(f->var, f->min, f->extent, f->forKind, b, f->loc);
        out->copyLoopAttributes(*f);
        return out;
      }
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        path_.push_back({i, 0});
        Stmt t = search(i->thenBody);
        path_.pop_back();
        if (t) return std::make_shared<const IfStmt>(i->cond, t, i->elseBody, i->loc, i->likely);
        if (!i->elseBody) return nullptr;
        path_.push_back({i, 1});
        Stmt e = search(i->elseBody);
        path_.pop_back();
        if (!e) return nullptr;
        return std::make_shared<const IfStmt>(i->cond, i->thenBody, e, i->loc, i->likely);
      }
      case StmtKind::Let: {
        auto* l = as<LetStmt>(s);
        path_.push_back({l, 0});
        Stmt b = search(l->body);
        path_.pop_back();
        if (!b) return nullptr;
        return std::make_shared<const LetStmt>(l->var, l->value, b, l->loc);
      }
      default:
        return nullptr;
    }
  }

  Stmt tryList(const SeqStmt* seq) {
    const std::vector<Stmt>& stmts = seq->stmts;
    for (size_t p = 0; p < stmts.size(); ++p) {
      auto prod = matchProducer(stmts[p]);
      if (!prod) continue;
      const BufferNode* x = prod->store->buffer.get();
      AccessSets valueAcc = accessSetsOf(prod->body());
      if (counts_.opaque.count(x) || valueAcc.readsOf(x) > 0 || !valueAcc.opaque.empty()) continue;
      auto end = consumers(*prod, stmts, p);
      if (!end) continue;
      std::vector<Stmt> out(stmts.begin(), stmts.begin() + p);
      InlineReads inliner(*prod);
      for (size_t j = p + 1; j <= *end; ++j) out.push_back(inliner.mutate(stmts[j]));
      out.insert(out.end(), stmts.begin() + *end + 1, stmts.end());
      eliminated.insert(x);
      return makeSeq(out, seq->loc);
    }
    return nullptr;
  }

  // The index of the last statement whose reads of x take the producer's
  // value, when all of them can; nullopt otherwise.
  std::optional<size_t> consumers(const Producer& prod, const std::vector<Stmt>& stmts, size_t p) {
    const BufferNode* x = prod.store->buffer.get();
    AccessSets valueAcc = accessSetsOf(prod.body());
    std::vector<ReadSite> sites;
    std::optional<size_t> end;
    bool overwritten = false, valueChanged = false;
    for (size_t j = p + 1; j < stmts.size() && !overwritten; ++j) {
      AccessSets a = accessSetsOf(stmts[j]);
      bool reads = a.readsOf(x) > 0;
      if (reads && (valueChanged || a.readOpaquely(x))) return std::nullopt;
      if (a.writes.count(x)) {
        // Only a whole overwrite that reads the element it stores.
        auto q = matchProducer(stmts[j]);
        if (!q || q->store->buffer.get() != x || !readsOwnElementOnly(*q)) return std::nullopt;
        overwritten = true;
      }
      for (const BufferNode* b : a.writes)
        if (valueAcc.readsOf(b) > 0) valueChanged = true;
      if (reads && valueChanged && !overwritten) return std::nullopt;
      if (!reads) continue;
      // An overwrite writes only x, which the value does not read.
      for (ReadSite& s : readSites(stmts[j], x)) sites.push_back(std::move(s));
      end = j;
    }
    if (!end) return std::nullopt;
    // Without an overwrite, nothing after the list may read what the producer stored.
    if (!overwritten && !deadAfterList(stmts, *end, x)) return std::nullopt;
    Cost cost = costOf(prod.body());
    if (!cost.cheap() && sites.size() != 1) return std::nullopt;
    const Var& inner = prod.loops.back()->var;
    bool contiguous = contiguousAlong(prod.body(), inner);
    for (const ReadSite& s : sites) {
      if (!cost.cheap())
        for (const ForStmt* f : s.loops) {
          bool indexes = false;
          for (const Expr& i : s.load->indices) indexes = indexes || usesVar(i, f->var);
          if (!indexes) return std::nullopt;  // the value would be computed again for each iteration
        }
      if (!prod.lets.empty() &&
          !(s.bindable && (!s.lazy || readInside(prod.store->buffer, s.load->indices, s.loops))))
        return std::nullopt;  // no place for the lets
      if (!s.loops.empty() && !instantiate(prod, s.load->indices).contiguous(s.loops.back()->var)) {
        // Read transposed: reading the producer's sources along their columns would gather.
        if (contiguous) return std::nullopt;
        // A transposing producer (a nest the backend moves through
        // registers) read along the rows it writes by a computation:
        // inlined, the computation would gather. A copy that reads it
        // becomes a transposing nest itself.
        if (!s.copied && walksRow(*s.load, s.loops.back()->var)) return std::nullopt;
      }
    }
    return end;
  }

  // Whether the values of x are dead after statement `last` of the list the
  // current path leads to.
  bool deadAfterList(const std::vector<Stmt>& stmts, size_t last, const BufferNode* x) {
    if (First f = firstAccessIn(stmts, last + 1, stmts.size(), x); f != First::None) return f == First::Kills;
    for (const Stmt& s : stmts)
      if (auto* a = as<AllocStmt>(s); a && a->buffer.get() == x) return true;
    return deadAfter(path_, x);
  }

  AccessSets counts_;
  Path path_;
};

class DropAllocs : public IRMutator {
 public:
  explicit DropAllocs(const std::unordered_set<const BufferNode*>& dead) : dead_(dead) {}

 protected:
  Stmt mutateSeq(const SeqStmt* n, const Stmt& self) override {
    Stmt s = IRMutator::mutateSeq(n, self);
    auto* seq = as<SeqStmt>(s);
    if (!seq) return s;
    std::vector<Stmt> kept;
    for (const Stmt& c : seq->stmts)
      if (auto* a = as<AllocStmt>(c); !a || !dead_.count(a->buffer.get())) kept.push_back(c);
    return kept.size() == seq->stmts.size() ? s : makeSeq(kept, n->loc);
  }

 private:
  const std::unordered_set<const BufferNode*>& dead_;
};

// Splits a nest of Parallel loops whose body is several stores into one nest
// per store, in order, so that each is a producer of its own. The
// iterations of a Parallel loop are independent, so an iteration's later
// stores see the same values after the split.
class SplitElementwiseNests : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* node, const Stmt& self) override {
    std::vector<const ForStmt*> loops;
    Stmt cur = self;
    while (auto* f = as<ForStmt>(cur)) {
      if (f->forKind != ForKind::Parallel) return IRMutator::mutateFor(node, self);
      loops.push_back(f);
      cur = f->body;
    }
    std::vector<Stmt> stores = seqStmts(cur);
    if (stores.size() < 2) return self;
    bool local = false;
    for (const Stmt& st : stores) {
      auto* store = as<StoreStmt>(st);
      if (!store) return self;
      local = local || isBlockLocal(store->buffer);
    }
    if (!local) return self;
    std::vector<Stmt> nests;
    for (const Stmt& st : stores) {
      VarMap map;
      std::vector<Var> vars;
      for (const ForStmt* f : loops) {
        vars.push_back(makeVar(f->var->name, f->var->dtype, f->var->loc));
        map[f->var.get()] = makeVarRef(vars.back(), f->loc);
      }
      Stmt nest = substitute(st, map);
      for (size_t k = loops.size(); k-- > 0;)
        nest = std::make_shared<ForStmt>(vars[k], substitute(loops[k]->min, map), substitute(loops[k]->extent, map),
                                         ForKind::Parallel, nest, loops[k]->loc);
      nests.push_back(nest);
    }
    return makeSeq(nests, node->loc);
  }
};

Stmt inlineInBody(const Stmt& body) {
  Stmt cur = SplitElementwiseNests().mutate(body);
  std::unordered_set<const BufferNode*> eliminated;
  // Each round inlines one producer; a kernel has few.
  for (int round = 0; round < 256; ++round) {
    Inliner inliner(cur);
    Stmt next = inliner.once(cur);
    if (!next) break;
    eliminated.insert(inliner.eliminated.begin(), inliner.eliminated.end());
    cur = next;
  }
  if (eliminated.empty()) return body;  // the split nests only serve the inlining
  AccessSets left = accessSetsOf(cur);
  std::unordered_set<const BufferNode*> dead;
  for (const BufferNode* b : eliminated)
    if (left.readsOf(b) == 0 && !left.writes.count(b)) dead.insert(b);
  return DropAllocs(dead).mutate(cur);
}

}  // namespace

Module inlineProducers(const Module& m) {
  return rewriteBodies(m, [](const PrimFunc& f) { return inlineInBody(f.body); });
}

}  // namespace tlc::cpu
