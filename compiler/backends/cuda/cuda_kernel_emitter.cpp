// Statement-level emission of one CUDA kernel: block-level statements (run
// by the whole block, with barriers), thread-level statements (inside
// Parallel loops), Parallel loop partitioning and software pipelining.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "compiler/passes/simplify.h"

#include "compiler/backends/c_names.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/loop_jumps.h"

namespace tlc::cuda {

using namespace ir;

std::vector<const ForStmt*> parallelNest(const ForStmt* f, Stmt* body);

KernelEmitter::KernelEmitter(const PrimFunc& func, const KernelStmt& kernel, const CudaOptions& options,
                             DiagnosticEngine& diags, std::string name, const std::vector<KernelArg>& args)
    : func_(func), kernel_(kernel), options_(options), diags_(diags), name_(std::move(name)), args_(args) {
  threads_ = kernel.threads;
  // Identifiers the CUDA emitter writes as they are, in scopes where it also
  // writes variables' names (loop counters around register accesses, the
  // block rasterization, helpers called unqualified): variables named so get
  // another spelling.
  for (const char* n : {"tid", "tlc_smem", "tlc_block", "tlc_rows", "tlc_group_blocks", "tlc_group", "tlc_in_group",
                        "tlc_first_row", "tlc_group_rows", "r", "ri", "c", "in_v", "out_v", "min", "max"})
    reserveName(n);
  tid_ = makeVar("tid");
  bindName(tid_.get(), "tid");
  markNonNegative(tid_);
}

std::string KernelEmitter::typeName(DType t) const {
  if (const char* narrow = narrowTypeName(options_.dialect(), t)) return narrow;
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "tlc::i8";
    case DType::Int16: return "tlc::i16";
    case DType::Int32: return "int";
    case DType::Int64: return "long long";
    case DType::UInt8: return "tlc::u8";
    case DType::UInt16: return "tlc::u16";
    case DType::UInt32: return "unsigned";
    case DType::UInt64: return "unsigned long long";
    case DType::Float16: return "__half";
    case DType::BFloat16: return "__nv_bfloat16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float8E4M3: return "__nv_fp8_e4m3";
    case DType::Float8E5M2: return "__nv_fp8_e5m2";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Addressing

Expr KernelEmitter::offsetExpr(const Buffer& b, const std::vector<Expr>& idxIn) {
  auto it = bufs_.find(b.get());
  TLC_CHECK(it != bufs_.end(), "buffer `" + b->name + "` has no placement");
  BufferInfo& info = it->second;
  std::vector<Expr> idx = idxIn;
  if (info.place != Placement::Global)
    for (auto& e : idx)
      if (e->dtype != DType::Int32) e = makeCast(DType::Int32, e);
  Expr off;
  if (info.layout) {
    off = info.layout->applyExpr(idx)[0];
  } else if (idx.empty()) {
    off = makeInt(0);
  } else {
    off = idx[0];
    if (info.place == Placement::Global && off->dtype != DType::Int64) off = makeCast(DType::Int64, off);
    for (size_t d = 1; d < idx.size(); ++d) {
      Expr stride = b->shape[d];
      if (d + 1 == idx.size() && info.rowPad) stride = add(stride, makeInt(info.rowPad));
      off = add(mul(off, stride), idx[d]);
    }
  }
  if (info.versions > 1 && info.version) off = add(off, mul(info.version, makeInt(info.elems)));
  return off;
}

std::string KernelEmitter::access(const Buffer& b, const std::vector<Expr>& idx) {
  BufferInfo& info = bufs_[b.get()];
  if (info.fragment || info.tile) {
    auto it = fragmentRegister_.find(b.get());
    TLC_CHECK(it != fragmentRegister_.end(), "register fragment `" + b->name + "` accessed outside its layout");
    return info.name + "[" + expr(it->second) + "]";
  }
  return info.name + "[" + expr(offsetExpr(b, idx)) + "]";
}

std::string KernelEmitter::loadExpr(const Load* l) {
  if (const std::string* name = preloaded_.empty() ? nullptr : preloadedName(l)) return *name;
  if (vecNest_)
    if (auto it = vecNest_->loadOf.find(l); it != vecNest_->loadOf.end()) {
      const VectorRun& run = vecNest_->loads[it->second];
      if (vecNest_->straight) return run.name + "[" + vecNest_->lane + "]";
      return "(" + run.ok + " ? " + run.name + "[" + vecNest_->lane + "] : " + access(l->buffer, l->indices) + ")";
    }
  return access(l->buffer, l->indices);
}

// The condition that `idx` lies inside `b`, with the comparisons that hold
// for every value left out: the indices are simplified first (folding
// `x + 8 - 1` into `x + 7`, which is then known to be non-negative when x is).
Expr KernelEmitter::inBounds(const Buffer& b, const std::vector<Expr>& idxIn) {
  Expr cond = makeBool(true);
  std::vector<Expr> idx;
  for (auto& e : idxIn) idx.push_back(passes::simplifyExpr(e));
  for (size_t d = 0; d < idx.size(); ++d) {
    int64_t i, n;
    if (constInt(idx[d], &i) && constInt(b->shape[d], &n) && i >= 0 && i < n) continue;
    Expr shape = b->shape[d];
    Expr e = idx[d];
    if (e->dtype != shape->dtype) {
      DType t = promote(e->dtype, shape->dtype);
      e = makeCast(t, e);
      shape = makeCast(t, shape);
    }
    cond = logicalAnd(cond, lt(e, shape));
    if (!isNonNegative(idx[d])) cond = logicalAnd(cond, makeBinary(BinaryOp::Ge, e, makeInt(0, e->dtype)));
  }
  return cond;
}

Var KernelEmitter::openLoop(const Expr& total, bool partitioned, const std::string& hint) {
  Var v = makeVar(hint, total->dtype == DType::Int64 ? DType::Int64 : DType::Int32);
  markNonNegative(v);
  std::string n = varName(v), t = typeName(v->dtype), tot = expr(total);
  int64_t c;
  if (partitioned) {
    std::string T = std::to_string(threads_);
    if (constInt(total, &c) && c % threads_ == 0) {
      std::string k = fresh("k");
      std::string pragma = noUnroll_ ? "#pragma unroll 1\n" + std::string(indent_ * 2, ' ')
                           : c / threads_ <= 64 ? "#pragma unroll\n" + std::string(indent_ * 2, ' ') : "";
      open(pragma + "for (int " + k + " = 0; " + k + " < " + std::to_string(c / threads_) + "; ++" + k + ")");
      line("const " + t + " " + n + " = " + k + " * " + T + " + tid;");
    } else {
      open("for (" + t + " " + n + " = tid; " + n + " < " + tot + "; " + n + " += " + T + ")");
    }
  } else {
    open("for (" + t + " " + n + " = 0; " + n + " < " + tot + "; ++" + n + ")");
  }
  return v;
}

// ---------------------------------------------------------------------------
// Statements

void KernelEmitter::barrier(Accesses& pending) {
  line(syncThreads());
  pending = Accesses();
}

void KernelEmitter::emitAlloc(const AllocStmt* a, bool blockLevel) {
  const Buffer& b = a->buffer;
  BufferInfo& info = bufs_[b.get()];
  if (blockLevel && b->scope == MemScope::Fragment) line("// " + fragmentPlacement(b.get(), info));
  if (info.place == Placement::Shared) {
    line(typeName(b->dtype) + "* " + info.name + " = reinterpret_cast<" + typeName(b->dtype) + "*>(tlc_smem + " +
         std::to_string(info.sharedOffset) + ");");
  } else {
    line(typeName(b->dtype) + " " + info.name + "[" + std::to_string(std::max<int64_t>(info.elems, 1)) + "];");
  }
}

// Where a fragment lives and why, as a comment for readers of the generated code.
std::string KernelEmitter::fragmentPlacement(const BufferNode* b, const BufferInfo& info) const {
  static const char* roles[] = {"tile", "row vector", "column vector"};
  std::string s = "`" + backend::cCommentText(b->name) + "`: ";
  if (info.fragment && info.mfma)
    return s + "registers, MFMA " + std::to_string(info.mfma) + "x" + std::to_string(info.mfma) +
           " accumulator layout (" + std::to_string(info.warpsM) + " x " + std::to_string(info.warpsN) + " wavefronts)";
  if (info.fragment && info.mmaVector != 2)
    return s + "registers, mma A-operand layout (" + std::to_string(info.mmaVector) + " columns per lane and atom)";
  if (info.fragment) return s + "registers, mma accumulator layout";
  if (info.tile) {
    const RegisterLayout& l = info.tile->layout;
    if (l.mfma)
      return s + "registers, " + roles[(int)info.tile->role] + " of an MFMA " + std::to_string(l.mfma) + "x" +
             std::to_string(l.mfma) + " accumulator layout (" + std::to_string(l.warpsM) + " x " +
             std::to_string(l.warpsN) + " wavefronts)";
    if (l.isMma())
      return s + "registers, " + roles[(int)info.tile->role] + " of an mma accumulator layout (" +
             std::to_string(l.warpsM) + " x " + std::to_string(l.warpsN) + " warps)";
    std::string padding = l.paddedRows() || l.paddedColumns()
                              ? ", padded to " + std::to_string(l.rowsPerThread() * l.rowSlots()) + " x " +
                                    std::to_string(l.chunksPerRow() * l.group * l.vector)
                              : "";
    return s + "registers, " + roles[(int)info.tile->role] + " of a row-group layout (" + std::to_string(l.group) +
           " threads per row, runs of " + std::to_string(l.vector) + padding + ")";
  }
  auto it = tiles_.fallback.find(b);
  return s + "shared memory" + (it != tiles_.fallback.end() ? " (" + it->second + ")" : "");
}

void KernelEmitter::emitSerialFor(const ForStmt* f, const std::function<void()>& body) {
  std::string n = varName(f->var), t = typeName(f->var->dtype);
  if (isNonNegative(f->min)) markNonNegative(f->var);
  std::string mn = expr(f->min);
  std::string end = constInt(f->min, nullptr) && as<IntImm>(f->min)->value == 0 ? expr(f->extent)
                                                                                  : expr(add(f->min, f->extent));
  std::string head = "for (" + t + " " + n + " = " + mn + "; " + n + " < " + end + "; ++" + n + ")";
  if (f->forKind == ForKind::Unroll || f->forKind == ForKind::Vectorized) head = "#pragma unroll\n" + std::string(indent_ * 2, ' ') + head;
  open(head);
  body();
  close();
}

void KernelEmitter::emitBlock(const Stmt& s, Accesses& pending) {
  LocationScope at(*this, s->loc);
  if (!s || failed_) return;
  switch (s->kind) {
    case StmtKind::Seq:
      for (auto& c : as<SeqStmt>(s)->stmts) emitBlock(c, pending);
      return;
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      Accesses a = accessesOf(std::make_shared<EvaluateStmt>(l->value, l->loc));
      if (pending.conflictsWith(a)) barrier(pending);
      if (isNonNegative(l->value)) markNonNegative(l->var);
      line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(l->value) + ";");
      pending.merge(a);
      emitBlock(l->body, pending);
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      Accesses a = accessesOf(std::make_shared<EvaluateStmt>(i->cond, i->loc));
      if (pending.conflictsWith(a)) barrier(pending);
      pending.merge(a);
      Accesses p1 = pending, p2 = pending;
      open("if (" + expr(i->cond) + ")");
      emitBlock(i->thenBody, p1);
      if (i->elseBody) {
        close("} else {");
        ++indent_;
        emitBlock(i->elseBody, p2);
      }
      close();
      pending = p1;
      pending.merge(p2);
      return;
    }
    case StmtKind::Alloc: emitAlloc(as<AllocStmt>(s), true); return;
    case StmtKind::AnnotateLayout: return;  // honoured by the layout plan (planBuffers)
    case StmtKind::Version: emitVersion(as<VersionStmt>(s), pending); return;
    case StmtKind::AsyncCommit: line("tlc::cp_async_commit();"); return;
    case StmtKind::AsyncWait:
      line("tlc::cp_async_wait<" + std::to_string(as<AsyncWaitStmt>(s)->pending) + ">();");
      barrier(pending);
      return;
    case StmtKind::Copy:
      if (as<CopyStmt>(s)->async) return emitAsyncCopy(as<CopyStmt>(s), pending);
      break;
    case StmtKind::Kernel:
      diags_.report(DiagKind::CudaUnsupported, s->loc, "a kernel cannot be launched inside another kernel");
      failed_ = true;
      return;
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      if (f->forKind == ForKind::Parallel) break;
      if (hopper_ && f == hopper_->loop) {
        if (hopper_->gemm) emitHopperConsumer(f, pending);
        else emitHopperLoop(f, pending);
        return;
      }
      std::vector<const ReduceStmt*> deferred = deferredReductions(f);
      for (auto* r : deferred) {
        emitDeferralStart(r);
        deferred_.insert(r);
      }
      emitBlockLoop(f, pending);
      for (auto* r : deferred) {
        deferred_.erase(r);
        LocationScope at(*this, r->loc);
        // Its combine may use the scratch (and then ends with a barrier).
        Accesses scratch = scratchAccesses(r);
        if (pending.conflictsWith(scratch)) barrier(pending);
        pendingAfter_.reset();
        emitRegisterReduce(r, ReducePart::AcrossThreads);
        if (pendingAfter_) pending = *pendingAfter_;
        else pending.merge(scratch);
        pendingAfter_.reset();
      }
      return;
    }
    default: break;
  }
  Accesses a = accessesOf(s);
  if (pending.conflictsWith(a)) barrier(pending);
  pendingAfter_.reset();
  emitBlockLeaf(s);
  if (pendingAfter_) pending = *pendingAfter_;
  else pending.merge(a);
  pendingAfter_.reset();
}

