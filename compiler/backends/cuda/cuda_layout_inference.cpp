#include "compiler/backends/cuda/cuda_layout_inference.h"

#include <optional>

#include "compiler/backends/cuda/cuda_layout_plan.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cuda {

using namespace ir;
using passes::PassContext;

namespace {

// The annotation the plan implies for a buffer of the kernel; nothing for a
// fragment the plan leaves in shared memory.
std::optional<LayoutSpec> plannedLayout(const BufferNode* b, const KernelLayoutPlan& plan) {
  LayoutSpec spec;
  if (b->scope == MemScope::Shared) {
    spec.kind = plan.sharedLayouts.count(b) ? LayoutKind::Swizzled : LayoutKind::RowMajor;
  } else if (plan.accumulators.count(b)) {
    spec.kind = LayoutKind::MmaAccumulator;
  } else if (auto it = plan.fragments.buffers.find(b); it != plan.fragments.buffers.end()) {
    // The members of an accumulator's group take its layout again when the
    // emitter plans the annotated kernel: no annotation says more.
    if (it->second.layout.isMma()) return std::nullopt;
    spec.kind = LayoutKind::RowGroups;
    spec.threadsPerRow = it->second.layout.group;
    spec.vector = it->second.layout.vector;
  } else {
    return std::nullopt;
  }
  return spec;
}

class Annotator : public IRMutator {
 public:
  Annotator(PassContext& ctx, const CudaOptions& options) : ctx_(ctx), options_(options) {}

 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    KernelLayoutPlan plan = planKernelLayouts(*k, options_);
    if (reportLayoutConflicts(plan, ctx_.diags)) return self;
    for (auto& [b, why] : plan.fragments.unfit)
      ctx_.diags.report(DiagKind::CudaFragmentShared, b->loc,
                        "`" + b->name + "` lives in shared memory, not in registers: " + why +
                            " (or annotate it `T.shared_fallback()` to keep it there without this warning)");
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& s : seqStmts(k->body)) {
      out.push_back(s);
      auto* a = as<AllocStmt>(s);
      if (!a || (a->buffer->scope != MemScope::Shared && a->buffer->scope != MemScope::Fragment) ||
          plan.annotations.count(a->buffer.get()) || plan.tmaOperand(a->buffer.get()) ||
          plan.wgmmaOperand(a->buffer.get()))
        continue;
      if (auto spec = plannedLayout(a->buffer.get(), plan)) {
        out.push_back(std::make_shared<AnnotateLayoutStmt>(a->buffer, *spec, a->loc));
        changed = true;
      }
    }
    if (!changed) return self;
    auto annotated = std::make_shared<KernelStmt>(*k);
    annotated->body = makeSeq(std::move(out), k->body->loc);
    return annotated;
  }

 private:
  PassContext& ctx_;
  const CudaOptions& options_;
};

}  // namespace

Module inferLayouts(const Module& m, PassContext& ctx, const CudaOptions& options) {
  Annotator annotator(ctx, options);
  return rewriteBodies(m, [&](const PrimFunc& f) { return annotator.mutate(f.body); });
}

passes::Pass layoutInferencePass(const CudaOptions& options) {
  return {"cuda-layout-inference", "write the CUDA layout plan of every shared and fragment buffer as annotations",
          [options](const Module& m, PassContext& ctx) { return inferLayouts(m, ctx, options); }};
}

}  // namespace tlc::cuda
