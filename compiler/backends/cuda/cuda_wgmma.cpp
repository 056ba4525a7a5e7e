// wgmma in place on sm_90a (cuda_hopper.h, WgmmaGemm): which gemms take it,
// their operand tiles, the descriptor arithmetic shared with the
// warp-specialized mainloop, and the emission.
#include "compiler/backends/cuda/cuda_hopper.h"
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_layout_plan.h"
#include "compiler/ir/buffer_access.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

std::vector<int64_t> wgmmaWidths(int64_t n) {
  std::vector<int64_t> w;
  for (int64_t x : {256, 128, 64, 32, 16, 8})
    while (n >= x) {
      w.push_back(x);
      n -= x;
    }
  return w;
}

std::string wgmmaHelper(MmaKind k, int64_t width, bool registerA) {
  const std::string n = std::to_string(width), rs = registerA ? "_rs" : "";
  switch (k) {
    case MmaKind::S8: return "tlc::wgmma_s8" + rs + "_m64n" + n + "k32";
    case MmaKind::F8E4M3: return "tlc::wgmma_f8" + rs + "_m64n" + n + "k32<0>";
    case MmaKind::F8E5M2: return "tlc::wgmma_f8" + rs + "_m64n" + n + "k32<1>";
    case MmaKind::TF32: return "tlc::wgmma_tf32" + rs + "_m64n" + n + "k8";
    default: return "tlc::wgmma" + rs + "_m64n" + n + "k16";
  }
}

DescOffsets descOffsets(const HopperOperand& op) {
  if (op.mnMajor) return {op.rows * op.span, 8 * op.span};
  return {16, 8 * op.span};
}

int64_t tileOffset(const HopperOperand& op, int64_t kk, int64_t mn, int64_t elemBytes) {
  int64_t panelElems = op.span / elemBytes;
  if (op.mnMajor)  // rows are k, columns m / n, in panels of span bytes
    return (mn / panelElems) * op.rows * op.span + (mn % panelElems) * elemBytes + kk * 16 * op.span;
  int64_t kb = kk * 32;  // rows are m / n, columns k: 32 bytes per k-step (k16 of 16-bit, k32 of 8-bit, k8 of 32-bit elements)
  return (kb / op.span) * op.rows * op.span + kb % op.span + mn * op.span;
}

const HopperOperand* wgmmaTile(const std::vector<WgmmaGemm>& gemms, const BufferNode* b) {
  for (const WgmmaGemm& w : gemms) {
    if (b == w.b.tile) return &w.b;
    if (!w.registerA && b == w.a.tile) return &w.a;
  }
  return nullptr;
}

namespace {

// The gemms that are the only statement besides copies in a Pipelined loop's
// body: gemm mainloops, which keep their own lowering.
class MainloopGemms : public IRVisitor {
 public:
  std::unordered_set<const GemmStmt*> found;
  void visitFor(const ForStmt* f) override {
    if (f->forKind == ForKind::Pipelined) {
      const GemmStmt* gemm = nullptr;
      int others = 0;
      for (const Stmt& s : seqStmts(f->body)) {
        if (as<CopyStmt>(s)) continue;
        ++others;
        gemm = as<GemmStmt>(s);
      }
      if (others == 1 && gemm) found.insert(gemm);
    }
    IRVisitor::visitFor(f);
  }
};

// A whole two-dimensional shared tile as a wgmma operand, `mnMajor`
// when its contiguous dimension runs along M (A) or N (B); `fragment`: a
// fragment tile that will live in shared memory.
bool planTile(const Region& r, bool mnMajor, HopperOperand* out, bool fragment = false) {
  const Buffer& tile = r.buffer;
  int64_t rows, cols;
  if (tile->scope != (fragment ? MemScope::Fragment : MemScope::Shared) || tile->shape.size() != 2 || !isFullRegion(r) ||
      !constInt(tile->shape[0], &rows) || !constInt(tile->shape[1], &cols))
    return false;
  int64_t span = panelSpan(cols, dtypeBytes(tile->dtype));
  if (!span || rows % 8 || (mnMajor && span != 128)) return false;
  setPanelShape(tile.get(), rows, cols, span, out);
  out->mnMajor = mnMajor;
  return true;
}

}  // namespace

