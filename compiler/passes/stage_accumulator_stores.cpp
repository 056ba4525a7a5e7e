#include "compiler/passes/stage_accumulator_stores.h"

#include <string>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/buffer_names.h"
#include "compiler/ir/equality.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::passes {

using namespace ir;

namespace {

// The buffers gemms accumulate into, and the shared buffers a statement uses.
// A fragment stored element by element from an accumulator's element at the
// same indices (`C_f[i, j] = C_f[i, j] + P_f[i, j] * s`, the sum of a
// block-scaled gemm's partial products) counts as one: it has the
// accumulator's layout.
class KernelScan : public BufferAccessVisitor {
 public:
  std::unordered_set<const BufferNode*> accumulators, shared;
  int64_t maxStageBytes = kMaxStageBytes;

  void visitGemm(const GemmStmt* g) override {
    accumulators.insert(g->c.buffer.get());
    BufferAccessVisitor::visitGemm(g);
  }
  void visitStore(const StoreStmt* s) override {
    if (s->buffer->scope == MemScope::Fragment) {
      struct SameElement : IRVisitor {
        const StoreStmt* store;
        std::vector<std::pair<const BufferNode*, const BufferNode*>>* out;
        void visitLoad(const Load* l) override {
          if (l->buffer->scope == MemScope::Fragment && l->buffer != store->buffer &&
              structurallyEqual(l->indices, store->indices))
            out->emplace_back(store->buffer.get(), l->buffer.get());
          IRVisitor::visitLoad(l);
        }
      } find;
      find.store = s;
      find.out = &derived_;
      find.visit(s->value);
    }
    BufferAccessVisitor::visitStore(s);
  }
  // After the visit: the fragments derived from accumulators join them.
  void closeAccumulators() {
    for (bool grew = true; grew;) {
      grew = false;
      for (auto [to, from] : derived_)
        if (accumulators.count(from) && accumulators.insert(to).second) grew = true;
    }
  }

 protected:
  void read(const Buffer& b) override { note(b); }
  void write(const Buffer& b) override { note(b); }

 private:
  std::vector<std::pair<const BufferNode*, const BufferNode*>> derived_;  // stored from, element by element

  void note(const Buffer& b) {
    if (b->scope == MemScope::Shared || b->scope == MemScope::Fragment) shared.insert(b.get());
  }
};

bool usesShared(const Stmt& s) {
  KernelScan scan;
  scan.visit(s);
  return !scan.shared.empty();
}

// The bytes of a staging buffer of `shape` holding `t`: rows of a multiple of
// 128 bytes get a 16-byte pad (the layout the CUDA backend gives them).
bool stageBytes(const std::vector<Expr>& shape, DType t, int64_t* bytes) {
  int64_t rows, cols;
  if (shape.size() != 2 || !constInt(shape[0], &rows) || !constInt(shape[1], &cols)) return false;
  int64_t rowBytes = cols * dtypeBytes(t);
  if (rowBytes % 128 == 0) rowBytes += 16;
  *bytes = rows * rowBytes;
  return true;
}

// Whether `dst` has the 2-D shape of `src` (extra leading dimensions of extent 1).
bool sameShape(const Region& src, const Region& dst) {
  const auto& shape = src.buffer->shape;
  if (dst.ranges.size() < shape.size()) return false;
  size_t lead = dst.ranges.size() - shape.size();
  for (size_t d = 0; d < dst.ranges.size(); ++d) {
    int64_t e, want = 1;
    if (d >= lead && !constInt(shape[d - lead], &want)) return false;
    if (!constInt(dst.ranges[d].extent, &e) || e != want) return false;
  }
  return true;
}

class Stager : public IRMutator {
 public:
  explicit Stager(int64_t maxBytes) : maxBytes_(maxBytes) {}

 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    KernelScan scan;
    scan.maxStageBytes = maxBytes_;
    scan.visit(k->body);
    scan.closeAccumulators();
    std::unordered_set<std::string> names = bufferNames(k->body);
    bool changed = false;
    Stmt body = stageIn(k->body, false, scan, names, &changed);
    if (!changed) return self;
    auto out = std::make_shared<KernelStmt>(*k);
    out->body = body;
    return out;
  }

 private:
  // The statements of `s` (a kernel's body, or the body of a let in it: a let
  // is neither a loop nor a branch) with their eligible copies staged;
  // `sharedAfter`: shared memory is used after `s`.
  static Stmt stageIn(const Stmt& s, bool sharedAfter, const KernelScan& scan,
                      std::unordered_set<std::string>& names, bool* changed) {
    std::vector<Stmt> body = seqStmts(s);
    bool changedHere = false;
    for (size_t i = 0; i < body.size(); ++i) {
      bool laterShared = sharedAfter;
      for (size_t j = i + 1; j < body.size() && !laterShared; ++j) laterShared = usesShared(body[j]);
      if (auto* let = as<LetStmt>(body[i])) {
        bool inner = false;
        Stmt b = stageIn(let->body, laterShared, scan, names, &inner);
        if (inner) {
          body[i] = std::make_shared<LetStmt>(let->var, let->value, b, let->loc);
          changedHere = true;
        }
        continue;
      }
      auto* c = as<CopyStmt>(body[i]);
      if (!c || laterShared || !eligible(*c, scan)) continue;
      const Buffer& f = c->src.buffer;
      Buffer stage = makeBuffer(freshBufferName(f->name, "_stage", &names), c->dst.buffer->dtype, f->shape,
                                MemScope::Shared, c->loc);
      body[i] = makeSeq({std::make_shared<AllocStmt>(stage, c->loc),
                         std::make_shared<CopyStmt>(c->src, fullRegion(stage, c->loc), c->loc),
                         std::make_shared<CopyStmt>(fullRegion(stage, c->loc), c->dst, c->loc)},
                        c->loc);
      changedHere = true;
    }
    if (!changedHere) return s;
    *changed = true;
    return makeSeq(std::move(body), s->loc);
  }

  static bool eligible(const CopyStmt& c, const KernelScan& scan) {
    const Buffer &f = c.src.buffer, &g = c.dst.buffer;
    int64_t bytes;
    return f->scope == MemScope::Fragment && scan.accumulators.count(f.get()) && isFullRegion(c.src) &&
           g->scope == MemScope::Global && stageBytes(f->shape, g->dtype, &bytes) && bytes <= scan.maxStageBytes &&
           sameShape(c.src, c.dst);
  }

  int64_t maxBytes_;
};

}  // namespace

Module stageAccumulatorStores(const Module& m, PassContext& ctx) {
  // A target with less shared memory (64 KB of LDS on CDNA) bounds the
  // staging buffer by what it has.
  int64_t maxBytes = kMaxStageBytes;
  if (std::string limit = ctx.option("max-shared-bytes"); !limit.empty())
    maxBytes = std::min<int64_t>(maxBytes, std::stoll(limit));
  return rewriteBodies(m, [&](const PrimFunc& f) { return Stager(maxBytes).mutate(f.body); });
}

}  // namespace tlc::passes
