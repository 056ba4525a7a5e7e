// Layout inference for register fragments: collect the uses of every
// candidate fragment, group the fragments that must share a layout, check
// each group's uses, then choose the row-group parameters by the cost rule.
#include "compiler/backends/cuda/cuda_fragment_layout.h"

#include <numeric>

#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

std::vector<const ForStmt*> parallelNest(const ForStmt* f, Stmt* body);  // cuda_mma.cpp

// ---------------------------------------------------------------------------
// The layouts as Fragment values

namespace {

std::vector<Var> placeholders(size_t n) {
  std::vector<Var> vars;
  for (size_t d = 0; d < n; ++d) vars.push_back(makeVar("i" + std::to_string(d)));
  return vars;
}

// The thread's column group and the register of column j within a row.
Expr columnGroup(const RowGroupLayout& l, const Expr& j) {
  return floorMod(floorDiv(j, makeInt(l.vector)), makeInt(l.group));
}
Expr columnRegister(const RowGroupLayout& l, const Expr& j) {
  return add(mul(floorDiv(j, makeInt(l.group * l.vector)), makeInt(l.vector)), floorMod(j, makeInt(l.vector)));
}

}  // namespace

layout::Fragment RowGroupLayout::tile() const {
  auto v = placeholders(2);
  Expr i = makeVarRef(v[0]), j = makeVarRef(v[1]);
  Expr thread = add(mul(floorMod(i, makeInt(rowSlots())), makeInt(group)), columnGroup(*this, j));
  Expr reg = add(mul(floorDiv(i, makeInt(rowSlots())), makeInt(colsPerThread())), columnRegister(*this, j));
  return layout::Fragment({rows, cols}, v, thread, {reg}, threads);
}

layout::Fragment RowGroupLayout::rowVector() const {
  auto v = placeholders(1);
  Var rep = makeVar("rep");
  Expr i = makeVarRef(v[0]);
  Expr thread = add(mul(floorMod(i, makeInt(rowSlots())), makeInt(group)), makeVarRef(rep));
  return layout::Fragment({rows}, v, thread, {floorDiv(i, makeInt(rowSlots()))}, threads, group, rep);
}

layout::Fragment RowGroupLayout::columnVector() const {
  auto v = placeholders(1);
  Var rep = makeVar("rep");
  Expr j = makeVarRef(v[0]);
  Expr thread = add(mul(makeVarRef(rep), makeInt(group)), columnGroup(*this, j));
  return layout::Fragment({cols}, v, thread, {columnRegister(*this, j)}, threads, rowSlots(), rep);
}

