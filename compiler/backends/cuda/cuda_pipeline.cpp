// The expansion of a pipelined loop into a prologue and a steady state
// (docs/cuda-backend.md, "What the CUDA backend runs"): the producers'
// copies issued depth - 1 iterations ahead into the stages of their tiles,
// one cp.async commit group per iteration, the consumers after a wait for
// their stage. Without asynchronous copies (HIP) the producers are
// register-staged instead (cuda_deferred_copies.cpp): loaded ahead into
// registers, stored into their stage after the consumers. The tensor-core mainloop (cuda_mma_mainloop.cpp) and the
// Hopper mainloop (cuda_hopper_mainloop.cpp) build on the producer side here.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"

namespace tlc::cuda {

using namespace ir;

// The producer side of an expanded pipeline, shared by emitPipelined and
// emitPipelinedMma: opens the pipeline's scope (after a barrier: everything
// before the loop is complete before its first copies land), declares the
// iteration count, the producers' per-thread chunk offsets and the stage
// counter, and issues the prologue: the copies of the first depth - 1
// iterations (stage = iteration), one commit group each.
KernelEmitter::PipelineExpansion KernelEmitter::openPipeline(const ForStmt* f, const PipelineSchedule& sched,
                                                             Accesses& pending, bool splitElementCopies) {
  PipelineExpansion px{f, &sched, makeVar("stage"), "", "", {}};
  if (splitElementCopies) px.deferred = deferredCopies(f, sched);
  barrier(pending);
  open("");
  px.iterations = fresh("n_iter");
  line("const int " + px.iterations + " = " + expr(f->extent) + ";");
  for (auto* c : sched.producers)
    if (!px.deferredOf(c)) declareCopyThreadOffsets(c);
  markNonNegative(px.version);
  if (isNonNegative(f->min)) markNonNegative(f->var);
  // Without asynchronous copies every producer is register-staged (split):
  // the prologue is the split copies' alone.
  if (options_.dialect().asyncCopies) {
    std::string p = fresh("pre");
    open("for (int " + p + " = 0; " + p + " < " + std::to_string(sched.depth - 1) + "; ++" + p + ")");
    open("if (" + p + " < " + px.iterations + ")");
    issueProducers(px, p, p, true);
    close();
    line("tlc::cp_async_commit();");
    close();
  }
  issueDeferredPrologue(px);
  px.stageCounter = fresh("stage_of_iter");
  line("int " + px.stageCounter + " = " + std::to_string(sched.depth - 1) + ";");
  return px;
}

// The stages of an iteration cycle through [0, depth): at the top of each
// iteration the counter advances to iteration % depth (a compare and select
// instead of a division in the loop).
void KernelEmitter::advanceStage(const PipelineExpansion& px) {
  const std::string& c = px.stageCounter;
  line(c + " = " + c + " == " + std::to_string(px.schedule->depth - 1) + " ? 0 : " + c + " + 1;");
}

// `stage` + `by` modulo the pipeline depth, for 0 <= by < depth, as C.
std::string KernelEmitter::stagePlus(int64_t d, const std::string& stage, int64_t by) {
  by %= d;
  if (by == 0) return stage;
  return "(" + stage + " >= " + std::to_string(d - by) + " ? " + stage + " - " + std::to_string(d - by) + " : " + stage +
         " + " + std::to_string(by) + ")";
}

// Defines the stage and the loop variable of iteration `iter`, whose
// producers write the buffers of `stage`.
void KernelEmitter::defineProducerIteration(const PipelineExpansion& px, const std::string& iter,
                                            const std::string& stage) {
  const ForStmt* f = px.loop;
  line("const int " + varName(px.version) + " = " + stage + ";");
  line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(f->min) + " + (" + iter + ");");
  setProducerVersion(px, &px.version);
}

// The producers' copies for iteration `iter` into the buffers of `stage`
// (the split ones' loads only, in the main loop; the prologue issues those
// separately).
void KernelEmitter::issueProducers(const PipelineExpansion& px, const std::string& iter, const std::string& stage,
                                   bool prologue) {
  defineProducerIteration(px, iter, stage);
  noUnroll_ = true;
  for (auto* c : px.schedule->producers) {
    if (const DeferredCopy* d = px.deferredOf(c)) {
      if (!prologue) emitDeferredLoads(*d, d->regs);
    } else {
      emitCopy(c, true, true);
    }
  }
  for (auto& g : px.schedule->gathers) emitGather(g, "tid", threads_, "", px.loop->var.get());
  noUnroll_ = false;
  setProducerVersion(px, nullptr);
}

