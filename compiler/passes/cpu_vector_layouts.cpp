#include "compiler/passes/cpu_vector_layouts.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/passes/cpu_intrinsics.h"

namespace tlc::cpu {

using namespace ir;

namespace {

constexpr int64_t kUnknownExtent = 16;

// A store that moves an element from another buffer unchanged (the value a
// load, or a select of one and a constant: a copy's masked edge).
bool isCopy(const StoreStmt& s) {
  Expr v = s.value;
  if (auto* sel = as<Select>(v)) v = sel->t;
  auto* l = as<Load>(v);
  return l && l->buffer != s.buffer;
}

// Collects the votes of the accesses, and the buffers that must keep their layout.
class Votes : public IRVisitor {
 public:
  std::unordered_map<const BufferNode*, std::vector<int64_t>> votes;
  std::unordered_set<const BufferNode*> pinned;

  void visitAlloc(const AllocStmt* node) override {
    const Buffer& b = node->buffer;
    bool constant = b->shape.size() >= 2;
    for (const Expr& e : b->shape) constant &= as<IntImm>(e) != nullptr;
    if (constant && b->scope != MemScope::Global) votes[b.get()].assign(b->shape.size(), 0);
    IRVisitor::visitAlloc(node);
  }

  void visitFor(const ForStmt* node) override {
    visit(node->min);
    visit(node->extent);
    int64_t n = kUnknownExtent;
    if (!constInt(node->extent, &n) || n < 1) n = kUnknownExtent;
    int64_t saved = weight_;
    constexpr int64_t kMaxWeight = int64_t(1) << 40;
    weight_ = n > kMaxWeight / weight_ ? kMaxWeight : weight_ * n;
    const VarNode* savedVec = vector_;
    if (node->forKind == ForKind::Vectorized) vector_ = node->var.get();
    visit(node->body);
    vector_ = savedVec;
    weight_ = saved;
  }

  void visitStore(const StoreStmt* node) override {
    bool copy = isCopy(*node);
    if (!copy) vote(node->buffer.get(), node->indices);
    noVote_ += copy;
    IRVisitor::visitStore(node);
    noVote_ -= copy;
  }

  void visitLoad(const Load* node) override {
    if (!noVote_) vote(node->buffer.get(), node->indices);
    IRVisitor::visitLoad(node);
  }

  void visitCall(const Call* node) override {
    if (cpu_intrinsics::takesAddresses(node->callee))
      for (const Expr& a : node->args)
        if (auto* l = as<Load>(a)) pinned.insert(l->buffer.get());
    IRVisitor::visitCall(node);
  }

  void visitAtomic(const AtomicStmt* node) override {
    pinned.insert(node->buffer.get());
    IRVisitor::visitAtomic(node);
  }

  void visitPrint(const PrintStmt* node) override {
    if (node->buffer) pinned.insert(node->buffer.get());
    IRVisitor::visitPrint(node);
  }

  // Tile statements (none are left after lowering) name whole regions.
  void visitCopy(const CopyStmt* node) override { pin({&node->src, &node->dst}); }
  void visitGemm(const GemmStmt* node) override { pin({&node->a, &node->b, &node->c}); }
  void visitFill(const FillStmt* node) override { pin({&node->dst}); }
  void visitReduce(const ReduceStmt* node) override { pin({&node->src, &node->dst}); }

 private:
  void pin(std::initializer_list<const Region*> regions) {
    for (const Region* r : regions) pinned.insert(r->buffer.get());
  }

  void vote(const BufferNode* b, const std::vector<Expr>& indices) {
    auto it = votes.find(b);
    if (!vector_ || it == votes.end()) return;
    int dim = -1;
    for (size_t d = 0; d < indices.size(); ++d) {
      std::optional<int64_t> c = coefficientOf(indices[d], vector_);
      if (c && *c == 0) continue;
      if (!c || dim >= 0 || (*c != 1 && *c != -1)) return;  // not one dimension, element by element
      dim = int(d);
    }
    if (dim >= 0) it->second[size_t(dim)] += weight_;
  }

  int64_t weight_ = 1;
  const VarNode* vector_ = nullptr;
  int noVote_ = 0;
};

// Moves dimension `dim` of every access of the chosen buffers to the end.
class Permute : public IRMutator {
 public:
  std::unordered_map<const BufferNode*, std::pair<Buffer, int>> permuted;  // new buffer, moved dimension

 protected:
  Stmt mutateAlloc(const AllocStmt* node, const Stmt& self) override {
    auto it = permuted.find(node->buffer.get());
    if (it == permuted.end()) return self;
    return std::make_shared<const AllocStmt>(it->second.first, node->loc);
  }

  Expr mutateLoad(const Load* node, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(node->indices, idx);
    auto it = permuted.find(node->buffer.get());
    if (it == permuted.end()) return changed ? makeLoad(node->buffer, idx, node->loc) : self;
    return makeLoad(it->second.first, moved(changed ? idx : node->indices, it->second.second), node->loc);
  }

  Stmt mutateStore(const StoreStmt* node, const Stmt& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(node->indices, idx);
    Expr v = mutate(node->value);
    auto it = permuted.find(node->buffer.get());
    if (it == permuted.end() && !changed && v == node->value) return self;
    if (it == permuted.end())
      return std::make_shared<const StoreStmt>(node->buffer, changed ? idx : node->indices, v, node->loc);
    return std::make_shared<const StoreStmt>(it->second.first, moved(changed ? idx : node->indices, it->second.second),
                                             v, node->loc);
  }

 private:
  static std::vector<Expr> moved(std::vector<Expr> v, int dim) {
    Expr e = v[size_t(dim)];
    v.erase(v.begin() + dim);
    v.push_back(e);
    return v;
  }
};

Stmt choose(const Stmt& body) {
  Votes votes;
  votes.visit(body);
  Permute permute;
  for (auto& [b, v] : votes.votes) {
    if (votes.pinned.count(b)) continue;
    int last = int(v.size()) - 1, best = last;
    for (int d = 0; d < last; ++d)
      if (v[size_t(d)] > v[size_t(best)]) best = d;
    if (best == last) continue;
    std::vector<Expr> shape = b->shape;
    Expr e = shape[size_t(best)];
    shape.erase(shape.begin() + best);
    shape.push_back(e);
    permute.permuted[b] = {makeBuffer(b->name, b->dtype, shape, b->scope, b->loc), best};
  }
  return permute.permuted.empty() ? body : permute.mutate(body);
}

}  // namespace

Module chooseVectorLayouts(const Module& m) {
  return rewriteBodies(m, [](const PrimFunc& f) { return choose(f.body); });
}

}  // namespace tlc::cpu
