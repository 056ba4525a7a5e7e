// cuda-async-copies: standalone global-to-shared copies as cp.async groups
// (see cuda_async_copies.h).
#include "compiler/backends/cuda/cuda_async_copies.h"

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// A copy cp.async can issue: global into shared memory, no conversion.
bool issuable(const Stmt& s) {
  auto* c = as<CopyStmt>(s);
  return c && !c->async && c->src.buffer->scope == MemScope::Global && c->dst.buffer->scope == MemScope::Shared &&
         c->src.buffer->dtype == c->dst.buffer->dtype;
}

// Whether `s` may run between copies into `dsts` and their wait: it touches
// none of them, and is a statement that neither waits for asynchronous
// copies nor holds block-level control flow.
bool crossable(const Stmt& s, const std::vector<const BufferNode*>& dsts) {
  bool kind = false;
  switch (s->kind) {
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Gemm:
    case StmtKind::Alloc:
    case StmtKind::AnnotateLayout: kind = true; break;
    case StmtKind::For: kind = as<ForStmt>(s)->forKind == ForKind::Parallel; break;
    default: break;
  }
  if (!kind) return false;
  for (const BufferNode* b : dsts)
    if (accessesBuffer(s, b)) return false;
  return true;
}

class AsyncCopier : public IRMutator {
 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    ++kernels_;
    Stmt out = IRMutator::mutateKernel(k, self);
    --kernels_;
    return out;
  }

  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    if (f->forKind == ForKind::Serial || f->forKind == ForKind::Unroll) return IRMutator::mutateFor(f, self);
    ++inside_;  // Parallel and Vectorized nests are per thread; Pipelined loops run their own copies
    Stmt out = IRMutator::mutateFor(f, self);
    --inside_;
    return out;
  }

  Stmt mutateSeq(const SeqStmt* seq, const Stmt& self) override {
    if (!active()) return IRMutator::mutateSeq(seq, self);
    const std::vector<Stmt>& in = seq->stmts;
    std::vector<Stmt> out;
    bool changed = false;
    for (size_t i = 0; i < in.size();) {
      if (!issuable(in[i])) {
        Stmt m = mutate(in[i]);
        changed |= m != in[i];
        out.push_back(std::move(m));
        ++i;
        continue;
      }
      std::vector<const BufferNode*> dsts;
      for (; i < in.size() && issuable(in[i]); ++i) {
        out.push_back(issued(as<CopyStmt>(in[i])));
        dsts.push_back(as<CopyStmt>(in[i])->dst.buffer.get());
      }
      const SourceLoc& at = out.back()->loc;
      out.push_back(std::make_shared<AsyncCommitStmt>(at));
      for (; i < in.size() && crossable(in[i], dsts); ++i) out.push_back(mutate(in[i]));
      out.push_back(std::make_shared<AsyncWaitStmt>(0, i < in.size() ? in[i]->loc : at));
      changed = true;
    }
    return changed ? std::make_shared<SeqStmt>(std::move(out), seq->loc) : self;
  }

  // A copy that is a whole body (a Seq's are taken by mutateSeq).
  Stmt mutateCopy(const CopyStmt* c, const Stmt& self) override {
    if (!active() || !issuable(self)) return self;
    return std::make_shared<SeqStmt>(std::vector<Stmt>{issued(c), std::make_shared<AsyncCommitStmt>(c->loc),
                                                       std::make_shared<AsyncWaitStmt>(0, c->loc)},
                                     c->loc);
  }

 private:
  bool active() const { return kernels_ > 0 && inside_ == 0; }

  static Stmt issued(const CopyStmt* c) {
    auto a = std::make_shared<CopyStmt>(*c);
    a->async = true;
    return a;
  }

  int kernels_ = 0, inside_ = 0;
};

}  // namespace

Module asyncCopies(const Module& m) { return mutateBodies<AsyncCopier>(m); }

passes::Pass asyncCopiesPass() {
  return {"cuda-async-copies", "issue global-to-shared copies outside pipelines as cp.async groups",
          [](const Module& m, passes::PassContext&) { return asyncCopies(m); }};
}

}  // namespace tlc::cuda