// At the top of iteration `iter` (after advanceStage): the copies depth - 1
// iterations ahead, if any, and their commit group (empty at the end, to keep
// the wait counts).
void KernelEmitter::issueAhead(const PipelineExpansion& px, const std::string& iter) {
  int64_t ahead = px.schedule->depth - 1;
  open("");
  open("if (" + iter + " + " + std::to_string(ahead) + " < " + px.iterations + ")");
  issueProducers(px, iter + " + " + std::to_string(ahead), stagePlus(px.schedule->depth, px.stageCounter, ahead),
                 false);
  close();
  if (options_.dialect().asyncCopies) line("tlc::cp_async_commit();");
  close();
}

// Which stage's buffers the producers' destinations name (null: unversioned).
void KernelEmitter::setProducerVersion(const PipelineExpansion& px, const Var* v) {
  for (auto* b : px.schedule->tiles()) bufs_[b].version = v ? makeVarRef(*v) : nullptr;
}

// The statements of a pipelined loop's body other than its producer copies,
// in program order (the producers may stand anywhere: see pipelineSchedule).
std::vector<Stmt> KernelEmitter::nonProducers(const ForStmt* f, const PipelineSchedule& sched) {
  std::vector<Stmt> out;
  for (const Stmt& s : seqStmts(f->body))
    if (!sched.produces(s.get())) out.push_back(s);
  return out;
}

void KernelEmitter::emitPipelined(const ForStmt* f, const PipelineSchedule& sched, Accesses& pending) {
  std::vector<Stmt> consumers = nonProducers(f, sched);
  int64_t stages = sched.depth;
  // The tile IR's own expansion (expand-pipelines), where it takes the loop.
  // (Copies that move no whole vectors may be split around the iteration,
  // cuda_deferred_copies.cpp: those loops keep the emitter's schedule.)
  bool vectorCopies = std::all_of(sched.producers.begin(), sched.producers.end(),
                                  [&](const CopyStmt* c) { return vectorWidth(c) != 0; });
  passes::PipelineExpansion x;
  bool expanded = false;
  if (options_.dialect().asyncCopies && sched.gathers.empty() && vectorCopies && !registerPrefetch(f, consumers)) {
    x = passes::pipelineExpansion(f);
    expanded = x.why.empty() && x.depth == sched.depth;
  }
  if (consumers.size() == 1 && stages >= 2)
    if (auto* g = as<GemmStmt>(consumers[0]); g && mmaMainloopEligible(g, sched))
      return expanded ? emitExpandedMma(f, x, g, pending) : emitPipelinedMma(f, sched, g, pending);
  // A body of one gemm run as wgmma in place: its wgmmas are issued first
  // and the next stages' copies run while they do (they write a stage the
  // last iteration's wgmmas, waited for before the barrier, read).
  const GemmStmt* overlapped = nullptr;
  if (consumers.size() == 1)
    if (auto* g = as<GemmStmt>(consumers[0]); g && isWgmmaGemm(g)) overlapped = g;
  // The plain form: the expansion emitted statement by statement.
  if (!overlapped && expanded) return emitExpandedPipeline(f, x, pending);
  PipelineExpansion px = openPipeline(f, sched, pending, !overlapped);
  // A register tile loaded from global memory first in each iteration is
  // loaded one iteration ahead, beside the shared-memory stages.
  const CopyStmt* prefetch = registerPrefetch(f, consumers);
  std::optional<RegisterPrefetch> ahead;
  if (prefetch) ahead = openRegisterPrefetch(f, prefetch, pending);
  const std::string& n = px.iterations;
  Var version = px.version;
  std::string it = fresh("iter");
  open("for (int " + it + " = 0; " + it + " < " + n + "; ++" + it + ")");
  advanceStage(px);
  if (options_.dialect().asyncCopies) line("tlc::cp_async_wait<" + std::to_string(stages - 2) + ">();");
  line(syncThreads());
  if (overlapped) {
    open("");
    line("const int " + varName(version) + " = " + px.stageCounter + ";");
    line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(f->min) + " + " + it + ";");
    setProducerVersion(px, &version);
    emitGemmWgmma(overlapped, false);
    setProducerVersion(px, nullptr);
    close();
    issueAhead(px, it);
    line("tlc::wgmma_wait<0>();");
    line(wgmmaPin(overlapped));
    close();
    line("tlc::cp_async_wait<0>();");
    close();
    pending = accessesOf(f->body);
    return;
  }
  declareDeferredRegisters(px);
  issueAhead(px, it);
  open("");
  line("const int " + varName(version) + " = " + px.stageCounter + ";");
  line("const " + typeName(f->var->dtype) + " " + varName(f->var) + " = " + expr(f->min) + " + " + it + ";");
  setProducerVersion(px, &version);
  Accesses inner;
  if (ahead) takeRegisterPrefetch(*ahead);
  std::vector<Stmt> rest(consumers.begin() + (ahead ? 1 : 0), consumers.end());
  preloadInvariantLoads(rest);
  for (const Stmt& c : rest) emitBlock(c, inner);
  preloaded_.clear();
  setProducerVersion(px, nullptr);
  close();
  storeDeferred(px, it);
  close();
  if (options_.dialect().asyncCopies) line("tlc::cp_async_wait<0>();");
  close();
  pending = accessesOf(f->body);
}

