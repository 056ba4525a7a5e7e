// Layout planning of one kernel: mma planning, shared-buffer annotations,
// fragment layout inference, and the plan's description and conflicts.
#include "compiler/backends/cuda/cuda_layout_plan.h"

#include "compiler/backends/cuda/cuda_kernel_scan.h"

#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

namespace {

class AnnotationScan : public IRVisitor {
 public:
  LayoutAnnotations found;
  void visitAnnotateLayout(const AnnotateLayoutStmt* a) override { found.emplace(a->buffer.get(), a); }
};

std::string shapeText(const BufferNode* b) {
  std::string s = "[";
  for (size_t d = 0; d < b->shape.size(); ++d) {
    int64_t v;
    s += (d ? ", " : "") + (constInt(b->shape[d], &v) ? std::to_string(v) : std::string("?"));
  }
  return s + "]";
}

}  // namespace

LayoutAnnotations collectLayoutAnnotations(const KernelStmt& kernel) {
  AnnotationScan scan;
  scan.visit(kernel.body);
  return scan.found;
}

namespace {

// One round of planning, with the accumulators in `demoted` left in shared memory.
KernelLayoutPlan planOnce(const KernelStmt& kernel, const std::vector<const GemmStmt*>& gemms, int64_t threads,
                          const CudaOptions& options, const std::unordered_set<const BufferNode*>& writtenInParallel,
                          const std::unordered_set<const BufferNode*>& demoted) {
  KernelLayoutPlan plan;
  plan.annotations = collectLayoutAnnotations(kernel);
  std::optional<HopperMainloop> hopper = planHopperMainloop(kernel, threads, options);
  std::unordered_set<const GemmStmt*> fullRow = fullRowGemms(kernel);
  for (const WgmmaGemm& w : planWgmmaGemms(kernel, gemms, threads, options, hopper ? hopper->gemm : nullptr)) {
    if (hopper && hopper->gemm && (loopTile(*hopper, w.b.tile) || (w.a.tile && loopTile(*hopper, w.a.tile))))
      continue;
    plan.wgmma.push_back(w);
  }
  // The wgmma gemms' warp grids: one 16-row slice per warp (the mainloop's
  // threads / 32 x 1; those in place, WgmmaGemm).
  std::unordered_map<const GemmStmt*, MmaShape> grids;
  for (const WgmmaGemm& w : plan.wgmma) grids.emplace(w.gemm, w.shape);
  if (hopper && hopper->gemm) {
    MmaShape s;
    s.warpsM = threads / 32;
    s.warpsN = 1;
    grids.emplace(hopper->gemm, s);
  }
  MmaPlan mma = planMma(kernel, gemms, threads, options, writtenInParallel, fullRow, demoted, grids);
  // The swizzles the gemms' reads chose: a `swizzled` annotation (the layout
  // inference's own included) takes the one chosen for its buffer.
  const auto readSwizzles = mma.swizzled;
  plan.sharedLayouts = std::move(mma.swizzled);
  for (const WgmmaGemm& w : plan.wgmma)
    for (const HopperOperand* op : {&w.a, &w.b})
      if (op->tile)
        plan.sharedLayouts.insert_or_assign(op->tile, layout::Layout::panels(op->rows, op->cols,
                                                                             dtypeBytes(op->tile->dtype), op->span));
  for (auto& [b, frag] : mma.registerFragments) {
    auto it = plan.annotations.find(b);
    if (it == plan.annotations.end() || it->second->layout.kind != LayoutKind::SharedFallback)
      plan.accumulators.emplace(b, frag);
  }
  // The general form's tiles are read where TMA writes them, in panels.
  if (hopper && !hopper->gemm) {
    plan.hopper = hopper;
    for (const HopperOperand& op : hopper->tiles)
      if (op.inPanels())
        plan.sharedLayouts.insert_or_assign(op.tile, layout::Layout::panels(op.rows, op.cols,
                                                                            dtypeBytes(op.tile->dtype), op.span));
  }
  // The gemm mainloop needs its accumulator in registers with the wgmma warp grid.
  if (hopper && hopper->gemm) {
    auto it = plan.accumulators.find(hopper->gemm->c.buffer.get());
    if (it != plan.accumulators.end() && it->second.warpsM == threads / 32 && it->second.warpsN == 1) {
      plan.hopper = hopper;
      // TMA tiles are addressed as TMA writes them; gathered ones are
      // written through their layout, the same panels.
      for (const HopperOperand* op : {&hopper->a, &hopper->b}) {
        if (op->gather)  // A's 16-row chunks in the wgmmas' order, as its TMA copy stores them
          plan.sharedLayouts.insert_or_assign(
              op->tile, layout::Layout::panels(op->rows, op->cols, dtypeBytes(op->tile->dtype), op->span,
                                               op == &hopper->a ? hopper->slices : 1));
        else
          plan.sharedLayouts.erase(op->tile);
      }
    }
  }
  // The mma accumulator layout (written by cuda-layout-inference) holds only
  // for a fragment that a tensor-core gemm keeps in registers; it says
  // nothing more to the row-group inference.
  LayoutAnnotations rowGroupAnnotations;
  for (auto& [b, a] : plan.annotations) {
    if (a->layout.kind != LayoutKind::MmaAccumulator) {
      rowGroupAnnotations.emplace(b, a);
      continue;
    }
    if (plan.accumulators.count(b)) continue;
    LayoutConflict c{b, a->loc,
                     "no layout fits `" + b->name + "`: it is annotated mma_accumulator, but no tensor-core gemm "
                     "accumulates into it in registers; remove the annotation",
                     {{b->loc, "`" + b->name + "` is allocated here"}}};
    plan.conflicts.push_back(c);
  }
  for (auto& [b, a] : plan.annotations) {
    if (b->scope != MemScope::Shared) continue;
    plan.sharedLayouts.erase(b);
    if (a->layout.kind != LayoutKind::Swizzled) continue;
    int64_t rows = 0, cols = 0;
    if (b->shape.size() == 2 && constInt(b->shape[0], &rows) && constInt(b->shape[1], &cols) &&
        (cols * dtypeBytes(b->dtype)) % 16 == 0) {
      auto it = readSwizzles.find(b);
      plan.sharedLayouts.emplace(b, it != readSwizzles.end() ? it->second
                                                             : layout::Layout::swizzled(rows, cols, dtypeBytes(b->dtype)));
    } else {
      plan.conflicts.push_back({b, a->loc,
                                "`" + b->name + "` cannot be swizzled: the swizzle permutes the 16-byte chunks of "
                                "each row of a two-dimensional buffer of constant shape; annotate it row_major",
                                {{b->loc, "`" + b->name + "` is allocated here"}}});
    }
  }
  FixedLayouts fixed;
  for (auto& [b, f] : plan.accumulators) {
    int64_t m = f.fragment.inputShape()[0], n = f.fragment.inputShape()[1];
    fixed.emplace(b, RegisterLayout::mma(m, n, f.warpsM, f.warpsN, f.mfma, f.colMajor));
  }
  plan.fragments =
      inferFragmentLayouts(kernel, threads, fixed, rowGroupAnnotations, shuffleLanes(options.dialect(), threads));
  for (const LayoutConflict& c : plan.fragments.conflicts) plan.conflicts.push_back(c);
  return plan;
}

}  // namespace