std::vector<WgmmaGemm> planWgmmaGemms(const KernelStmt& kernel, const std::vector<const GemmStmt*>& gemms,
                                      int64_t threads, const CudaOptions& options, const GemmStmt* mainloop) {
  std::vector<WgmmaGemm> out;
  if (options.arch != "sm_90a" || !options.tensorCores || threads % 128) return out;
  MainloopGemms loops;
  loops.visit(kernel.body);
  LayoutAnnotations annotations = collectLayoutAnnotations(kernel);
  int64_t warps = threads / 32;
  for (const GemmStmt* g : gemms) {
    // Mainloop gemms keep their own lowering, but for TMA's absence.
    if (g == mainloop || (loops.found.count(g) && options.tma)) continue;
    MmaShape s;
    if (!mmaShapeOf(g, threads, options, &s, true)) continue;
    // Float8 and tf32 wgmma read both operands K-major: from shared memory,
    // or A from registers.
    if (wgmmaKMajorOnly(s.kind) && (g->transA || !g->transB)) continue;
    const Buffer& c = g->c.buffer;
    // int8 sums in int32 accumulators, the others in float32 ones.
    const DType accT = s.kind == MmaKind::S8 ? DType::Int32 : DType::Float32;
    if (c->scope != MemScope::Fragment || c->dtype != accT || !isFullRegion(g->c)) continue;
    // Warpgroups along M (rowGroups of them), then along N (colGroups).
    int64_t rowGroups = s.m / 64, colGroups = rowGroups ? warps / 4 / rowGroups : 0;
    if (s.m % 64 || !rowGroups || (warps / 4) % rowGroups || s.n % (8 * colGroups) || s.n / colGroups > 256)
      continue;
    // An accumulator annotated to stay in shared memory keeps mma.sync.
    if (auto it = annotations.find(c.get()); it != annotations.end() && it->second->layout.kind != LayoutKind::MmaAccumulator)
      continue;
    WgmmaGemm w;
    w.gemm = g;
    w.shape = s;
    w.shape.warpsM = s.m / 16;
    w.shape.warpsN = colGroups;
    w.shape.colMajor = colGroups > 1;
    // B is [K, N] (N contiguous: MN-major) or, transposed, [N, K].
    if (!planTile(g->b, !g->transB, &w.b) || annotations.count(w.b.tile)) continue;
    // The columns of an MN-major B a warpgroup reads are whole panels, or
    // part of one when a single warpgroup reads them all (a column slice
    // starts at a panel).
    int64_t panelElems = w.b.span / dtypeBytes(g->b.buffer->dtype), slice = s.n / colGroups;
    if (w.b.mnMajor && slice % panelElems && (slice > panelElems || colGroups > 1)) continue;
    if (g->a.buffer->scope == MemScope::Fragment && colGroups == 1) {
      if (g->transA || !isFullRegion(g->a)) continue;
      w.registerA = true;
    } else if (wgmmaKMajorOnly(s.kind) && g->a.buffer->scope != MemScope::Shared) {
      continue;
    } else if (!planTile(g->a, g->transA, &w.a, g->a.buffer->scope == MemScope::Fragment) ||
               annotations.count(w.a.tile)) {
      continue;
    }
    out.push_back(w);
  }
  return out;
}

// The planned wgmma of `g` that its buffers' placement allows, or null.
static const WgmmaGemm* placedWgmma(const std::vector<WgmmaGemm>& gemms, const GemmStmt* g,
                                    std::unordered_map<const BufferNode*, BufferInfo>& bufs, int64_t threads) {
  const WgmmaGemm* w = nullptr;
  for (const WgmmaGemm& x : gemms)
    if (x.gemm == g) w = &x;
  if (!w) return nullptr;
  const BufferInfo& cInfo = bufs[g->c.buffer.get()];
  const BufferInfo& aInfo = bufs[g->a.buffer.get()];
  const BufferInfo& bInfo = bufs[g->b.buffer.get()];
  int64_t warps = threads / 32;
  if (!cInfo.fragment || cInfo.warpsM != w->shape.warpsM || cInfo.warpsN != w->shape.warpsN ||
      cInfo.colMajor != w->shape.colMajor || bInfo.place != Placement::Shared)
    return nullptr;
  // A planned from registers that ended up in shared memory (its group did
  // not fit) has no wgmma layout there: mma.sync reads it instead.
  if (w->registerA && !(aInfo.fragment && aInfo.warpsM == warps && aInfo.warpsN == 1 &&
                        aInfo.mmaVector == registerOperandVector(g->a.buffer->dtype)))
    return nullptr;
  if (!w->registerA && aInfo.place != Placement::Shared) return nullptr;
  return w;
}