// A pipelined loop as expand-pipelines writes it out (prologue, steady
// state, drain: passes::expandLoop), emitted by emitBlock: `version` blocks
// select the tiles' stages, copy_async issues cp.async runs, commit_group
// and wait_group are cp.async's, and a wait is followed by the block
// barrier that makes the completed copies visible to every thread.
void KernelEmitter::emitExpandedPipeline(const ForStmt* f, const passes::PipelineExpansion& x, Accesses& pending) {
  passes::ExpandedLoop e = openExpandedPipeline(f, x, pending);
  emitBlock(e.stmt, pending);
  close();
  pending = accessesOf(f->body);
}

// Opens the scope of an expanded pipeline (after a barrier: everything before
// the loop is complete before its first copies land) and expands it. Each
// copy's per-thread offsets are the same in every iteration: declared once,
// for every copy_async that issues it.
passes::ExpandedLoop KernelEmitter::openExpandedPipeline(const ForStmt* f, const passes::PipelineExpansion& x,
                                                         Accesses& pending) {
  barrier(pending);
  open("");
  for (const Stmt& p : x.producers) declareCopyThreadOffsets(as<CopyStmt>(p));
  std::vector<std::pair<const CopyStmt*, size_t>> issued;
  passes::ExpandedLoop e = passes::expandLoop(f, x, [](const Stmt& c) { return c; }, &issued);
  for (auto [copy, producer] : issued)
    if (auto it = hoistedCopyOffsets_.find(as<CopyStmt>(x.producers[producer])); it != hoistedCopyOffsets_.end())
      hoistedCopyOffsets_[copy] = it->second;
  return e;
}

// The statements of an expanded pipeline (emitBlock).
void KernelEmitter::emitVersion(const VersionStmt* v, Accesses& pending) {
  std::vector<Expr> before;
  for (const Buffer& b : v->buffers) {
    before.push_back(bufs_[b.get()].version);
    bufs_[b.get()].version = v->version;
  }
  // The consumers' block (the one without copies) loads what it can ahead, as a pipelined iteration does.
  std::vector<Stmt> body = seqStmts(v->body);
  bool consumers = std::none_of(body.begin(), body.end(), [](const Stmt& s) {
    auto* c = as<CopyStmt>(s);
    return c && c->async;
  });
  if (consumers) preloadInvariantLoads(body);
  emitBlock(v->body, pending);
  if (consumers) preloaded_.clear();
  for (size_t i = 0; i < v->buffers.size(); ++i) bufs_[v->buffers[i].get()].version = before[i];
}

// (A pipeline stage's accesses, accessesOf, are its source's alone: see
// AccessScan. A standalone copy_async, cuda-async-copies', waits for the
// earlier accesses to its destination, as a copy does; its wait_group's
// barrier orders the later ones.)
void KernelEmitter::emitAsyncCopy(const CopyStmt* c, Accesses& pending) {
  Accesses a = accessesOf(std::make_shared<CopyStmt>(*c));
  bool staged = isStagedTile(c->dst.buffer);
  if (!staged && pending.conflictsWith(a)) barrier(pending);
  noUnroll_ = staged;  // edge tiles' checked loops stay rolled, as every pipeline producer's
  emitCopy(c, true, true);
  noUnroll_ = false;
  pending.merge(a);
}

}  // namespace tlc::cuda