int64_t RegisterTile::registers() const {
  switch (role) {
    case FragmentRole::Tile: return layout.rowsPerThread() * layout.colsPerThread();
    case FragmentRole::Rows: return layout.rowsPerThread();
    case FragmentRole::Columns: return layout.colsPerThread();
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Use collection

namespace {

bool constShape(const BufferNode* b, std::vector<int64_t>* shape) {
  shape->clear();
  for (auto& d : b->shape) {
    int64_t v;
    if (!constInt(d, &v) || v <= 0) return false;
    shape->push_back(v);
  }
  return true;
}

bool wholeBuffer(const Region& r) {
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    int64_t mn, ext, shape;
    if (!constInt(r.ranges[d].min, &mn) || mn != 0) return false;
    if (!constInt(r.ranges[d].extent, &ext) || !constInt(r.buffer->shape[d], &shape) || ext != shape) return false;
  }
  return true;
}

bool isVar(const Expr& e, const Var& v) {
  auto* r = as<VarRef>(e);
  return r && r->var == v;
}

enum class Role { Unknown, Tile, Rows, Columns };

struct Candidate {
  const BufferNode* buffer;
  std::vector<int64_t> shape;
  Role role = Role::Unknown;
  std::string fallback;       // non-empty: cannot live in registers
  int64_t globalBytes = 0;    // narrowest element of a global/shared copy partner
};

// A Parallel nest that touches candidates.
struct NestUse {
  const ForStmt* loop;
  std::vector<int64_t> extents;
  std::vector<const BufferNode*> buffers;  // the candidates it touches
  Role kind = Role::Unknown;               // Tile for 2-D nests; 1-D: the members' role
};

class UseCollector {
 public:
  std::unordered_map<const BufferNode*, Candidate> cands;
  std::vector<NestUse> nests;
  // Pairs that must share a group; `sameRole` also the role.
  struct Link {
    const BufferNode *a, *b;
    bool sameRole;
  };
  std::vector<Link> links;
  std::unordered_set<const BufferNode*> fixed;

  void reject(const BufferNode* b, const std::string& why) {
    auto it = cands.find(b);
    if (it != cands.end() && it->second.fallback.empty()) it->second.fallback = why;
  }
  void setRole(const BufferNode* b, Role r) {
    auto it = cands.find(b);
    if (it == cands.end()) return;
    if (it->second.role != Role::Unknown && it->second.role != r)
      reject(b, "used both as a row vector and as a column vector");
    else
      it->second.role = r;
  }

  // Any element access of a candidate in `e` (outside a Parallel nest) sends it to shared memory.
  void scalarUses(const Expr& e) {
    if (e) visitAccesses(e, "an element access outside a Parallel loop");
  }
  void scalarUses(const Region& r) {
    for (auto& rg : r.ranges) {
      scalarUses(rg.min);
      scalarUses(rg.extent);
    }
  }

  void block(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Seq:
        for (auto& c : as<SeqStmt>(s)->stmts) block(c);
        return;
      case StmtKind::Let:
        scalarUses(as<LetStmt>(s)->value);
        block(as<LetStmt>(s)->body);
        return;
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        scalarUses(i->cond);
        block(i->thenBody);
        block(i->elseBody);
        return;
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        scalarUses(f->min);
        scalarUses(f->extent);
        if (f->forKind == ForKind::Parallel) nest(f);
        else block(f->body);
        return;
      }
      case StmtKind::Copy: copy(as<CopyStmt>(s)); return;
      case StmtKind::Fill: {
        auto* f = as<FillStmt>(s);
        scalarUses(f->value);
        scalarUses(f->dst);
        if (!wholeBuffer(f->dst)) reject(f->dst.buffer.get(), "a fill of part of the buffer");
        return;
      }
      case StmtKind::Reduce: reduce(as<ReduceStmt>(s)); return;
      case StmtKind::Gemm: {
        auto* g = as<GemmStmt>(s);
        for (auto* r : {&g->a, &g->b, &g->c}) {
          scalarUses(*r);
          reject(r->buffer.get(), "a gemm operand");
        }
        return;
      }
      default: {
        // Stores, atomics, evaluates at block level: any candidate they touch is a scalar use.
        TouchAll all(this, "an element access outside a Parallel loop");
        all.visit(s);
        return;
      }
    }
  }

 private:
  // Rejects every candidate accessed in a subtree.
  class TouchAll : public IRVisitor {
   public:
    TouchAll(UseCollector* c, std::string why) : c_(c), why_(std::move(why)) {}
    void visitLoad(const Load* l) override {
      c_->reject(l->buffer.get(), why_);
      IRVisitor::visitLoad(l);
    }
    void visitStore(const StoreStmt* s) override {
      c_->reject(s->buffer.get(), why_);
      IRVisitor::visitStore(s);
    }
    void visitAtomic(const AtomicStmt* a) override {
      c_->reject(a->buffer.get(), why_);
      IRVisitor::visitAtomic(a);
    }
    void visitCopy(const CopyStmt* c) override {
      c_->reject(c->src.buffer.get(), why_);
      c_->reject(c->dst.buffer.get(), why_);
      IRVisitor::visitCopy(c);
    }
    void visitFill(const FillStmt* f) override {
      c_->reject(f->dst.buffer.get(), why_);
      IRVisitor::visitFill(f);
    }
    void visitReduce(const ReduceStmt* r) override {
      c_->reject(r->src.buffer.get(), why_);
      c_->reject(r->dst.buffer.get(), why_);
      IRVisitor::visitReduce(r);
    }
    void visitGemm(const GemmStmt* g) override {
      for (auto* r : {&g->a, &g->b, &g->c}) c_->reject(r->buffer.get(), why_);
      IRVisitor::visitGemm(g);
    }

   private:
    UseCollector* c_;
    std::string why_;
  };

  void visitAccesses(const Expr& e, const std::string& why) {
    TouchAll all(this, why);
    all.visit(e);
  }

  void copy(const CopyStmt* c) {
    scalarUses(c->src);
    scalarUses(c->dst);
    const BufferNode *s = c->src.buffer.get(), *d = c->dst.buffer.get();
    bool sc = cands.count(s), dc = cands.count(d);
    if (sc && !wholeBuffer(c->src)) reject(s, "a copy of part of the buffer");
    if (dc && !wholeBuffer(c->dst)) reject(d, "a copy into part of the buffer");
    if (sc && dc) {
      if (s == d) reject(s, "a copy onto itself");
      if (c->src.buffer->shape.size() != c->dst.buffer->shape.size()) {
        reject(s, "a copy between fragments of different rank");
        reject(d, "a copy between fragments of different rank");
      }
      links.push_back({s, d, true});
      return;
    }
    if (sc) partner(s, c->dst.buffer);
    if (dc) partner(d, c->src.buffer);
    if (fixed.count(s) || fixed.count(d)) {
      reject(s, "a copy to or from an mma accumulator");
      reject(d, "a copy to or from an mma accumulator");
    }
  }
  void partner(const BufferNode* cand, const Buffer& other) {
    auto& c = cands[cand];
    // A thread-private buffer would see only this thread's elements.
    if (other->scope == MemScope::Local || other->scope == MemScope::Var) reject(cand, "a copy to or from a local buffer");
    if (other->scope == MemScope::Global || other->scope == MemScope::Shared) {
      int64_t bytes = dtypeBytes(other->dtype);
      c.globalBytes = c.globalBytes ? std::min(c.globalBytes, bytes) : bytes;
    }
  }

  void reduce(const ReduceStmt* r) {
    scalarUses(r->src);
    scalarUses(r->dst);
    const BufferNode *s = r->src.buffer.get(), *d = r->dst.buffer.get();
    bool ok = cands.count(s) && cands.count(d) && r->src.buffer->shape.size() == 2 && r->dim == 1 &&
              r->dst.buffer->shape.size() == 1 && wholeBuffer(r->src) && wholeBuffer(r->dst) &&
              cands[s].shape[0] == cands[d].shape[0];
    if (!ok) {
      reject(s, "a reduction other than along the last dimension into a fragment row vector");
      reject(d, "a reduction other than along the last dimension of a register fragment");
      return;
    }
    setRole(s, Role::Tile);
    setRole(d, Role::Rows);
    links.push_back({s, d, false});
  }

  // Accesses inside a Parallel nest.
  class NestScan : public IRVisitor {
   public:
    NestScan(UseCollector* c, NestUse* n, const std::vector<const ForStmt*>& loops) : c_(c), n_(n), loops_(loops) {}
    bool writesOther = false, fixedTouched = false;
    void access(const Buffer& b, const std::vector<Expr>& idx) {
      const BufferNode* p = b.get();
      if (c_->fixed.count(p)) fixedTouched = true;
      if (!c_->cands.count(p)) return;
      if (std::find(n_->buffers.begin(), n_->buffers.end(), p) == n_->buffers.end()) n_->buffers.push_back(p);
      auto& shape = c_->cands[p].shape;
      if (loops_.size() == 2 && idx.size() == 2 && isVar(idx[0], loops_[0]->var) && isVar(idx[1], loops_[1]->var) &&
          shape == n_->extents) {
        c_->setRole(p, Role::Tile);
      } else if (loops_.size() == 2 && idx.size() == 1 && isVar(idx[0], loops_[0]->var) && shape[0] == n_->extents[0]) {
        c_->setRole(p, Role::Rows);
      } else if (loops_.size() == 2 && idx.size() == 1 && isVar(idx[0], loops_[1]->var) && shape[0] == n_->extents[1]) {
        c_->setRole(p, Role::Columns);
      } else if (loops_.size() == 1 && idx.size() == 1 && isVar(idx[0], loops_[0]->var) && shape[0] == n_->extents[0]) {
        // role decided by the group
      } else {
        c_->reject(p, "an access that is not indexed by the Parallel loop variables in order");
      }
    }
    void visitLoad(const Load* l) override {
      access(l->buffer, l->indices);
      IRVisitor::visitLoad(l);
    }
    void visitStore(const StoreStmt* s) override {
      access(s->buffer, s->indices);
      if (!c_->cands.count(s->buffer.get())) writesOther = true;
      IRVisitor::visitStore(s);
    }
    void visitAtomic(const AtomicStmt* a) override {
      c_->reject(a->buffer.get(), "an atomic update");
      writesOther = true;
      IRVisitor::visitAtomic(a);
    }
    void visitAlloc(const AllocStmt* a) override {
      writesOther = true;  // thread-local buffers: keep such nests on the generic path
      IRVisitor::visitAlloc(a);
    }
    void visitCopy(const CopyStmt* c) override { tileOp(c->dst.buffer, c->src.buffer); }
    void visitFill(const FillStmt* f) override { tileOp(f->dst.buffer, f->dst.buffer); }
    void visitReduce(const ReduceStmt* r) override { tileOp(r->dst.buffer, r->src.buffer); }
    void visitGemm(const GemmStmt* g) override { tileOp(g->c.buffer, g->a.buffer); c_->reject(g->b.buffer.get(), kWhy); }

   private:
    static constexpr const char* kWhy = "a tile operation inside a Parallel loop";
    void tileOp(const Buffer& a, const Buffer& b) {
      c_->reject(a.get(), kWhy);
      c_->reject(b.get(), kWhy);
      writesOther = true;
    }
    UseCollector* c_;
    NestUse* n_;
    const std::vector<const ForStmt*>& loops_;
  };

  void nest(const ForStmt* f) {
    Stmt body;
    auto loops = parallelNest(f, &body);
    NestUse use{f, {}, {}, Role::Unknown};
    bool shapeOk = loops.size() <= 2;
    for (auto* l : loops) {
      int64_t mn, ext;
      shapeOk &= constInt(l->min, &mn) && mn == 0 && constInt(l->extent, &ext) && ext > 0;
      use.extents.push_back(shapeOk ? ext : 0);
    }
    NestScan scan(this, &use, loops);
    scan.visit(body);
    if (use.buffers.empty()) return;
    auto rejectAll = [&](const std::string& why) {
      for (auto* b : use.buffers) reject(b, why);
    };
    if (!shapeOk) rejectAll("a Parallel loop nest that is not one or two loops of constant extent from 0");
    if (scan.fixedTouched) rejectAll("a Parallel loop that also accesses an mma accumulator");
    if (loops.size() == 1 && scan.writesOther)
      rejectAll("a one-dimensional Parallel loop that writes memory other threads see");
    if (loops.size() == 2) use.kind = Role::Tile;
    for (size_t k = 1; k < use.buffers.size(); ++k) links.push_back({use.buffers[0], use.buffers[k], false});
    if (loops.size() == 1)
      for (size_t k = 1; k < use.buffers.size(); ++k) links.push_back({use.buffers[0], use.buffers[k], true});
    nests.push_back(use);
  }
};

