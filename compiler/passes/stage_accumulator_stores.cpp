#include "compiler/passes/stage_accumulator_stores.h"

#include <string>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/buffer_names.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::passes {

using namespace ir;

namespace {

// The buffers gemms accumulate into, and the shared buffers a statement uses.
class KernelScan : public BufferAccessVisitor {
 public:
  std::unordered_set<const BufferNode*> accumulators, shared;

  void visitGemm(const GemmStmt* g) override {
    accumulators.insert(g->c.buffer.get());
    BufferAccessVisitor::visitGemm(g);
  }

 protected:
  void read(const Buffer& b) override { note(b); }
  void write(const Buffer& b) override { note(b); }

 private:
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
 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    KernelScan scan;
    scan.visit(k->body);
    std::unordered_set<std::string> names = bufferNames(k->body);
    std::vector<Stmt> body = seqStmts(k->body);
    bool changed = false;
    for (size_t i = 0; i < body.size(); ++i) {
      auto* c = as<CopyStmt>(body[i]);
      if (!c || !eligible(*c, scan)) continue;
      bool laterShared = false;
      for (size_t j = i + 1; j < body.size() && !laterShared; ++j) laterShared = usesShared(body[j]);
      if (laterShared) continue;
      const Buffer& f = c->src.buffer;
      Buffer stage = makeBuffer(freshBufferName(f->name, "_stage", &names), c->dst.buffer->dtype, f->shape,
                                MemScope::Shared, c->loc);
      body[i] = makeSeq({std::make_shared<AllocStmt>(stage, c->loc),
                         std::make_shared<CopyStmt>(c->src, fullRegion(stage, c->loc), c->loc),
                         std::make_shared<CopyStmt>(fullRegion(stage, c->loc), c->dst, c->loc)},
                        c->loc);
      changed = true;
    }
    if (!changed) return self;
    auto out = std::make_shared<KernelStmt>(*k);
    out->body = makeSeq(std::move(body), k->body->loc);
    return out;
  }

 private:
  static bool eligible(const CopyStmt& c, const KernelScan& scan) {
    const Buffer &f = c.src.buffer, &g = c.dst.buffer;
    int64_t bytes;
    return f->scope == MemScope::Fragment && scan.accumulators.count(f.get()) && isFullRegion(c.src) &&
           g->scope == MemScope::Global && stageBytes(f->shape, g->dtype, &bytes) && bytes <= kMaxStageBytes &&
           sameShape(c.src, c.dst);
  }
};

}  // namespace

Module stageAccumulatorStores(const Module& m, PassContext&) { return mutateBodies<Stager>(m); }

}  // namespace tlc::passes
