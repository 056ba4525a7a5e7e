// Register prefetch: a serial or pipelined loop whose iterations begin by
// loading a register tile from global memory issues that load one
// iteration ahead, into a second register tile, so that its latency
// overlaps the rest of the body instead of stalling the statements that
// use the tile. The next tile stays as loaded (packed words of the source
// type, unconverted) until the iteration that uses it: converting it at once
// would wait for the load.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_kernel_scan.h"
#include "compiler/ir/loop_jumps.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cuda {

using namespace ir;

// The copy that a loop can issue one iteration ahead: the first of the
// statements `body` (those of the loop's body that run in order each
// iteration) is a global -> register tile copy (which overwrites the whole
// tile, so the previous value is dead there) whose source region uses
// nothing the body binds or loads, and the rest of the body does not write
// the source tensor. Null when the loop does not qualify, and for a loop
// that jumps (a `continue` would skip the load an iteration ahead, a `break`
// would leave it unused): such a loop keeps its plain form. So does every
// loop of a kernel whose prefetched tiles would cost it blocks per SM
// (streamingBlocksPerSM).
const CopyStmt* KernelEmitter::registerPrefetch(const ForStmt* loop, const std::vector<Stmt>& body) {
  if (!registerPrefetch_ || body.size() < 2 || jumpsOutOf(loop->body)) return nullptr;
  auto* c = as<CopyStmt>(body[0]);
  if (!c || c->src.buffer->scope != MemScope::Global) return nullptr;
  auto it = bufs_.find(c->dst.buffer.get());
  if (it == bufs_.end() || !packableLoad(c)) return nullptr;
  BoundVars bound;
  bound.visit(loop->body);
  UsesVars uses(bound.vars);
  uses.visitRegion(c->src);
  if (uses.found || uses.loads) return nullptr;
  KernelScan rest;
  for (const Stmt& s : seqStmts(loop->body)) {
    if (s.get() == c) continue;
    rest.depth = 1;  // count every write
    rest.visit(s);
  }
  if (rest.writtenInParallel.count(c->src.buffer.get())) return nullptr;
  return c;
}

bool KernelEmitter::hasRegisterPrefetch() {
  struct Loops : IRVisitor {
    KernelEmitter* em;
    bool found = false;
    void visitFor(const ForStmt* f) override {
      if (f->forKind == ForKind::Serial || f->forKind == ForKind::Pipelined) {
        // As emitted: a pipeline prefetches the first of its consumers.
        PipelineSchedule sched;
        if (em->registerPrefetch(f, em->runsPipelined(f, &sched) ? nonProducers(f, sched) : seqStmts(f->body)))
          found = true;
      }
      if (!found) IRVisitor::visitFor(f);
    }
  } loops;
  loops.em = this;
  loops.visit(kernel_.body);
  return loops.found;
}

// Declares the loop's bounds and the next tile, and loads the first
// iteration's tile into it (the caller then opens the loop).
KernelEmitter::RegisterPrefetch KernelEmitter::openRegisterPrefetch(const ForStmt* f, const CopyStmt* copy,
                                                                    Accesses& pending) {
  BufferInfo& tile = bufs_[copy->dst.buffer.get()];
  RegisterPrefetch p{f, copy, tile.name, fresh(tile.name + "_next"), "", ""};
  Accesses load = accessesOf(std::make_shared<CopyStmt>(*copy));
  if (pending.conflictsWith(load)) barrier(pending);
  pending.merge(load);
  if (isNonNegative(f->min)) markNonNegative(f->var);
  std::string t = typeName(f->var->dtype), first = fresh(varName(f->var) + "_first");
  p.end = fresh(varName(f->var) + "_end");
  line("const " + t + " " + first + " = " + expr(f->min) + ";");
  line("const " + t + " " + p.end + " = " + expr(add(f->min, f->extent)) + ";");
  line("unsigned " + p.next + "[" + std::to_string(tile.elems * dtypeBytes(copy->src.buffer->dtype) / 4) + "];");
  p.first = first;
  issueRegisterPrefetch(p, first);
  return p;
}

// Loads the tile of iteration `iter` (when there is one) into the next tile.
void KernelEmitter::issueRegisterPrefetch(const RegisterPrefetch& p, const std::string& iter) {
  BufferInfo& tile = bufs_[p.copy->dst.buffer.get()];
  open("if (" + iter + " < " + p.end + ")");
  line("const " + typeName(p.loop->var->dtype) + " " + varName(p.loop->var) + " = " + iter + ";");
  tile.name = p.next;
  emitTileCopy(p.copy, true);
  tile.name = p.current;
  close();
}

// In the body of iteration k (the loop variable in scope): the tile takes
// the next tile's values, converted, and the load of iteration k + 1 starts.
void KernelEmitter::takeRegisterPrefetch(const RegisterPrefetch& p) {
  const BufferInfo& tile = bufs_[p.copy->dst.buffer.get()];
  DType loaded = p.copy->src.buffer->dtype, dtype = p.copy->dst.buffer->dtype;
  line("#pragma unroll");
  line("for (int r = 0; r < " + std::to_string(tile.elems) + "; ++r) " + p.current + "[r] = " +
       cast(dtype, loaded, "tlc::unpack<" + typeName(loaded) + ">(" + p.next + ", r)") + ";");
  std::string k = varName(p.loop->var), following = fresh(k + "_next");
  line("const " + typeName(p.loop->var->dtype) + " " + following + " = " + k + " + 1;");
  issueRegisterPrefetch(p, following);
}

// A serial loop whose first statement qualifies (registerPrefetch).
void KernelEmitter::emitPrefetchedLoop(const ForStmt* f, const CopyStmt* prefetch, Accesses& pending) {
  open("");
  RegisterPrefetch p = openRegisterPrefetch(f, prefetch, pending);
  Accesses inner = pending;
  inner.merge(loopCarried(f));
  std::string t = typeName(f->var->dtype), k = varName(f->var);
  open("for (" + t + " " + k + " = " + p.first + "; " + k + " < " + p.end + "; ++" + k + ")");
  takeRegisterPrefetch(p);
  std::vector<Stmt> body = seqStmts(f->body);
  for (size_t i = 1; i < body.size(); ++i) emitBlock(body[i], inner);
  close();
  close();
  pending = inner;
}

}  // namespace tlc::cuda