class AllocScan : public IRVisitor {
 public:
  int depth = 0;
  std::vector<const BufferNode*> fragments;
  void visitFor(const ForStmt* f) override {
    bool par = f->forKind == ForKind::Parallel;
    depth += par;
    IRVisitor::visitFor(f);
    depth -= par;
  }
  void visitAlloc(const AllocStmt* a) override {
    if (depth == 0 && a->buffer->scope == MemScope::Fragment) fragments.push_back(a->buffer.get());
  }
};

// Union-find over candidate buffers.
struct Groups {
  std::unordered_map<const BufferNode*, const BufferNode*> parent;
  const BufferNode* find(const BufferNode* b) {
    auto it = parent.find(b);
    if (it == parent.end() || it->second == b) return b;
    return it->second = find(it->second);
  }
  void join(const BufferNode* a, const BufferNode* b) { parent[find(a)] = find(b); }
};

// The cost rule (see the header); false when no row-group layout fits.
bool chooseLayout(int64_t rows, int64_t cols, int64_t threads, int64_t elemBytes, RowGroupLayout* out) {
  if (threads % 32 != 0) return false;
  for (int64_t vector = std::max<int64_t>(1, 16 / elemBytes); vector >= 1; vector /= 2) {
    if (cols % vector) continue;
    int64_t best = 0;
    // A row spans more than a warp (whole warps: G is a power of two) only
    // when no G <= 32 gives every thread work.
    for (int64_t group = 1; group <= threads; group *= 2) {
      if (cols % (group * vector) || (rows * group) % threads) continue;
      best = group;
      if (group * vector * elemBytes >= 128 || group >= 32) break;
    }
    if (best) {
      *out = RowGroupLayout{rows, cols, threads, best, vector};
      return true;
    }
  }
  return false;
}

}  // namespace