KernelLayoutPlan planKernelLayouts(const KernelStmt& kernel, const std::vector<const GemmStmt*>& gemms,
                                   int64_t threads, const CudaOptions& options,
                                   const std::unordered_set<const BufferNode*>& writtenInParallel) {
  // An accumulator whose row reduction found no register layout for its
  // group moves to shared memory, and the kernel is planned again (each
  // round moves at least one, so this ends).
  std::unordered_set<const BufferNode*> demoted;
  std::unordered_map<const BufferNode*, std::string> why;
  for (;;) {
    KernelLayoutPlan plan = planOnce(kernel, gemms, threads, options, writtenInParallel, demoted);
    if (plan.fragments.demote.empty()) {
      for (auto& [b, reason] : why) plan.fragments.fallback[b] = reason;
      return plan;
    }
    for (auto& [b, reason] : plan.fragments.demote) {
      demoted.insert(b);
      why[b] = reason;
    }
  }
}

KernelLayoutPlan planKernelLayouts(const KernelStmt& kernel, const CudaOptions& options) {
  KernelScan scan;
  scan.visit(kernel.body);
  return planKernelLayouts(kernel, scan.gemms, kernel.threads, options, scan.writtenInParallel);
}

bool reportLayoutConflicts(const KernelLayoutPlan& plan, DiagnosticEngine& diags) {
  for (const LayoutConflict& c : plan.conflicts) {
    Diagnostic& d = diags.report(DiagKind::CudaLayoutConflict, c.loc, c.message);
    for (const LayoutNote& n : c.notes) d.note(n.loc, n.message);
  }
  return !plan.conflicts.empty();
}