bool KernelEmitter::isWgmmaGemm(const GemmStmt* g) {
  return placedWgmma(wgmma_, g, bufs_, threads_) != nullptr;
}

std::string KernelEmitter::wgmmaPin(const GemmStmt* g) {
  const BufferInfo& cInfo = bufs_[g->c.buffer.get()];
  return "tlc::fence_registers<" + std::to_string(cInfo.elems) + ">(" + cInfo.name + ");";
}

bool KernelEmitter::emitGemmWgmma(const GemmStmt* g, bool wait) {
  const WgmmaGemm* w = placedWgmma(wgmma_, g, bufs_, threads_);
  if (!w) return false;
  const BufferInfo& cInfo = bufs_[g->c.buffer.get()];
  const BufferInfo& aInfo = bufs_[g->a.buffer.get()];
  LocationScope at(*this, g->loc);
  const MmaShape& s = w->shape;
  int64_t eb = dtypeBytes(g->b.buffer->dtype);
  std::string kind = s.kind == MmaKind::F16 ? "0" : "1";
  std::string ta = w->a.mnMajor ? "1" : "0", tb = w->b.mnMajor ? "1" : "0";
  // Each k-step covers 32 bytes of k: k16 of 16-bit elements, k32 of float8
  // ones, k8 of tf32 (wgmmaHelper).
  const int64_t kStep = 32 / eb;
  // The 16-bit helpers' template arguments: <kind, transA, transB>, with A
  // from registers <kind, transB>.
  const std::string targs =
      wgmmaKMajorOnly(s.kind) ? "(" : "<" + kind + (w->registerA ? "" : ", " + ta) + ", " + tb + ">(";
  const std::string& acc = cInfo.name;
  const std::string pin = wgmmaPin(g);
  // The tile's first byte, in the live stage of a pipelined tile.
  auto base = [&](const Buffer& b) {
    return "reinterpret_cast<const char*>(&" + access(b, {makeInt(0), makeInt(0)}) + ")";
  };
  open("");
  // One A fragment per k-step, packed before the fence: no register a wgmma
  // reads may change while it is in flight.
  std::string af = fresh("a_frag");
  if (w->registerA) {
    // The lane's columns per atom of A's element type (4 of 8-bit, 1 of tf32).
    const int64_t V = registerOperandVector(g->a.buffer->dtype);
    line("unsigned " + af + "[" + std::to_string(s.k / kStep) + "][4];");
    for (int64_t kk = 0; kk < s.k / kStep; ++kk)
      // The warp's one 16-row slice of A (registerAOperand).
      for (int q = 0; q < 4; ++q)
        line(af + "[" + std::to_string(kk) + "][" + std::to_string(q) + "] = " +
             registerAWord(aInfo.name, registerAOperand(0, s.k / (4 * V), makeInt(kk * kStep), q, V), V) + ";");
  }
  std::string db = fresh("desc_b"), da = fresh("desc_a");
  line("tlc::wgmma_fence();");
  line(pin);
  // Warpgroup g takes the rows 64 * (g % rowGroups) and the column slice
  // g / rowGroups (WgmmaGemm).
  const int64_t rowGroups = s.m / 64, slice = s.n / s.warpsN;
  const std::string wg = "tid / 128";
  const std::string wgRow = s.warpsN == 1 ? wg : rowGroups > 1 ? "(" + wg + " % " + std::to_string(rowGroups) + ")" : "0";
  auto dB = descOffsets(w->b);
  const std::string wgCol = rowGroups > 1 ? wg + " / " + std::to_string(rowGroups) : wg;
  std::string bSlice = s.warpsN > 1 ? " + " + wgCol + " * " + std::to_string(tileOffset(w->b, 0, slice, eb)) : "";
  line("const unsigned long long " + db + " = tlc::smem_desc(" + base(g->b.buffer) + bSlice + ", " +
       std::to_string(dB.lbo) + ", " + std::to_string(dB.sbo) + ", " + std::to_string(w->b.span) + ");");
  if (!w->registerA) {
    // The warpgroup's 64 rows of A: along the rows of a K-major tile, or
    // one 128-byte panel of an MN-major one.
    auto dA = descOffsets(w->a);
    std::string wgRows = w->a.mnMajor ? std::to_string(64 / (w->a.span / eb)) + " * " + std::to_string(w->a.rows * w->a.span)
                                      : std::to_string(64 * w->a.span);
    line("const unsigned long long " + da + " = tlc::smem_desc(" + base(g->a.buffer) + " + " + wgRow + " * " + wgRows +
         ", " + std::to_string(dA.lbo) + ", " + std::to_string(dA.sbo) + ", " + std::to_string(w->a.span) + ");");
  }
  for (int64_t kk = 0; kk < s.k / kStep; ++kk) {
    std::string scale = g->clearAccum && kk == 0 ? "0" : "1";
    int64_t c0 = 0;
    for (int64_t width : wgmmaWidths(slice)) {
      std::string d = "&" + acc + "[" + std::to_string(c0 / 8 * 4) + "]";
      std::string bDesc = db + " + " + std::to_string(tileOffset(w->b, kk, c0, eb) >> 4);
      if (w->registerA)
        line(wgmmaHelper(s.kind, width, true) + targs + d + ", " + af + "[" + std::to_string(kk) + "], " + bDesc + ", " +
             scale + ");");
      else
        line(wgmmaHelper(s.kind, width) + targs + d + ", " + da +
             " + " + std::to_string(tileOffset(w->a, kk, 0, eb) >> 4) + ", " + bDesc + ", " + scale + ");");
      c0 += width;
    }
  }
  line("tlc::wgmma_commit();");
  if (g == issuing_) {
    InFlightWgmma& f = inFlight_ ? *inFlight_ : inFlight_.emplace();
    f.gemms.push_back(g);
    f.accumulators.insert(cInfo.name);
    f.operands.insert(aInfo.name);
    f.operands.insert(bufs_[g->b.buffer.get()].name);
  } else if (wait) {
    line("tlc::wgmma_wait<0>();");
    line(pin);
  }
  close();
  return true;
}