FragmentLayoutPlan inferFragmentLayouts(const KernelStmt& kernel, int64_t threads,
                                        const std::unordered_set<const BufferNode*>& fixed) {
  FragmentLayoutPlan plan;
  AllocScan allocs;
  allocs.visit(kernel.body);
  UseCollector uses;
  uses.fixed = fixed;
  for (auto* b : allocs.fragments) {
    if (fixed.count(b)) continue;
    Candidate c;
    c.buffer = b;
    if (!constShape(b, &c.shape)) continue;  // reported by the placement
    if (c.shape.size() > 2) c.fallback = "a fragment of more than two dimensions";
    if (c.shape.size() == 2) c.role = Role::Tile;
    uses.cands[b] = c;
  }
  uses.block(kernel.body);

  Groups groups;
  for (auto& l : uses.links) groups.join(l.a, l.b);
  // Roles travel along same-role links (copies, one-dimensional nests).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& l : uses.links) {
      if (!l.sameRole) continue;
      Role ra = uses.cands[l.a].role, rb = uses.cands[l.b].role;
      if (ra == rb) continue;
      if (ra == Role::Unknown) uses.cands[l.a].role = rb, changed = true;
      else if (rb == Role::Unknown) uses.cands[l.b].role = ra, changed = true;
      else {
        uses.reject(l.a, "copied to or from a fragment with another role");
        uses.reject(l.b, "copied to or from a fragment with another role");
      }
    }
  }
  for (auto& n : uses.nests)
    if (n.kind == Role::Unknown && !n.buffers.empty()) n.kind = uses.cands[n.buffers[0]].role;

  // Per group: members, the tile shape, and whether every member fits.
  std::unordered_map<const BufferNode*, std::vector<const BufferNode*>> members;
  for (auto& [b, c] : uses.cands) members[groups.find(b)].push_back(b);
  for (auto& [root, list] : members) {
    std::string why;
    const BufferNode* culprit = nullptr;
    std::vector<int64_t> tileShape;
    int64_t bytes = 0;
    for (auto* b : list) {
      auto& c = uses.cands[b];
      if (!c.fallback.empty() && why.empty()) why = c.fallback, culprit = b;
      if (c.role == Role::Tile) {
        if (!tileShape.empty() && tileShape != c.shape && why.empty()) why = "tiles of different shapes in one loop nest", culprit = b;
        tileShape = c.shape;
      }
      if (c.globalBytes) bytes = bytes ? std::min(bytes, c.globalBytes) : c.globalBytes;
    }
    if (why.empty() && tileShape.empty()) why = "no two-dimensional fragment to take the layout from";
    if (why.empty()) {
      for (auto* b : list) {
        auto& c = uses.cands[b];
        bool fits = (c.role == Role::Rows && c.shape[0] == tileShape[0]) ||
                    (c.role == Role::Columns && c.shape[0] == tileShape[1]) || c.role == Role::Tile;
        if (!fits) why = "its shape does not follow a tile of its loop nests", culprit = b;
      }
      for (auto& n : uses.nests)
        if (why.empty() && !n.buffers.empty() && groups.find(n.buffers[0]) == root) {
          bool fits = (n.kind == Role::Tile && n.extents == tileShape) ||
                      (n.kind == Role::Rows && n.extents[0] == tileShape[0]) ||
                      (n.kind == Role::Columns && n.extents[0] == tileShape[1]);
          if (!fits) why = "a Parallel loop nest whose extents are not the tile's", culprit = n.buffers[0];
        }
    }
    RowGroupLayout layout;
    if (why.empty()) {
      const BufferNode* any = nullptr;
      for (auto* b : list)
        if (uses.cands[b].role == Role::Tile) any = b;
      if (!bytes) bytes = dtypeBytes(any->dtype);
      if (!chooseLayout(tileShape[0], tileShape[1], threads, bytes, &layout))
        why = "no row-group layout of [" + std::to_string(tileShape[0]) + ", " + std::to_string(tileShape[1]) +
              "] over " + std::to_string(threads) + " threads";
    }
    if (why.empty()) {
      int64_t regs = 0;
      for (auto* b : list) {
        RegisterTile t;
        t.role = static_cast<FragmentRole>(static_cast<int>(uses.cands[b].role) - 1);
        t.layout = layout;
        regs += t.registers();
      }
      if (regs > kMaxRegisterElems)
        why = "the group needs " + std::to_string(regs) + " registers per thread (at most " +
              std::to_string(kMaxRegisterElems) + ")";
    }
    if (!why.empty()) {
      for (auto* b : list)
        plan.fallback[b] = b == culprit || !culprit ? why : "shares a loop nest with `" + culprit->name + "`: " + why;
      continue;
    }
    int index = (int)plan.groups.size();
    plan.groups.push_back(layout);
    for (auto* b : list) {
      RegisterTile t;
      t.group = index;
      t.role = static_cast<FragmentRole>(static_cast<int>(uses.cands[b].role) - 1);
      t.layout = layout;
      plan.buffers[b] = t;
    }
    for (auto& n : uses.nests)
      if (!n.buffers.empty() && groups.find(n.buffers[0]) == root)
        plan.nests[n.loop] = RegisterNest{static_cast<FragmentRole>(static_cast<int>(n.kind) - 1), index, layout};
  }
  return plan;
}

