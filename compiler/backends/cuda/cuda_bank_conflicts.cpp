#include "compiler/backends/cuda/cuda_bank_conflicts.h"

#include "compiler/backends/cuda/cuda_vector_loops.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "compiler/backends/cuda/cuda_fragment_uses.h"
#include "compiler/backends/cuda/cuda_vector_loops.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

namespace {

using Env = std::unordered_map<const VarNode*, int64_t>;

int64_t floorDivI(int64_t x, int64_t y) { return x / y - ((x % y != 0) && ((x < 0) != (y < 0))); }

// The value of an index expression in one lane; variables bound outside the
// sampled nest (block indices, outer loop counters, dimensions) count as 0,
// or as unknown when `strict` (conditions). Nothing for values read from
// memory or not integral.
std::optional<int64_t> evalLane(const Expr& e, const Env& env, bool strict = false) {
  if (auto* i = as<IntImm>(e)) return i->value;
  if (auto* v = as<VarRef>(e)) {
    auto it = env.find(v->var.get());
    if (it != env.end()) return it->second;
    return strict ? std::nullopt : std::optional<int64_t>(0);
  }
  if (auto* c = as<Cast>(e))
    return isInteger(c->dtype) || isBool(c->dtype) ? evalLane(c->value, env, strict) : std::nullopt;
  if (auto* s = as<Select>(e)) {
    auto c = evalLane(s->cond, env, strict);
    if (!c) return std::nullopt;
    return evalLane(*c ? s->t : s->f, env, strict);
  }
  auto* b = as<Binary>(e);
  if (!b) return std::nullopt;
  auto x = evalLane(b->a, env, strict), y = evalLane(b->b, env, strict);
  if (!x || !y) return std::nullopt;
  switch (b->op) {
    case BinaryOp::Add: return *x + *y;
    case BinaryOp::Sub: return *x - *y;
    case BinaryOp::Mul: return *x * *y;
    case BinaryOp::FloorDiv: return *y ? std::optional<int64_t>(floorDivI(*x, *y)) : std::nullopt;
    case BinaryOp::FloorMod: return *y ? std::optional<int64_t>(*x - floorDivI(*x, *y) * *y) : std::nullopt;
    case BinaryOp::Min: return std::min(*x, *y);
    case BinaryOp::Max: return std::max(*x, *y);
    case BinaryOp::Eq: return *x == *y;
    case BinaryOp::Ne: return *x != *y;
    case BinaryOp::Lt: return *x < *y;
    case BinaryOp::Le: return *x <= *y;
    case BinaryOp::Gt: return *x > *y;
    case BinaryOp::Ge: return *x >= *y;
    case BinaryOp::And: return *x && *y;
    case BinaryOp::Or: return *x || *y;
    case BinaryOp::BitAnd: return *x & *y;
    case BinaryOp::BitOr: return *x | *y;
    case BinaryOp::BitXor: return *x ^ *y;
    case BinaryOp::Shl: return *y >= 0 && *y < 63 ? std::optional<int64_t>(*x << *y) : std::nullopt;
    case BinaryOp::Shr: return *y >= 0 && *y < 63 ? std::optional<int64_t>(*x >> *y) : std::nullopt;
    default: return std::nullopt;
  }
}

// Walks a nest body for one lane: the first iteration of every serial loop,
// the branches the lane takes, recording the candidates' element indices.
class LaneWalk : public IRVisitor {
 public:
  LaneWalk(Env env, const std::unordered_set<const BufferNode*>& candidates, int lane,
           std::map<const void*, LaneAccess>* out, std::vector<const void*>* order)
      : env_(std::move(env)), candidates_(candidates), lane_(lane), out_(out), order_(order) {}

