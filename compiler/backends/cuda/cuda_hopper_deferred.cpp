// The general warp-specialized form's consumers with the statements after a
// gemm deferred by one iteration: while iteration i's wgmmas run, the
// statements that read iteration i - 1's product do.
//
// A block-scaled gemm's iteration multiplies its stage's tiles into a
// partial product (`gemm(A_s, B_s, P_f, clear_accum=true)`) and then adds
// that product, scaled, to the accumulator. Emitted in order, the tensor
// cores idle while the threads scale: the gemm's wgmmas are waited for
// before the statements after it run. Here iteration i issues its wgmmas into
// one of two copies of the product's registers, then `wgmma.wait_group 1`
// retires iteration i - 1's, and the statements after the gemm run for
// iteration i - 1 (its loop variable, its stage of the ring, the other copy
// of the product), then release that stage; the last iteration's run after
// `wait_group 0`. The loop is unrolled by two so that each copy of the
// product has fixed registers, with the first issue before it and the last
// one or two iterations after it: on every path each wait then retires a
// known group, which ptxas needs to keep the wgmmas asynchronous.
//
// Taken when the values are the same as in order: one gemm in the body, of
// operands in shared memory, into a register fragment it clears, that
// nothing outside the loop or before the gemm reads or writes; the
// statements after the gemm write nothing that the statements up to the
// gemm read or write, and read nothing those write but the product; no
// shared memory is written by the body and nothing jumps; the ring has at
// least three stages (two are held at once), and the second copy of the
// product fits the consumers' registers.
#include <set>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/ir/buffer_access.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// The kernel's statements but one loop.
class OutsideLoop : public StatementAccesses {
 public:
  explicit OutsideLoop(const ForStmt* skip) : skip_(skip) {}
  void visitFor(const ForStmt* f) override {
    if (f != skip_) StatementAccesses::visitFor(f);
  }

 private:
  const ForStmt* skip_;
};

bool meets(const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b,
           const BufferNode* except = nullptr) {
  for (const BufferNode* x : a)
    if (x != except && b.count(x)) return true;
  return false;
}

constexpr int64_t kRegisterReserve = 32;  // addresses, indices and scales beside the fragments

}  // namespace

// The index in `consumers` of the gemm whose following statements can be
// deferred (see the top of the file), or -1.
int KernelEmitter::deferrableGemm(const ForStmt* f, const std::vector<Stmt>& consumers) {
  const HopperMainloop& h = *hopper_;
  if (h.stages < 3 || h.consumerRegs <= 0) return -1;
  int found = -1;
  for (size_t i = 0; i < consumers.size(); ++i)
    if (as<GemmStmt>(consumers[i])) found = found == -1 ? (int)i : -2;
  if (found < 0 || found + 1 == (int)consumers.size()) return -1;
  auto* g = as<GemmStmt>(consumers[found]);
  const BufferNode* p = g->c.buffer.get();
  // An A operand in registers stays read by the wgmmas until they are
  // retired: the next iteration could not compute it while they run.
  if (!g->clearAccum || !isWgmmaGemm(g) || !isRegister(g->c.buffer) || isRegister(g->a.buffer)) return -1;
  // The statements before the gemm, then with it; those after it.
  StatementAccesses upTo, after;
  for (int i = 0; i < found; ++i) upTo.visit(consumers[i]);
  if (upTo.reads.count(p) || upTo.writes.count(p)) return -1;
  upTo.visit(consumers[found]);
  for (size_t i = found + 1; i < consumers.size(); ++i) after.visit(consumers[i]);
  if (upTo.gemms + after.gemms != 1 || upTo.jumps || after.jumps) return -1;
  for (const auto* writes : {&upTo.writes, &after.writes})
    for (const BufferNode* w : *writes)
      if (bufs_[w].place == Placement::Shared) return -1;
  if (meets(after.writes, upTo.reads) || meets(after.writes, upTo.writes) || meets(upTo.writes, after.reads, p))
    return -1;
  OutsideLoop outside(f);
  outside.visit(kernel_.body);
  if (outside.reads.count(p) || outside.writes.count(p)) return -1;
  // The registers of every register fragment, plus the product's second copy.
  int64_t regs = bufs_[p].elems;
  for (const auto& [b, info] : bufs_)
    if (info.place == Placement::Register && info.fragment) regs += info.elems;
  if (regs + kRegisterReserve > h.consumerRegs) return -1;
  return found;
}

