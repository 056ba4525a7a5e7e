// The software-pipelined tensor-core mainloop: a Pipelined loop whose body is
// global->shared copies followed by one mma.sync gemm on the copied tiles.
//
// The generic pipeline (emitPipelined) waits for a stage, synchronizes, and
// only then loads the gemm's first operand fragments, so every stage starts
// with the tensor pipe idle behind the barrier and the ldmatrix latency.
// Here the operand fragments are double-buffered in registers: step k's mma
// runs while step k+1's fragments load, and the last step of a stage waits
// for the next stage, synchronizes, and loads that stage's first fragments
// before issuing its own mma. The copies of stage i + stages - 1 are issued
// at the top of iteration i: the barrier inside iteration i - 1 ordered every
// read of that slot (all of them were fragment loads issued before it) before
// them.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cuda {

using namespace ir;

bool KernelEmitter::mmaMainloopEligible(const GemmStmt* g, const PipelineSchedule& sched) {
  if (!options_.dialect().nvidiaTensorCores) return false;  // ldmatrix + mma.sync
  for (const WgmmaGemm& w : wgmma_)
    if (w.gemm == g) return false;  // wgmma in place
  MmaShape s;
  if (!mmaShapeOf(g, threads_, options_, &s) || g->clearAccum) return false;
  if (s.kind != MmaKind::F16 && s.kind != MmaKind::BF16) return false;
  int64_t steps = s.k / s.kStep, an = s.n / s.warpsN / 8;
  if (steps < 2 || steps % 2 || an % 2) return false;
  for (const Region* r : {&g->a, &g->b}) {
    if (bufs_[r->buffer.get()].place != Placement::Shared) return false;
    std::vector<const BufferNode*> tiles = sched.tiles();
    if (std::find(tiles.begin(), tiles.end(), r->buffer.get()) == tiles.end()) return false;
  }
  const BufferInfo& c = bufs_[g->c.buffer.get()];
  if (c.place != Placement::Register || !c.fragment || c.warpsM != s.warpsM || c.warpsN != s.warpsN || c.colMajor ||
      g->c.buffer->dtype != DType::Float32)
    return false;
  return ldmatrixOperandOk(g->a) && ldmatrixOperandOk(g->b);
}

// ldmatrix of the warp's A and B fragments for k-step `kk` into register
// buffer `buf` (the operand buffers' versions select the stage).
void KernelEmitter::emitMmaFragmentLoads(const MmaShape& s, const Expr& kk, int buf) {
  LocationScope at(*this, mmaMainloop_.gemm->loc);
  const MmaMainloop& ml = mmaMainloop_;
  const GemmStmt* g = ml.gemm;
  int64_t wm = s.m / s.warpsM, wn = s.n / s.warpsN, am = wm / 16, an = wn / 8;
  Expr lane = makeVarRef(ml.lane);
  std::string B = "[" + std::to_string(buf) + "]";
  for (int64_t a = 0; a < am; ++a) {
    Expr rowBase = add(mul(makeVarRef(ml.warpM), makeInt(wm)), makeInt(a * 16));
    auto [row, k] = ldmatrixAElement(lane, rowBase, kk, g->transA);
    line(std::string(g->transA ? "tlc::ldmatrix_x4_trans(" : "tlc::ldmatrix_x4(") + ml.aFrag + B + "[" +
         std::to_string(a) + "], &" + access(g->a.buffer, operandIndex(g->a, g->transA, row, k)) + ");");
  }
  for (int64_t b = 0; b < an; b += 2) {
    Expr colBase = add(mul(makeVarRef(ml.warpN), makeInt(wn)), makeInt(b * 8));
    auto [k, col] = ldmatrixBElement(lane, colBase, kk, g->transB, true);
    std::string tmp = fresh("b4"), lo = ml.bFrag + B + "[" + std::to_string(b) + "]",
                hi = ml.bFrag + B + "[" + std::to_string(b + 1) + "]";
    line("unsigned " + tmp + "[4];");
    line(std::string(g->transB ? "tlc::ldmatrix_x4(" : "tlc::ldmatrix_x4_trans(") + tmp + ", &" +
         access(g->b.buffer, operandIndex(g->b, g->transB, k, col)) + ");");
    line(lo + "[0] = " + tmp + "[0]; " + lo + "[1] = " + tmp + "[1]; " + hi + "[0] = " + tmp + "[2]; " + hi +
         "[1] = " + tmp + "[3];");
  }
}