namespace {

class FragmentAllocs : public ir::IRVisitor {
 public:
  std::vector<const ir::BufferNode*> buffers;
  void visitAlloc(const ir::AllocStmt* a) override {
    if (a->buffer->scope == ir::MemScope::Fragment) buffers.push_back(a->buffer.get());
    ir::IRVisitor::visitAlloc(a);
  }
};

std::string shapeText(const ir::BufferNode* b) {
  std::string s = "[";
  for (size_t d = 0; d < b->shape.size(); ++d) {
    int64_t v;
    s += (d ? ", " : "") + (ir::constInt(b->shape[d], &v) ? std::to_string(v) : std::string("?"));
  }
  return s + "]";
}

}  // namespace

std::string describeFragmentLayouts(const ir::KernelStmt& kernel, const FragmentLayoutPlan& plan,
                                    const std::unordered_set<const ir::BufferNode*>& fixed) {
  static const char* roles[] = {"tile", "row vector", "column vector"};
  FragmentAllocs allocs;
  allocs.visit(kernel.body);
  std::string out;
  for (const ir::BufferNode* b : allocs.buffers) {
    out += b->name + " " + shapeText(b) + ": ";
    if (fixed.count(b)) {
      out += "registers, fixed layout\n";
    } else if (auto it = plan.buffers.find(b); it != plan.buffers.end()) {
      const RegisterTile& t = it->second;
      const RowGroupLayout& l = t.layout;
      out += "registers, " + std::string(roles[(int)t.role]) + " of group " + std::to_string(t.group) + " (";
      if (t.role == FragmentRole::Tile)
        out += std::to_string(l.rows) + " x " + std::to_string(l.cols) + " over " + std::to_string(l.threads) +
               " threads: " + std::to_string(l.group) + " threads per row, runs of " + std::to_string(l.vector) + "; ";
      out += std::to_string(t.registers()) + " registers)\n";
    } else {
      auto why = plan.fallback.find(b);
      out += "shared memory" + (why != plan.fallback.end() ? " (" + why->second + ")" : std::string()) + "\n";
    }
  }
  return out;
}

}  // namespace tlc::cuda