// A block-level serial or pipelined loop, in the form its plan takes.
void KernelEmitter::emitBlockLoop(const ForStmt* f, Accesses& pending) {
  if (f->forKind == ForKind::Pipelined && f->numStages >= 2) {
    PipelineSchedule sched;
    if (runsPipelined(f, &sched)) {
      emitPipelined(f, sched, pending);
      return;
    }
    if (!sched.unsupported.empty())
      diags_.report(DiagKind::CudaPipelineUnsupported, f->loc,
                    "this pipeline plan runs unpipelined on cuda: " + sched.unsupported);
  }
  Accesses bounds = accessesOf(std::make_shared<EvaluateStmt>(add(f->min, f->extent), f->loc));
  if (pending.conflictsWith(bounds)) barrier(pending);
  if (f->forKind == ForKind::Serial || f->forKind == ForKind::Pipelined)
    if (auto* prefetch = registerPrefetch(f, seqStmts(f->body))) {
      emitPrefetchedLoop(f, prefetch, pending);
      return;
    }
  Accesses body = accessesOf(f->body);
  // What the body touches of the accesses before the loop waits once,
  // before the loop, instead of at its first use in every iteration.
  if (pending.conflictsWith(body)) barrier(pending);
  Accesses inner = pending;
  if (jumpsOutOf(f->body)) {
    // A `continue` skips the end of the iteration: the next one orders
    // itself against everything the body does.
    inner.merge(loopCarried(f));
    emitSerialFor(f, [&] { emitBlock(f->body, inner); });
  } else {
    // Iterations are ordered by a barrier at the end of the body only where
    // what it leaves unordered meets what the next iteration does before its
    // first barrier.
    emitSerialFor(f, [&] {
      Accesses prefix = emitIteration(seqStmts(f->body), inner);
      if (inner.conflictsWith(nextIterationPrefix(prefix, loopCarried(f)))) barrier(inner);
    });
  }
  pending = inner;
  pending.merge(body);
}