void KernelEmitter::emitMmaSteps(const MmaShape& s, int buf) {
  LocationScope at(*this, mmaMainloop_.gemm->loc);
  const MmaMainloop& ml = mmaMainloop_;
  int64_t am = s.m / s.warpsM / 16, an = s.n / s.warpsN / 8;
  std::string fn = s.kind == MmaKind::F16 ? "tlc::mma_m16n8k16_f16" : "tlc::mma_m16n8k16_bf16";
  std::string acc = bufs_[ml.gemm->c.buffer.get()].name, B = "[" + std::to_string(buf) + "]";
  for (int64_t b = 0; b < an; ++b)
    for (int64_t a = 0; a < am; ++a)
      line(fn + "(&" + acc + "[" + std::to_string((a * an + b) * 4) + "], " + ml.aFrag + B + "[" + std::to_string(a) +
           "], " + ml.bFrag + B + "[" + std::to_string(b) + "]);");
}

// Declares the mainloop's lane and warp coordinates and its double-buffered
// operand fragments.
void KernelEmitter::openMmaMainloop(const GemmStmt* g, const MmaShape& s) {
  int64_t am = s.m / s.warpsM / 16, an = s.n / s.warpsN / 8;
  MmaMainloop& ml = mmaMainloop_;
  ml = MmaMainloop{};
  ml.gemm = g;
  ml.lane = makeVar("lane");
  ml.warpM = makeVar("warp_m");
  ml.warpN = makeVar("warp_n");
  for (auto& v : {ml.lane, ml.warpM, ml.warpN}) markNonNegative(v);
  line("const int " + varName(ml.lane) + " = tid % 32;");
  line("const int " + varName(ml.warpM) + " = (tid / 32) / " + std::to_string(s.warpsN) + ";");
  line("const int " + varName(ml.warpN) + " = (tid / 32) % " + std::to_string(s.warpsN) + ";");
  ml.aFrag = fresh("a_frag");
  ml.bFrag = fresh("b_frag");
  line("unsigned " + ml.aFrag + "[2][" + std::to_string(am) + "][4];");
  line("unsigned " + ml.bFrag + "[2][" + std::to_string(an) + "][2];");
}

// One iteration's mma steps, step k's mma issued after step k + 1's
// fragment loads; before the last step's mma, `nextStage` waits for the next
// iteration's stage and loads its first fragments (into buffer `buf`).
// `current` selects the iteration's stage for the operand loads.
void KernelEmitter::emitMmaIteration(const MmaShape& s, const std::function<void()>& current,
                                     const std::function<void(int buf)>& nextStage) {
  int64_t steps = s.k / s.kStep;
  for (int64_t k = 0; k < steps; ++k) {
    int cur = (int)(k % 2), nxt = 1 - cur;
    if (k + 1 < steps) {
      current();
      emitMmaFragmentLoads(s, makeInt((k + 1) * s.kStep), nxt);
    } else {
      nextStage(nxt);
    }
    setTileVersion(nullptr);
    emitMmaSteps(s, cur);
  }
}

// `if (cond) { const int <stage> = value; }` around the first fragments of
// that stage, loaded into buffer `buf` (after the wait for the stage).
void KernelEmitter::emitStageFragments(const MmaShape& s, const std::string& cond, const Var& stage,
                                       const std::string& value, int buf) {
  open("if (" + cond + ")");
  line("const int " + varName(stage) + " = " + value + ";");
  setTileVersion(makeVarRef(stage));
  emitMmaFragmentLoads(s, makeInt(0), buf);
  setTileVersion(nullptr);
  close();
}

// Which stage the pipeline's tiles name in the accesses emitted next
// (null: none).
void KernelEmitter::setTileVersion(const Expr& v) {
  for (const BufferNode* b : mmaMainloop_.tiles) bufs_[b].version = v;
}