// A statement runs beside the wgmmas in flight when it touches none of their
// accumulators' registers, writes none of their operands and cannot leave
// the iteration. An in-place gemm joins them when it reads no accumulator in
// flight and writes no operand in flight; into an accumulator in flight only
// with the same instructions (PTX orders wgmmas of one shape on the same
// accumulator without a wait between them).
bool KernelEmitter::runsBesideWgmma(const Stmt& s, bool* joins) {
  *joins = false;
  auto* g = as<GemmStmt>(s);
  const WgmmaGemm* w = g ? placedWgmma(wgmma_, g, bufs_, threads_) : nullptr;
  if (!inFlight_) {
    *joins = w != nullptr;
    return true;
  }
  StatementAccesses uses;
  uses.visit(s);
  if (uses.jumps) return false;
  const InFlightWgmma& f = *inFlight_;
  // The C name of a buffer of the kernel (none for one it does not hold).
  auto nameOf = [&](const BufferNode* b) {
    auto it = bufs_.find(b);
    return it == bufs_.end() ? std::string() : it->second.name;
  };
  for (const BufferNode* b : uses.reads)
    if (f.accumulators.count(nameOf(b))) {
      // Only a joining gemm may read an accumulator in flight: its own.
      if (!w || b != g->c.buffer.get() || g->a.buffer.get() == b || g->b.buffer.get() == b) return false;
    }
  for (const BufferNode* b : uses.writes)
    if (f.operands.count(nameOf(b)) || (f.accumulators.count(nameOf(b)) && !w)) return false;
  if (!w) return true;
  if (f.accumulators.count(nameOf(g->c.buffer.get())))
    for (const GemmStmt* x : f.gemms) {
      if (x->c.buffer.get() != g->c.buffer.get()) continue;
      const WgmmaGemm* y = placedWgmma(wgmma_, x, bufs_, threads_);
      if (y->shape.kind != w->shape.kind || y->shape.n != w->shape.n || y->shape.warpsN != w->shape.warpsN ||
          y->registerA != w->registerA || x->a.buffer->dtype != g->a.buffer->dtype ||
          x->b.buffer->dtype != g->b.buffer->dtype)
        return false;
    }
  *joins = true;
  return true;
}

void KernelEmitter::retireWgmma(Accesses& pending) {
  if (!inFlight_) return;
  line("tlc::wgmma_wait<0>();");
  std::unordered_set<std::string> pinned;
  for (const GemmStmt* g : inFlight_->gemms)
    if (pinned.insert(bufs_[g->c.buffer.get()].name).second) line(wgmmaPin(g));
  pending.merge(inFlight_->reads);
  inFlight_.reset();
}

}  // namespace tlc::cuda