// Emits the statements of a loop's body in order from `inner`, and returns
// the accesses of its prefix: what the body does before the first block
// barrier that every iteration runs (one of a leaf statement or a Parallel
// nest; a barrier inside an if or a nested loop may not run). A leaf that
// starts with a barrier (emitBlock's, where it meets what is pending) adds
// nothing; one whose barriers are inside it (a reduction across warps) adds
// all its accesses.
Accesses KernelEmitter::emitIteration(const std::vector<Stmt>& stmts, Accesses& inner) {
  Accesses prefix;
  bool inPrefix = true;
  // An in-place gemm's wgmmas stay in flight until a statement needs them
  // retired, or the iteration ends (cuda_wgmma.cpp); an enclosing body's
  // stay in flight through this loop, which does not touch them.
  std::optional<InFlightWgmma> outer = std::exchange(inFlight_, std::nullopt);
  for (const Stmt& c : stmts) {
    auto* loop = as<ForStmt>(c);
    const bool leaf = c->kind != StmtKind::If && c->kind != StmtKind::Let && c->kind != StmtKind::Seq &&
                      (!loop || loop->forKind == ForKind::Parallel);
    bool joins = false;
    if (!runsBesideWgmma(c, &joins)) retireWgmma(inner);
    Accesses a = accessesOf(c);
    const bool barrierFirst = leaf && inner.conflictsWith(a);
    int64_t barriers = barriersEmitted_;
    issuing_ = joins ? as<GemmStmt>(c) : nullptr;
    emitBlock(c, inner);
    if (issuing_ && inFlight_) inFlight_->reads.merge(a);
    issuing_ = nullptr;
    if (!inPrefix) continue;
    if (barrierFirst) {
      inPrefix = false;
      continue;
    }
    prefix.merge(a);
    inPrefix = !(leaf && barriers != barriersEmitted_);
  }
  retireWgmma(inner);
  inFlight_ = std::move(outer);
  return prefix;
}