  void visitLoad(const Load* l) override {
    record(l, l->buffer.get(), l->indices);
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    record(s, s->buffer.get(), s->indices);
    IRVisitor::visitStore(s);
  }
  void visitLet(const LetStmt* l) override {
    visit(l->value);
    if (auto v = evalLane(l->value, env_)) env_[l->var.get()] = *v;
    visit(l->body);
  }
  void visitFor(const ForStmt* f) override {
    env_[f->var.get()] = evalLane(f->min, env_).value_or(0);
    visit(f->body);
  }
  void visitIf(const IfStmt* i) override {
    visit(i->cond);
    auto c = evalLane(i->cond, env_, true);
    if (!c || *c) visit(i->thenBody);
    if (i->elseBody && (!c || !*c)) visit(i->elseBody);
  }

 private:
  void record(const void* node, const BufferNode* b, const std::vector<Expr>& indices) {
    if (!candidates_.count(b)) return;
    std::vector<int64_t> idx;
    for (auto& e : indices) {
      auto v = evalLane(e, env_);
      if (!v) return;
      idx.push_back(*v);
    }
    auto [it, fresh] = out_->try_emplace(node);
    if (fresh) {
      it->second.buffer = b;
      it->second.lanes.resize(32);
      order_->push_back(node);
    }
    it->second.lanes[lane_] = std::move(idx);
  }

  Env env_;
  const std::unordered_set<const BufferNode*>& candidates_;
  int lane_;
  std::map<const void*, LaneAccess>* out_;
  std::vector<const void*>* order_;
};

// Whether `s` reads or writes one of `bufs`.
bool touches(const Stmt& s, const std::unordered_set<const BufferNode*>& bufs) {
  struct Scan : IRVisitor {
    const std::unordered_set<const BufferNode*>& bufs;
    bool found = false;
    explicit Scan(const std::unordered_set<const BufferNode*>& b) : bufs(b) {}
    void visitLoad(const Load* l) override {
      found |= bufs.count(l->buffer.get()) > 0;
      IRVisitor::visitLoad(l);
    }
    void visitStore(const StoreStmt* st) override {
      found |= bufs.count(st->buffer.get()) > 0;
      IRVisitor::visitStore(st);
    }
  } scan(bufs);
  scan.visit(s);
  return scan.found;
}

class NestSampler : public IRVisitor {
 public:
  NestSampler(const FragmentLayoutPlan& tiles, const std::unordered_set<const BufferNode*>& candidates,
              const std::unordered_set<const BufferNode*>& mmaTiles, int64_t threads,
              const std::function<bool(const BufferNode*)>& vectorizable,
              std::unordered_set<const BufferNode*>* vectorBuffers)
      : tiles_(tiles), candidates_(candidates), mmaTiles_(mmaTiles), threads_(threads), vectorizable_(vectorizable),
        vectorBuffers_(vectorBuffers) {}

  std::map<const void*, LaneAccess> accesses;
  std::vector<const void*> order;