void KernelEmitter::emitDeferredHopperLoop(const ForStmt* f, const std::vector<Stmt>& consumers, int gemmAt) {
  const HopperMainloop& h = *hopper_;
  const auto* g = as<GemmStmt>(consumers[gemmAt]);
  BufferInfo& product = bufs_[g->c.buffer.get()];
  // Its statements' barrier analysis starts afresh in each part of an
  // iteration: reductions there keep their final barrier.
  scratchUntracked_ = true;
  const std::string first = product.name, second = fresh(product.name + "_next");
  line(typeName(g->c.buffer->dtype) + " " + second + "[" + std::to_string(product.elems) + "];");
  std::vector<Stmt> after(consumers.begin() + gemmAt + 1, consumers.end());
  open("");
  // The loads of the statements after the gemm that are the same whenever
  // they run (a block scale `B_scale[bx, k]`, cuda_preloads.cpp) are issued
  // with the iteration's wgmmas, into registers of the product buffer the
  // iteration computes: their latency passes while the previous iteration's
  // statements after its gemm run.
  const std::vector<const Load*> loads = invariantLoads(after, false, consumers);
  std::vector<std::string> loadsOf[2];
  for (const Load* l : loads)
    for (auto& names : loadsOf) {
      names.push_back(fresh("preload"));
      line(typeName(l->dtype) + " " + names.back() + ";");
    }
  auto registersOf = [&](const std::string& regs) -> const std::vector<std::string>& {
    return loadsOf[regs == first ? 0 : 1];
  };
  // A persistent kernel's consumers continue around the ring from tile to tile.
  std::string n = fresh("n_iter"), j = fresh("iter");
  std::string newest = fresh("newest_stage"), oldest = fresh("oldest_stage");
  // Hidden from the compiler: with a trip count it knows, NVVM keeps only the
  // tail that runs and ptxas then serializes the wgmmas (C7514).
  line("const int " + n + " = tlc::runtime_value(" + expr(f->extent) + ");");
  const RingPosition ring = consumerRing(false);
  const std::string &stage = ring.stage, &phase = ring.phase;
  line("int " + newest + " = " + stage + ", " + oldest + " = " + stage + ";");
  if (isNonNegative(f->min)) markNonNegative(f->var);
  // Binds the loop variable and the ring's stage for statements of iteration `iter`.
  auto bind = [&](const std::string& iter, const std::string& ringStage) {
    line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(f->min) + " + " + iter + ";");
    Var version = makeVar("stage");
    markNonNegative(version);
    line("const int " + varName(version) + " = " + ringStage + ";");
    for (const HopperOperand& op : h.tiles) bufs_[op.tile].version = makeVarRef(version);
  };
  auto unbind = [&] {
    for (const HopperOperand& op : h.tiles) bufs_[op.tile].version = nullptr;
  };
  // Iteration `iter`: its stage's tiles, then the statements up to the gemm,
  // whose wgmmas into `regs` stay in flight.
  auto issue = [&](const std::string& iter, const std::string& regs) {
    open("");
    line("tlc::mbar_wait(&tlc_full[" + stage + "], " + phase + ");");
    if (gathersIntoPanels(h)) line("tlc::fence_proxy_async();");
    bind(iter, stage);
    product.name = regs;
    for (size_t i = 0; i < loads.size(); ++i) assignPreload(loads[i], registersOf(regs)[i]);
    Accesses inner;
    for (int i = 0; i < gemmAt; ++i) emitBlock(consumers[i], inner);
    emitGemmWgmma(g, false);
    unbind();
    line(newest + " = " + stage + ";");
    advanceRing(stage, phase);
    close();
  };
  // Iteration `iter`'s statements after the gemm, once `wait_group pending`
  // has retired its wgmmas into `regs`; then its stage goes back.
  auto finish = [&](const std::string& iter, const std::string& regs, int pending) {
    open("");
    bind(iter, oldest);
    product.name = regs;
    for (size_t i = 0; i < loads.size(); ++i) usePreload(loads[i], registersOf(regs)[i]);
    line("tlc::wgmma_wait<" + std::to_string(pending) + ">();");
    line("tlc::fence_registers<" + std::to_string(product.elems) + ">(" + regs + ");");
    Accesses inner;
    for (const Stmt& s : after) emitBlock(s, inner);
    preloaded_.clear();
    unbind();
    releaseStage(oldest);
    line(oldest + " = " + newest + ";");
    close();
  };
  // Every wait below retires a known number of groups on every path (ptxas
  // serializes the wgmmas otherwise): one group is in flight, in `first`,
  // at the top of the loop.
  open("if (" + n + " > 0)");
  issue("0", first);
  line(oldest + " = " + newest + ";");
  line("int " + j + " = 1;");
  line("#pragma unroll 1");
  open("for (; " + j + " + 1 < " + n + "; " + j + " += 2)");
  issue(j, second);
  finish(j + " - 1", first, 1);
  issue(j + " + 1", first);
  finish(j, second, 1);
  close();
  open("if (" + j + " < " + n + ")");
  issue(j, second);
  finish(j + " - 1", first, 1);
  finish(j, second, 0);
  close();
  open("else");
  finish(j + " - 1", first, 0);
  close();
  close();
  product.name = first;
  close();
  scratchUntracked_ = false;
}

}  // namespace tlc::cuda