// What an iteration's prefix `prefix` may meet of the previous iteration's
// unordered accesses: its writes count only to buffers whose writes the loop
// carries (`carried`, loopCarried: not the disjoint per-iteration regions of
// a global tensor).
Accesses KernelEmitter::nextIterationPrefix(Accesses prefix, const Accesses& carried) {
  for (auto it = prefix.writes.begin(); it != prefix.writes.end();)
    it = carried.writes.count(*it) ? std::next(it) : prefix.writes.erase(it);
  return prefix;
}

void KernelEmitter::emitBlockLeaf(const Stmt& s) {
  LocationScope at(*this, s->loc);
  switch (s->kind) {
    case StmtKind::For: emitParallelNest(as<ForStmt>(s)); return;
    case StmtKind::Store: {
      auto* st = as<StoreStmt>(s);
      std::string assign = access(st->buffer, st->indices) + " = " + expr(st->value) + ";";
      if (isRegister(st->buffer)) {
        line(assign);
      } else {
        open("if (tid == 0)");
        line(assign);
        close();
      }
      return;
    }
    case StmtKind::Evaluate: line(expr(as<EvaluateStmt>(s)->value) + ";"); return;
    case StmtKind::Break: line("break;"); return;
    case StmtKind::Continue: line("continue;"); return;
    case StmtKind::Copy: {
      auto* c = as<CopyStmt>(s);
      emitCopy(c, !isRegister(c->dst.buffer) || bufs_[c->dst.buffer.get()].fragment.has_value());
      return;
    }
    case StmtKind::Fill: {
      auto* f = as<FillStmt>(s);
      emitFill(f, !isRegister(f->dst.buffer) || bufs_[f->dst.buffer.get()].fragment.has_value());
      return;
    }
    case StmtKind::Reduce: {
      auto* r = as<ReduceStmt>(s);
      emitReduce(r, !isRegister(r->dst.buffer));
      return;
    }
    case StmtKind::Gemm: {
      auto* g = as<GemmStmt>(s);
      if (emitGemmWgmma(g) || emitGemmMma(g)) return;
      emitGemmScalar(g, !isRegister(g->c.buffer));
      return;
    }
    case StmtKind::Atomic:
      open("if (tid == 0)");
      emitThread(s);
      close();
      return;
    case StmtKind::Print: emitBlockPrint(as<PrintStmt>(s)); return;
    default: TLC_ICE(std::string("unexpected block-level statement ") + stmtKindName(s->kind));
  }
}