  void visitFor(const ForStmt* f) override {
    if (f->forKind != ForKind::Parallel) return IRVisitor::visitFor(f);
    Stmt body;
    auto loops = parallelNest(f, &body);
    if (!touches(body, candidates_)) return;
    std::vector<Env> lanes(32);
    std::unordered_set<const BufferNode*> sampled = candidates_;
    if (auto it = tiles_.nests.find(f); it != tiles_.nests.end()) {
      const RegisterNest& n = it->second;
      for (int t = 0; t < 32 && t < threads_; ++t) {
        Expr tid = makeInt(t), zero = makeInt(0);
        auto row = evalLane(n.layout.rowOf(zero, tid), {}), col = evalLane(n.layout.colOf(zero, zero, tid), {});
        if (!row || !col) return;
        if (n.kind == FragmentRole::Tile) {
          if (loops.size() != 2) return;
          lanes[t][loops[0]->var.get()] = *row;
          lanes[t][loops[1]->var.get()] = *col;
        } else {
          lanes[t][loops[0]->var.get()] = n.kind == FragmentRole::Rows ? *row : *col;
        }
      }
    } else {
      if (touches(body, mmaTiles_)) return;  // mapped by the accumulator layout
      std::vector<int64_t> ext;
      for (auto* l : loops) {
        auto e = evalLane(l->extent, {});
        if (!as<IntImm>(l->extent) || !e || *e <= 0) return;
        ext.push_back(*e);
      }
      // A vectorized nest: lane t takes chunk t, V innermost iterations
      // (sampled at the chunk's first one).
      int64_t V = 1;
      if (auto plan = planVectorNest(loops, body, vectorizable_)) {
        V = plan->lanes;
        for (auto* b : plan->buffers) {
          sampled.erase(b);
          vectorBuffers_->insert(b);
        }
      }
      for (int t = 0; t < 32 && t < threads_; ++t) {
        int64_t rest = t;
        for (size_t d = loops.size(); d-- > 0;) {
          int64_t per = d + 1 == loops.size() ? ext[d] / V : ext[d];
          int64_t local = d == 0 ? rest : rest % per;
          if (d > 0) rest /= per;
          if (d + 1 == loops.size()) local *= V;
          lanes[t][loops[d]->var.get()] = evalLane(loops[d]->min, {}).value_or(0) + local;
        }
      }
    }
    for (int t = 0; t < 32 && t < threads_; ++t) {
      LaneWalk walk(lanes[t], sampled, t, &accesses, &order);
      walk.visit(body);
    }
  }

 private:
  const FragmentLayoutPlan& tiles_;
  const std::unordered_set<const BufferNode*>& candidates_;
  const std::unordered_set<const BufferNode*>& mmaTiles_;
  int64_t threads_;
  const std::function<bool(const BufferNode*)>& vectorizable_;
  std::unordered_set<const BufferNode*>* vectorBuffers_;
};

}  // namespace

std::vector<LaneAccess> sampleSharedAccesses(const Stmt& body, const FragmentLayoutPlan& tiles,
                                             const std::unordered_set<const BufferNode*>& candidates,
                                             const std::unordered_set<const BufferNode*>& mmaTiles, int64_t threads,
                                             const std::function<bool(const BufferNode*)>& vectorizable,
                                             std::unordered_set<const BufferNode*>* vectorBuffers) {
  NestSampler sampler(tiles, candidates, mmaTiles, threads, vectorizable, vectorBuffers);
  sampler.visit(body);
  std::vector<LaneAccess> out;
  for (const void* n : sampler.order) out.push_back(std::move(sampler.accesses[n]));
  return out;
}

int64_t bankConflictDegree(const LaneAccess& a, const std::vector<int64_t>& shape, int64_t pad, int64_t elemBytes) {
  std::map<int64_t, std::vector<int64_t>> banks;  // bank -> distinct words
  for (const auto& idx : a.lanes) {
    if (idx.size() != shape.size() || idx.empty()) continue;
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off = off * (shape[d] + (d + 1 == idx.size() ? pad : 0)) + idx[d];
    int64_t word = floorDivI(off * elemBytes, 4);
    auto& words = banks[((word % 32) + 32) % 32];
    if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
  }
  int64_t degree = 0;
  for (auto& [bank, words] : banks) degree = std::max<int64_t>(degree, words.size());
  return degree;
}

int64_t chooseRowPad(const std::vector<LaneAccess>& accesses, const std::vector<int64_t>& shape, int64_t elemBytes,
                     bool wordPadOk) {
  if (shape.size() < 2 || elemBytes > 16 || accesses.empty()) return 0;
  std::vector<int64_t> pads = {0, 16 / elemBytes};
  if (wordPadOk && elemBytes <= 4) pads.push_back(4 / elemBytes);
  int64_t best = 0, bestCost = -1;
  for (int64_t p : pads) {
    int64_t cost = 0;
    for (auto& a : accesses) cost += bankConflictDegree(a, shape, p, elemBytes);
    if (bestCost < 0 || cost < bestCost) best = p, bestCost = cost;
  }
  return best;
}

}  // namespace tlc::cuda
