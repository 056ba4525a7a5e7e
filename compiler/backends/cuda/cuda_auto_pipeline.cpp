// cuda-auto-pipeline: serial loops whose tiles can be loaded ahead run
// pipelined (see cuda_auto_pipeline.h).
#include "compiler/backends/cuda/cuda_auto_pipeline.h"

#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/passes/pipeline_planning.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// Bytes of a buffer of constant shape; -1 otherwise.
int64_t constBytes(const BufferNode* b) {
  int64_t n = dtypeBytes(b->dtype);
  for (const Expr& d : b->shape) {
    int64_t v = 0;
    if (!constInt(d, &v) || v < 0) return -1;
    n *= v;
  }
  return n;
}

// Whether `s` holds a Pipelined loop, a break or a continue.
bool blocksPipelining(const Stmt& s) {
  struct Scan : IRVisitor {
    bool found = false;
    void visitFor(const ForStmt* f) override {
      if (f->forKind == ForKind::Pipelined) found = true;
      IRVisitor::visitFor(f);
    }
    void visitBreak(const BreakStmt*) override { found = true; }
    void visitContinue(const ContinueStmt*) override { found = true; }
  } scan;
  scan.visit(s);
  return scan.found;
}

class AutoPipeliner : public IRMutator {
 public:
  explicit AutoPipeliner(int64_t budget) : budget_(budget) {}

 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    // The kernel's shared memory before any versions are added (no reuse
    // between buffers assumed): -1 when a shape is not constant.
    struct Shared : IRVisitor {
      int64_t bytes = 0;
      void visitAlloc(const AllocStmt* a) override {
        if (a->buffer->scope == MemScope::Shared && bytes >= 0) {
          int64_t b = constBytes(a->buffer.get());
          bytes = b < 0 ? -1 : bytes + b;
        }
        IRVisitor::visitAlloc(a);
      }
    } shared;
    shared.visit(k->body);
    readsAfter_ = passes::readsAfterLoops(k->body);
    int64_t saved = shared_;
    shared_ = shared.bytes;
    ++kernels_;
    Stmt out = IRMutator::mutateKernel(k, self);
    --kernels_;
    shared_ = saved;
    return out;
  }

  Stmt mutateFor(const ForStmt* n, const Stmt& self) override {
    if (n->forKind == ForKind::Parallel || n->forKind == ForKind::Pipelined) {
      ++inside_;
      Stmt out = IRMutator::mutateFor(n, self);
      --inside_;
      return out;
    }
    Stmt s = IRMutator::mutateFor(n, self);
    auto* f = as<ForStmt>(s);
    if (!kernels_ || inside_ || f->forKind != ForKind::Serial || shared_ < 0 || blocksPipelining(f->body)) return s;
    auto candidate = std::make_shared<ForStmt>(*f);
    candidate->forKind = ForKind::Pipelined;
    candidate->numStages = kStages;
    candidate->stage.clear();
    candidate->order.clear();
    std::shared_ptr<ForStmt> planned = passes::withDefaultPlan(candidate.get(), readsAfter_[n]);
    PipelineSchedule sched = pipelineSchedule(planned.get());
    if (sched.empty() || !sched.unsupported.empty()) return s;
    int64_t extra = 0;
    for (const BufferNode* t : sched.tiles()) {
      int64_t b = constBytes(t);
      if (b < 0) return s;
      extra += b * (kStages - 1);
    }
    if (shared_ + extra > budget_) return s;
    shared_ += extra;
    return planned;
  }

 private:
  static constexpr int64_t kStages = 2;
  int64_t budget_;
  passes::ReadsAfterLoops readsAfter_;  // of the kernel's loops
  int64_t shared_ = -1;
  int kernels_ = 0, inside_ = 0;
};

}  // namespace

Module autoPipeline(const Module& m, int64_t sharedBudget) {
  AutoPipeliner p(sharedBudget);
  return rewriteBodies(m, [&](const PrimFunc& f) { return p.mutate(f.body); });
}

passes::Pass autoPipelinePass(const CudaOptions& options) {
  return {"cuda-auto-pipeline", "run serial loops whose global-to-shared tiles can load ahead as 2-stage pipelines",
          [options](const Module& m, passes::PassContext&) { return autoPipeline(m, options.maxSharedBytes / 2); }};
}

}  // namespace tlc::cuda