// The mainloop from the tile IR's expansion of the loop (passes::expandLoop):
// its prologue and its copies issued ahead are the expansion's statements;
// each iteration's leading wait_group (and the barrier after it) runs at the
// end of the iteration before, where the next stage's first fragments are
// loaded before the last mma step. The expansion's stages, (k - min) % D for
// the consumers and (k - min + D - 1) % D for the copies, come from a
// counter advanced each iteration (a compare and select, not a division).
void KernelEmitter::emitExpandedMma(const ForStmt* f, const passes::PipelineExpansion& x, const GemmStmt* g,
                                    Accesses& pending) {
  MmaShape s;
  mmaShapeOf(g, threads_, options_, &s);
  passes::ExpandedLoop e = openExpandedPipeline(f, x, pending);
  emitBlock(e.prologue, pending);
  openMmaMainloop(g, s);
  MmaMainloop& ml = mmaMainloop_;
  for (const Buffer& t : x.tiles) ml.tiles.push_back(t.get());
  std::string n = fresh("n_iter"), it = fresh("iter"), counter = fresh("stage_of_iter");
  int64_t d = x.depth;
  line("const int " + n + " = " + expr(f->extent) + ";");
  line("int " + counter + " = " + std::to_string(d - 1) + ";");
  Var k = f->var, first = makeVar("stage"), next = makeVar("stage_next");
  for (const Var& v : {first, next}) markNonNegative(v);
  if (isNonNegative(f->min)) markNonNegative(k);
  // Iteration 0's wait, and its stage's first fragments.
  emitBlock(e.wait, pending);
  emitStageFragments(s, "0 < " + n, first, "0", 0);
  open("for (int " + it + " = 0; " + it + " < " + n + "; ++" + it + ")");
  line(counter + " = " + counter + " == " + std::to_string(d - 1) + " ? 0 : " + counter + " + 1;");
  line("const " + typeName(k->dtype) + " " + varName(k) + " = " + expr(f->min) + " + " + it + ";");
  // The copies D - 1 iterations ahead, into the stage before this one.
  Var ahead = makeVar("stage_ahead");
  markNonNegative(ahead);
  line("const int " + varName(ahead) + " = " + stagePlus(d, counter, d - 1) + ";");
  auto* cond = as<IfStmt>(e.issue);
  auto* copies = as<VersionStmt>(cond->thenBody);
  Stmt issue = std::make_shared<const IfStmt>(
      cond->cond, std::make_shared<const VersionStmt>(copies->buffers, makeVarRef(ahead), copies->body, copies->loc),
      nullptr, cond->loc);
  Accesses issued;
  emitBlock(issue, issued);
  emitBlock(e.commit, issued);
  Var st = makeVar("stage");
  markNonNegative(st);
  line("const int " + varName(st) + " = " + counter + ";");
  emitMmaIteration(
      s, [&] { setTileVersion(makeVarRef(st)); },
      [&](int buf) {
        emitBlock(e.wait, pending);  // iteration it + 1's
        emitStageFragments(s, it + " + 1 < " + n, next, stagePlus(d, counter, 1), buf);
      });
  close();
  emitBlock(e.drain, pending);
  close();
  ml = MmaMainloop{};
  pending = accessesOf(f->body);
}

// The same loop from the emitter's own schedule (loops whose copies the
// expansion does not take: gathers, split element copies).
void KernelEmitter::emitPipelinedMma(const ForStmt* f, const PipelineSchedule& sched, const GemmStmt* g,
                                     Accesses& pending) {
  MmaShape s;
  mmaShapeOf(g, threads_, options_, &s);
  int64_t stages = sched.depth;
  PipelineExpansion px = openPipeline(f, sched, pending);
  const std::string& n = px.iterations;
  Var version = px.version;
  openMmaMainloop(g, s);
  MmaMainloop& ml = mmaMainloop_;
  ml.tiles = sched.tiles();
  // The first stage's first fragments.
  line("tlc::cp_async_wait<" + std::to_string(stages - 2) + ">();");
  line(syncThreads());
  emitStageFragments(s, "0 < " + n, version, "0", 0);

  std::string it = fresh("iter");
  open("for (int " + it + " = 0; " + it + " < " + n + "; ++" + it + ")");
  advanceStage(px);
  issueAhead(px, it);
  open("");
  line("const int " + varName(version) + " = " + px.stageCounter + ";");
  // The loop variable, where the gemm's regions use it (they usually name
  // whole stage buffers).
  std::unordered_set<const VarNode*> loopVar{f->var.get()};
  UsesVars uses(loopVar);
  for (const Region* r : {&g->a, &g->b, &g->c}) uses.visitRegion(*r);
  if (uses.found)
    line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(f->min) + " + " + it + ";");
  Var next = makeVar("stage_next");
  markNonNegative(next);
  emitMmaIteration(
      s, [&] { setTileVersion(makeVarRef(version)); },
      [&](int buf) {
        line("tlc::cp_async_wait<" + std::to_string(stages - 2) + ">();");
        line(syncThreads());
        emitStageFragments(s, it + " + 1 < " + n, next, stagePlus(stages, px.stageCounter, 1), buf);
      });
  close();
  close();
  line("tlc::cp_async_wait<0>();");
  close();
  ml = MmaMainloop{};
  pending = accessesOf(f->body);
}

}  // namespace tlc::cuda