std::string describeKernelLayouts(const KernelStmt& kernel, const KernelLayoutPlan& plan) {
  static const char* roles[] = {"tile", "row vector", "column vector"};
  KernelScan scan;
  scan.visit(kernel.body);
  const FragmentLayoutPlan& frags = plan.fragments;
  std::string out;
  for (const AllocStmt* a : scan.blockAllocs) {
    const BufferNode* b = a->buffer.get();
    if (b->scope != MemScope::Shared && b->scope != MemScope::Fragment) continue;
    out += b->name + " " + shapeText(b) + ": ";
    if (b->scope == MemScope::Shared) {
      if (const HopperOperand* op = plan.tmaOperand(b))
        out += "shared memory, TMA tile (" + std::to_string(op->span) + "-byte swizzle)";
      else if (const HopperOperand* w = plan.wgmmaOperand(b))
        out += "shared memory, wgmma tile (" + std::to_string(w->span) + "-byte swizzle panels)";
      else
        out += plan.sharedLayouts.count(b) ? "shared memory, swizzled" : "shared memory, row-major";
    } else if (plan.accumulators.count(b)) {
      out += "registers, fixed layout";
    } else if (auto it = frags.buffers.find(b); it != frags.buffers.end()) {
      const RegisterTile& t = it->second;
      const RegisterLayout& l = t.layout;
      out += "registers, " + std::string(roles[(int)t.role]) + " of group " + std::to_string(t.group) + " (";
      if (l.mfma)
        out += "MFMA " + std::to_string(l.mfma) + "x" + std::to_string(l.mfma) + " accumulator layout of " +
               std::to_string(l.warpsM) + " x " + std::to_string(l.warpsN) + " wavefronts; ";
      else if (l.isMma())
        out += std::string(l.vector == 2 ? "mma accumulator layout" : "mma A-operand layout") + " of " +
               std::to_string(l.warpsM) + " x " + std::to_string(l.warpsN) + " warps" +
               (l.vector == 2 ? "" : ", " + std::to_string(l.vector) + " columns per lane and atom") +
               (l.colMajor ? " numbered by column" : "") + "; ";
      else if (t.role == FragmentRole::Tile)
        out += std::to_string(l.rows) + " x " + std::to_string(l.cols) + " over " + std::to_string(l.threads) +
               " threads: " + std::to_string(l.group) + " threads per row, runs of " + std::to_string(l.vector) + "; ";
      if (!l.isMma() && (l.paddedRows() || l.paddedColumns()))
        out += "padded to " + std::to_string(l.rowsPerThread() * l.rowSlots()) + " x " +
               std::to_string(l.chunksPerRow() * l.group * l.vector) + "; ";
      out += std::to_string(t.registers()) + " registers)";
    } else {
      auto why = frags.fallback.find(b);
      out += "shared memory";
      if (const HopperOperand* w = plan.wgmmaOperand(b))
        out += ", wgmma tile (" + std::to_string(w->span) + "-byte swizzle panels)";
      out += why != frags.fallback.end() ? " (" + why->second + ")" : std::string();
    }
    if (auto a = plan.annotations.find(b); a != plan.annotations.end())
      out += " [annotated: " + layoutSpecText(a->second->layout) + "]";
    out += "\n";
  }
  return out;
}

}  // namespace tlc::cuda