void KernelEmitter::emitThread(const Stmt& s) {
  LocationScope at(*this, s->loc);
  if (!s || failed_) return;
  if (vecNest_) {
    if (auto* l = as<LetStmt>(s)) ensureVectorLoads({l->value});
    else if (auto* i = as<IfStmt>(s); i && vecNest_->taken.count(i)) return emitThread(i->thenBody);
    else if (auto* i = as<IfStmt>(s)) ensureVectorLoads({i->cond});
    else if (auto* e = as<EvaluateStmt>(s)) ensureVectorLoads({e->value});
    else if (auto* st = as<StoreStmt>(s)) {
      std::vector<Expr> used = st->indices;
      used.push_back(st->value);
      ensureVectorLoads(used);
    } else if (auto* a = as<AtomicStmt>(s)) {
      std::vector<Expr> used = a->indices;
      used.push_back(a->value);
      ensureVectorLoads(used);
    }
  }
  switch (s->kind) {
    case StmtKind::Seq:
      for (auto& c : as<SeqStmt>(s)->stmts) emitThread(c);
      return;
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      if (isNonNegative(l->value)) markNonNegative(l->var);
      line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(l->value) + ";");
      emitThread(l->body);
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      open("if (" + expr(i->cond) + ")");
      emitThread(i->thenBody);
      if (i->elseBody) {
        close("} else {");
        ++indent_;
        emitThread(i->elseBody);
      }
      close();
      return;
    }
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      emitSerialFor(f, [&] { emitThread(f->body); });
      return;
    }
    case StmtKind::Alloc: emitAlloc(as<AllocStmt>(s), false); return;
    case StmtKind::Store: {
      auto* st = as<StoreStmt>(s);
      if (vecNest_)
        if (auto it = vecNest_->storeOf.find(st); it != vecNest_->storeOf.end()) {
          const VectorRun& run = vecNest_->stores[it->second];
          const std::string& lane = vecNest_->lane;
          line(run.name + "[" + lane + "] = " + expr(st->value) + ";");
          line(run.ok + " |= 1u << " + lane + ";");
          line(run.name + "_at = &" + access(st->buffer, st->indices) + " - " + lane + ";");
          return;
        }
      line(ownerGuard(st->buffer.get()) + access(st->buffer, st->indices) + " = " + expr(st->value) + ";");
      return;
    }
    case StmtKind::Evaluate: line(expr(as<EvaluateStmt>(s)->value) + ";"); return;
    case StmtKind::Break: line("break;"); return;
    case StmtKind::Continue: line("continue;"); return;
    case StmtKind::Atomic: {
      auto* a = as<AtomicStmt>(s);
      std::string fn = std::string("tlc::atomic_") + atomicKindName(a->atomicKind);
      std::string v = expr(a->value);
      if (a->value->dtype != a->buffer->dtype) v = cast(a->buffer->dtype, a->value->dtype, v);
      std::string update = fn + "<" + typeName(a->buffer->dtype) + ">(&" + access(a->buffer, a->indices) + ", " + v + ")";
      std::string guard = ownerGuard(a->buffer.get());
      if (!a->prev) {
        line(guard + update + ";");
        return;
      }
      if (!guard.empty()) {
        diags_.report(DiagKind::CudaUnsupported, s->loc,
                      "an atomic that returns its previous value in a loop whose iterations several threads run "
                      "together (a replicated fragment): no one previous value is every thread's");
        failed_ = true;
        return;
      }
      line(access(a->prev, a->prevIndices) + " = " + update + ";");
      return;
    }
    case StmtKind::Print: {
      auto* p = as<PrintStmt>(s);
      TLC_CHECK(p->value, "a print of a whole buffer inside a Parallel loop");
      // In a nest over a replicated vector every replica runs the iteration; one prints.
      if (!replicaOwner_.empty()) open("if (" + replicaOwner_ + ")");
      emitPrintLine(p, p->element, p->index, p->value);
      if (!replicaOwner_.empty()) close();
      return;
    }
    case StmtKind::Copy: emitCopy(as<CopyStmt>(s), false); return;
    case StmtKind::Fill: emitFill(as<FillStmt>(s), false); return;
    case StmtKind::Reduce: emitReduce(as<ReduceStmt>(s), false); return;
    case StmtKind::Gemm: emitGemmScalar(as<GemmStmt>(s), false); return;
    case StmtKind::AnnotateLayout: return;  // kernel-level only (the verifier keeps it out of loops)
    case StmtKind::Version:
    case StmtKind::AsyncCommit:
    case StmtKind::AsyncWait:  // block-level only (the verifier keeps them out of Parallel loops)
    case StmtKind::BarrierArrive:
    case StmtKind::BarrierWait:
    case StmtKind::WarpSpecialize:
      diags_.report(DiagKind::CudaUnsupported, s->loc,
                    std::string("a `") + stmtKindName(s->kind) + "` statement inside a Parallel loop");
      failed_ = true;
      return;
    case StmtKind::Kernel:
      diags_.report(DiagKind::CudaUnsupported, s->loc, "a kernel cannot be launched inside another kernel");
      failed_ = true;
      return;
  }
}

