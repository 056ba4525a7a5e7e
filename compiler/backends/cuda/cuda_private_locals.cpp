#include "compiler/backends/cuda/cuda_private_locals.h"

#include <set>
#include <unordered_map>

#include "compiler/ir/buffer_access.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// The elements of `b` (of `size` elements) that statement `s` certainly
// writes, reading nothing of `b`, added to `written`; false when `s` reads `b`.
bool writesBefore(const Stmt& s, const BufferNode* b, int64_t size, std::set<int64_t>& written) {
  auto* st = as<StoreStmt>(s);
  if (st && st->buffer.get() == b) {
    int64_t at = 0;
    if (collectBufferReads(st->value).count(b) || st->indices.size() != 1 || !constInt(st->indices[0], &at))
      return false;
    written.insert(at);
    return true;
  }
  auto* f = as<ForStmt>(s);
  int64_t lo = -1, n = 0;
  if (f && (f->forKind == ForKind::Serial || f->forKind == ForKind::Unroll) && constInt(f->min, &lo) && lo == 0 &&
      constInt(f->extent, &n) && n == size)
    if (auto* inner = as<StoreStmt>(f->body); inner && inner->buffer.get() == b && inner->indices.size() == 1) {
      auto* v = as<VarRef>(inner->indices[0]);
      if (v && v->var == f->var && !collectBufferReads(inner->value).count(b)) {
        for (int64_t i = 0; i < size; ++i) written.insert(i);
        return true;
      }
    }
  return !collectBufferReads(s).count(b);
}

class Scan : public BufferAccessVisitor {
 public:
  std::unordered_map<const BufferNode*, int64_t> candidates;  // one-dimensional locals: elements
  std::unordered_set<const BufferNode*> rejected;

  void visitAlloc(const AllocStmt* a) override {
    const Buffer& b = a->buffer;
    int64_t n = 0;
    if (!parallel_ && (b->scope == MemScope::Local || b->scope == MemScope::Var) && b->shape.size() == 1 &&
        constInt(b->shape[0], &n) && n > 0)
      candidates[b.get()] = n;
    BufferAccessVisitor::visitAlloc(a);
  }

  void visitFor(const ForStmt* f) override {
    if (f->forKind != ForKind::Parallel) return BufferAccessVisitor::visitFor(f);
    ++parallel_;
    if (containsParallel(f->body)) {
      BufferAccessVisitor::visitFor(f);
    } else {
      visit(f->min);
      visit(f->extent);
      checkBody(f->body);
    }
    --parallel_;
  }

 protected:
  void read(const Buffer& b) override { touch(b.get()); }
  void write(const Buffer& b) override { touch(b.get()); }

 private:
  static bool containsParallel(const Stmt& s) {
    struct P : IRVisitor {
      bool found = false;
      void visitFor(const ForStmt* f) override {
        found |= f->forKind == ForKind::Parallel;
        IRVisitor::visitFor(f);
      }
    } p;
    p.visit(s);
    return p.found;
  }

  // Accesses outside the bodies of innermost Parallel loops reject a candidate.
  void touch(const BufferNode* b) {
    if (!innermostBody_ && candidates.count(b)) rejected.insert(b);
  }

  // The candidates this body uses must be written whole before they are read.
  void checkBody(const Stmt& body) {
    std::vector<Stmt> stmts = seqStmts(body);
    for (auto& [b, size] : candidates) {
      std::set<int64_t> written;
      for (const Stmt& s : stmts) {
        if ((int64_t)written.size() == size) break;
        if (!writesBefore(s, b, size, written)) {
          rejected.insert(b);
          break;
        }
      }
    }
    ++innermostBody_;
    visit(body);
    --innermostBody_;
  }

  int parallel_ = 0, innermostBody_ = 0;
};

}  // namespace

std::unordered_set<const BufferNode*> iterationPrivateLocals(const Stmt& kernelBody) {
  Scan scan;
  scan.visit(kernelBody);
  std::unordered_set<const BufferNode*> out;
  for (auto& [b, n] : scan.candidates)
    if (!scan.rejected.count(b)) out.insert(b);
  return out;
}

}  // namespace tlc::cuda