namespace {
class FragmentUses : public IRVisitor {
 public:
  std::unordered_set<const BufferNode*> bufs;
  void visitLoad(const Load* l) override {
    bufs.insert(l->buffer.get());
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    bufs.insert(s->buffer.get());
    IRVisitor::visitStore(s);
  }
};
}  // namespace

void KernelEmitter::emitParallelNest(const ForStmt* f) {
  if (auto it = tiles_.nests.find(f); it != tiles_.nests.end()) {
    emitRegisterNest(f, it->second);
    return;
  }
  Stmt body;
  auto nest = parallelNest(f, &body);
  // A nest over a register fragment iterates over the thread's registers.
  FragmentUses uses;
  uses.visit(body);
  for (auto* b : uses.bufs) {
    auto it = bufs_.find(b);
    if (it != bufs_.end() && it->second.fragment) {
      const BufferInfo& info = it->second;
      int64_t m, n;
      constInt(b->shape[0], &m);
      constInt(b->shape[1], &n);
      Var r = makeVar("r");
      markNonNegative(r);
      open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(r) + " = 0; " + varName(r) +
           " < " + std::to_string(info.elems) + "; ++" + varName(r) + ")");
      auto [i, j] = mmaAccumulatorIndex(m, n, info.warpsM, info.warpsN, threadIdx(), makeVarRef(r), info.mfma,
                                        info.colMajor, info.mmaVector);
      markNonNegative(nest[0]->var);
      markNonNegative(nest[1]->var);
      line("const " + typeName(nest[0]->var->dtype) + " " + varName(nest[0]->var) + " = " + expr(i) + ";");
      line("const " + typeName(nest[1]->var->dtype) + " " + varName(nest[1]->var) + " = " + expr(j) + ";");
      std::vector<const BufferNode*> bound;
      for (auto* o : uses.bufs) {
        auto oi = bufs_.find(o);
        if (oi != bufs_.end() && oi->second.fragment && oi->second.warpsM == info.warpsM &&
            oi->second.warpsN == info.warpsN && oi->second.mfma == info.mfma && oi->second.colMajor == info.colMajor &&
            oi->second.mmaVector == info.mmaVector && o->shape.size() == 2 && oi->second.fragment->inputShape() == info.fragment->inputShape()) {
          fragmentRegister_[o] = makeVarRef(r);
          bound.push_back(o);
        }
      }
      ++parallelDepth_;
      emitThread(body);
      --parallelDepth_;
      for (auto* o : bound) fragmentRegister_.erase(o);
      close();
      return;
    }
  }
  if (emitVectorNest(nest, body)) return;
  Expr total = makeInt(1);
  for (auto* l : nest) total = mul(total, l->extent);
  Var flat = openLoop(total, true, "it");
  defineNestVars(nest, nest.size(), makeVarRef(flat));
  ++parallelDepth_;
  emitThread(body);
  --parallelDepth_;
  close();
}

// Inside a nest over a replicated vector: the condition (and `if`) under
// which a write of memory that other threads see happens, in one replica.
std::string KernelEmitter::ownerGuard(const BufferNode* b) {
  if (replicaOwner_.empty()) return "";
  const BufferInfo& info = bufs_[b];
  if (info.tile || info.fragment || info.place == Placement::Register) return "";
  return "if (" + replicaOwner_ + ") ";
}

// Defines the variables of the first `count` loops of a nest from `flat`,
// their iteration in row-major order (the last of them varying fastest).
void KernelEmitter::defineNestVars(const std::vector<const ForStmt*>& nest, size_t count, Expr flat) {
  for (size_t d = count; d-- > 0;) {
    const ForStmt* l = nest[d];
    Expr local = d == 0 ? flat : floorMod(flat, l->extent);
    if (d > 0) flat = floorDiv(flat, l->extent);
    Expr value = add(l->min, local);
    if (value->dtype != l->var->dtype) value = makeCast(l->var->dtype, value);
    if (isNonNegative(l->min)) markNonNegative(l->var);
    line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(value) + ";");
  }
}

// ---------------------------------------------------------------------------

bool KernelEmitter::emit(std::string* source, int64_t* sharedBytes) {
  if (threads_ <= 0 || threads_ > 1024) {
    diags_.report(DiagKind::CudaUnsupported, kernel_.loc,
                  "a CUDA block has 1 to 1024 threads; this kernel asks for " + std::to_string(threads_));
    return false;
  }
  if (!planBuffers()) return false;
  if (options_.lineDirectives) setLineSources(&diags_.sources());
  std::string params;
  for (auto& a : args_) {
    if (!params.empty()) params += ", ";
    if (a.kind == KernelArg::Kind::Tensor) {
      const Param& p = func_.params[a.paramIndex];
      params += typeName(p.buffer->dtype) + "* __restrict__ " + bufs_[p.buffer.get()].name;
    } else {
      params += typeName(a.dtype) + " " + varName(a.var);
    }
  }
  for (auto& a : args_)
    if (a.kind == KernelArg::Kind::ShapeVar) markNonNegative(a.var);
  params += tensorMapParams();
  if (hopper_) chooseHopperOccupancy(&*hopper_, threads_, sharedBytes_, options_.maxSharedBytes, hopperTileRegisters(),
                          widestWgmmaRegisters());
  std::string bounds = hopper_ ? std::to_string(launchThreads()) + ", " + std::to_string(hopper_->blocksPerSM)
                               : std::to_string(threads_);
  int64_t blocks = streamingBlocksPerSM(true);
  if (int64_t without = streamingBlocksPerSM(false); without > blocks && hasRegisterPrefetch()) {
    blocks = without;
    registerPrefetch_ = false;
  }
  if (blocks) bounds += ", " + std::to_string(blocks);
  open("extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + name_ + "(" + params + ")");
  // sm_90a: every kernel of the module declares the same alignment (TMA tiles need 1024).
  line(std::string("extern __shared__ __align__(") + (options_.arch == "sm_90a" ? "1024" : "128") +
       ") unsigned char tlc_smem[];");
  line("const int tid = threadIdx.x;");
  const char* dims[] = {"x", "y", "z"};
  if (kernel_.blockVars.size() > 3) {
    diags_.report(DiagKind::CudaUnsupported, kernel_.loc, "a CUDA grid has at most 3 dimensions");
    return false;
  }
  for (auto& v : kernel_.blockVars) markNonNegative(v);
  if (persistent_) {
    // The logical grid, from the kernel's arguments: tlc_tiles tiles.
    std::string tiles = "1ull";
    for (size_t d = 0; d < kernel_.grid.size(); ++d) {
      line(std::string("const unsigned tlc_grid_") + dims[d] + " = (unsigned)(" + expr(kernel_.grid[d]) + ");");
      tiles += std::string(" * tlc_grid_") + dims[d];
    }
    line("const unsigned long long tlc_tiles = " + tiles + ";");
  } else {
    emitBlockIndices("");
  }
  if (hopper_) emitHopperSetup();
  Accesses pending;
  if (persistent_) openTileLoop();
  emitBlock(kernel_.body, pending);
  // The next tile's statements may write shared memory this one's still read.
  if (persistent_) {
    line(syncThreads());
    close();
  }
  close();
  if (failed_) return false;
  *source = out_.str();
  *sharedBytes = sharedBytes_;
  return true;
}

}  // namespace tlc::cuda
