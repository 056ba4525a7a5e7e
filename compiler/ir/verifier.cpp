// The tile-IR verifier (verifier.h): functions, scopes and statements
// (verifier_walk.h; expressions and regions are in verifier_exprs.cpp).
#include "compiler/ir/verifier.h"

#include "compiler/ir/limits.h"
#include "compiler/ir/verifier_walk.h"

namespace tlc::ir {

void Verifier::func(const PrimFunc& f) {
  frames_.emplace_back();
  for (const Var& v : f.shapeVars) {
    TLC_CHECK(v != nullptr, "null shape variable in " + f.name);
    bindVar(v);
  }
  for (const Param& p : f.params) {
    if (p.buffer) {
      for (const Expr& d : p.buffer->shape) dimension(d, p.buffer->name);
      if (p.buffer->scope != MemScope::Global)
        report(DiagKind::IrInvalidScope, p.loc,
               "tensor parameter `" + p.buffer->name + "` must be in global memory, not " +
                   memScopeName(p.buffer->scope));
      bindBuffer(p.buffer);
    } else {
      TLC_CHECK(p.scalar != nullptr, "parameter " + p.name + " has neither a buffer nor a scalar");
      bindVar(p.scalar);
    }
  }
  TLC_CHECK(f.body != nullptr, "function " + f.name + " has no body");
  stmt(f.body);
  popFrame();
}

void Verifier::bindVar(const Var& v) {
  ++vars_[v.get()];
  frames_.back().vars.push_back(v.get());
}

void Verifier::bindBuffer(const Buffer& b) {
  ++buffers_[b.get()];
  frames_.back().buffers.push_back(b.get());
}

void Verifier::popFrame() {
  for (const VarNode* v : frames_.back().vars) --vars_[v];
  for (const BufferNode* b : frames_.back().buffers) --buffers_[b];
  frames_.pop_back();
}

void Verifier::useBuffer(const Buffer& b, SourceLoc loc, bool access) {
  TLC_CHECK(b != nullptr, "null buffer");
  auto it = buffers_.find(b.get());
  if ((it == buffers_.end() || it->second == 0) && reportedUnbound_.insert(b.get()).second)
    report(DiagKind::IrUnboundName, loc.known() ? loc : b->loc,
           "buffer `" + b->name + "` is used where it is not declared (outside its parameter list or allocation scope)");
  if (access && b->scope == MemScope::Barrier && reportedUnbound_.insert(b.get()).second)
    report(DiagKind::IrInvalidAsync, loc.known() ? loc : b->loc,
           "`" + b->name +
               "` holds barriers, whose elements are not values; only barrier_arrive, barrier_wait and "
               "copy_async(..., barrier=...) use it");
  auto v = versions_.find(b.get());
  if (access && v != versions_.end() && !selected_[b.get()] && reportedUnbound_.insert(b.get()).second)
    report(DiagKind::IrInvalidAsync, loc.known() ? loc : b->loc,
           "`" + b->name + "` has " + std::to_string(v->second) + " versions; access it inside a `version(" + b->name +
               ") = ...` block that says which");
}

void Verifier::asyncStatement(SourceLoc loc, const char* what) {
  if (kernelDepth_ == 0)
    report(DiagKind::IrInvalidAsync, loc, std::string(what) + " is outside a kernel");
  for (ForKind k : loopKinds_)
    if (k == ForKind::Parallel || k == ForKind::Vectorized)
      return report(DiagKind::IrInvalidAsync, loc,
                    std::string(what) + " is inside a " + forKindName(k) + " loop; it is a statement of the whole block");
}

void Verifier::barrierOperand(const BarrierRef& b, SourceLoc loc) {
  TLC_CHECK(b.buffer != nullptr && b.index != nullptr, "null barrier operand");
  useBuffer(b.buffer, loc, false);
  integer(b.index, "a barrier index");
  if (b.buffer->scope != MemScope::Barrier)
    return report(DiagKind::IrInvalidAsync, loc,
                  "`" + b.buffer->name + "` is a " + memScopeName(b.buffer->scope) +
                      " buffer, not barriers; allocate barriers as `alloc NAME: barrier uint64[N] arrivals(A)`");
  auto i = constValue(b.index);
  auto n = b.buffer->shape.size() == 1 ? constValue(b.buffer->shape[0]) : std::nullopt;
  if (i && n && (*i < 0 || *i >= *n))
    report(DiagKind::IrInvalidAsync, loc,
           "barrier " + std::to_string(*i) + " of `" + b.buffer->name + "`, which has " + std::to_string(*n));
}

// alloc NAME: barrier uint64[N] arrivals(A): N and A positive constants.
void Verifier::barrierAlloc(const AllocStmt* a) {
  const BufferNode& b = *a->buffer;
  if (b.scope != MemScope::Barrier) {
    if (a->arrivals != 0)
      report(DiagKind::IrInvalidAsync, a->loc,
             "`" + b.name + "` is a " + memScopeName(b.scope) + " buffer; only barriers take `arrivals(N)`");
    return;
  }
  std::optional<int64_t> n = b.shape.size() == 1 ? constValue(b.shape[0]) : std::nullopt;
  if (b.dtype != DType::UInt64 || !n || *n < 1)
    report(DiagKind::IrInvalidAsync, a->loc,
           "barriers `" + b.name + "` are allocated as `barrier uint64[N]`, N a positive constant");
  if (a->arrivals < 1)
    report(DiagKind::IrInvalidAsync, a->loc,
           "barriers `" + b.name + "` need the arrivals that complete a phase: `arrivals(N)`, N at least 1");
  asyncStatement(a->loc, "a barrier allocation");
}

void Verifier::warpSpecialize(const WarpSpecializeStmt* w, const Stmt& s) {
  asyncStatement(s->loc, "warp_specialize");
  if (specializeDepth_ > 0) report(DiagKind::IrInvalidAsync, s->loc, "warp_specialize inside another one's role");
  if (w->producerThreads < 32 || w->producerThreads % 32 != 0 || w->producerThreads > 1024)
    report(DiagKind::IrInvalidAsync, s->loc,
           "warp_specialize needs whole warps of producer threads (32 to 1024, a multiple of 32), not " +
               std::to_string(w->producerThreads));
  TLC_CHECK(w->producer && w->consumer, "warp_specialize without a role");
  ++specializeDepth_;
  std::vector<ForKind> outerLoops = std::move(loopKinds_);  // no jump leaves a role
  loopKinds_.clear();
  body(w->producer);
  body(w->consumer);
  loopKinds_ = std::move(outerLoops);
  --specializeDepth_;
}

void Verifier::version(const VersionStmt* v) {
  integer(v->version, "a version");
  for (const Buffer& b : v->buffers) {
    TLC_CHECK(b != nullptr, "null versioned buffer");
    ++selected_[b.get()];
    useBuffer(b, v->loc, false);
    if (!versions_.count(b.get()))
      report(DiagKind::IrInvalidAsync, v->loc,
             "`" + b->name + "` has one version; only buffers allocated with `versions(N)` take a version");
  }
  TLC_CHECK(v->body != nullptr, "version without a body");
  body(v->body);
  for (const Buffer& b : v->buffers) --selected_[b.get()];
}

void Verifier::body(const Stmt& s) {
  frames_.emplace_back();
  stmt(s);
  popFrame();
}

void Verifier::stmt(const Stmt& s) {
  TLC_CHECK(s != nullptr, "null statement");
  if (stmtDepth_ >= kMaxStmtDepth)
    return tooDeep(s->loc, "statements are nested deeper than " + std::to_string(kMaxStmtDepth) +
                               " levels (each scalar binding holds the rest of its block)");
  ++stmtDepth_;
  stmtNode(s);
  --stmtDepth_;
}

void Verifier::stmtNode(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Seq: {
      frames_.emplace_back();
      for (const Stmt& c : as<SeqStmt>(s)->stmts) stmt(c);
      popFrame();
      return;
    }
    case StmtKind::Kernel: {
      auto* k = as<KernelStmt>(s);
      if (kernelDepth_ > 0) report(DiagKind::IrInvalidKernel, s->loc, "a kernel cannot be launched inside another kernel");
      if (k->grid.empty() || k->grid.size() > 3)
        report(DiagKind::IrInvalidKernel, s->loc,
               "a kernel grid has 1 to 3 extents, not " + std::to_string(k->grid.size()));
      if (k->blockVars.size() != k->grid.size())
        report(DiagKind::IrInvalidKernel, s->loc,
               "a kernel needs one block variable per grid extent (" + std::to_string(k->grid.size()) + "), not " +
                   std::to_string(k->blockVars.size()));
      if (k->threads <= 0)
        report(DiagKind::IrInvalidKernel, s->loc, "a kernel needs a positive thread count, not " + std::to_string(k->threads));
      if (k->swizzle < 0 || (k->swizzle > 0 && k->grid.size() < 2))
        report(DiagKind::IrInvalidKernel, s->loc,
               "swizzle(" + std::to_string(k->swizzle) + ") needs a positive panel size and a 2-D or 3-D grid");
      for (size_t i = 0; i < k->grid.size(); ++i) {
        integer(k->grid[i], "a grid extent");
        if (i < k->blockVars.size() && k->blockVars[i] && k->grid[i]->dtype != k->blockVars[i]->dtype)
          sameDType(k->grid[i], k->blockVars[i]->dtype, s->loc, "grid extent " + std::to_string(i));
      }
      frames_.emplace_back();
      for (const Var& v : k->blockVars) {
        TLC_CHECK(v != nullptr, "null block variable");
        bindVar(v);
      }
      ++kernelDepth_;
      std::vector<ForKind> outerLoops = std::move(loopKinds_);
      loopKinds_.clear();
      body(k->body);
      loopKinds_ = std::move(outerLoops);
      --kernelDepth_;
      popFrame();
      return;
    }
    case StmtKind::Alloc: {
      const Buffer& b = as<AllocStmt>(s)->buffer;
      TLC_CHECK(b != nullptr, "null allocated buffer");
      if (kernelDepth_ == 0)
        report(DiagKind::IrAllocOutsideKernel, s->loc,
               "buffer `" + b->name + "` is allocated outside a kernel; move the allocation into the kernel body");
      if (b->scope == MemScope::Global)
        report(DiagKind::IrInvalidScope, s->loc,
               "buffer `" + b->name + "` cannot be allocated in global memory; global tensors are parameters");
      for (const Expr& d : b->shape) dimension(d, b->name);
      bindBuffer(b);
      barrierAlloc(as<AllocStmt>(s));
      if (int64_t n = as<AllocStmt>(s)->versions; n != 1) {
        if (n < 1 || b->scope != MemScope::Shared)
          report(DiagKind::IrInvalidAsync, s->loc,
                 "`" + b->name + "` cannot have " + std::to_string(n) +
                     " versions; shared buffers may have several (a positive number)");
        else
          versions_[b.get()] = n;
      }
      return;
    }
    case StmtKind::For: {
      auto* f = as<ForStmt>(s);
      TLC_CHECK(f->var != nullptr, "null loop variable");
      if (!isInteger(f->var->dtype))
        report(DiagKind::IrOperandType, s->loc,
               "loop variable `" + f->var->name + "` must be an integer, not " + dt(f->var->dtype));
      expr(f->min);
      expr(f->extent);
      sameDType(f->min, f->var->dtype, s->loc, "the start of the loop over `" + f->var->name + "`");
      sameDType(f->extent, f->var->dtype, s->loc, "the extent of the loop over `" + f->var->name + "`");
      if (f->numStages < 0)
        report(DiagKind::IrInvalidAttribute, s->loc, "num_stages must not be negative");
      if (!f->warpSpecialize && f->forKind != ForKind::Pipelined)
        report(DiagKind::IrInvalidAttribute, s->loc, "warp_specialize is an attribute of pipelined loops");
      if (!f->order.empty() && !f->stage.empty() && f->order.size() != f->stage.size())
        report(DiagKind::IrInvalidAttribute, s->loc,
               "pipeline `order` and `stage` must list the same statements (" + std::to_string(f->order.size()) +
                   " vs " + std::to_string(f->stage.size()) + " entries)");
      // -1: TileLang's mark of a producer statement, until pipeline-planning maps the plan.
      for (int64_t st : f->stage)
        if (st < -1 || (f->numStages > 0 && st >= f->numStages))
          report(DiagKind::IrInvalidAttribute, s->loc,
                 "pipeline stage " + std::to_string(st) + " is outside [0, num_stages) (or -1)");
      if (!f->group.empty() && (f->order.size() != f->group.size() || f->stage.size() != f->group.size()))
        report(DiagKind::IrInvalidAttribute, s->loc,
               "a pipeline `group` list needs `order` and `stage` with one entry per group (" +
                   std::to_string(f->group.size()) + ")");
      frames_.emplace_back();
      bindVar(f->var);
      ++loopDepth_;
      loopKinds_.push_back(f->forKind);
      body(f->body);
      loopKinds_.pop_back();
      --loopDepth_;
      popFrame();
      return;
    }
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      expr(i->cond);
      if (i->cond->dtype != DType::Bool)
        report(DiagKind::IrOperandType, i->cond->loc, "an `if` condition must be bool, not " + dt(i->cond->dtype));
      TLC_CHECK(i->thenBody != nullptr, "if without a then branch");
      body(i->thenBody);
      if (i->elseBody) body(i->elseBody);
      return;
    }
    case StmtKind::Store: {
      auto* st = as<StoreStmt>(s);
      indices(st->buffer, st->indices, s->loc);
      expr(st->value);
      sameDType(st->value, st->buffer->dtype, s->loc, "the value stored into `" + st->buffer->name + "`");
      return;
    }
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      TLC_CHECK(l->var != nullptr, "null let variable");
      expr(l->value);
      if (l->value->dtype != l->var->dtype)
        report(DiagKind::IrDTypeMismatch, s->loc,
               "`" + l->var->name + "` is declared " + dt(l->var->dtype) + " but bound to a " + dt(l->value->dtype) +
                   " value");
      frames_.emplace_back();
      bindVar(l->var);
      TLC_CHECK(l->body != nullptr, "let without a body");
      body(l->body);
      popFrame();
      return;
    }
    case StmtKind::Evaluate: expr(as<EvaluateStmt>(s)->value); return;
    case StmtKind::Copy: {
      auto* c = as<CopyStmt>(s);
      region(c->src, "source");
      region(c->dst, "destination");
      if (c->usedWhen) {
        expr(c->usedWhen);
        if (c->usedWhen->dtype != DType::Bool)
          report(DiagKind::IrOperandType, c->usedWhen->loc.known() ? c->usedWhen->loc : s->loc,
                 "`used_when` is a condition (bool), not " + dt(c->usedWhen->dtype));
      }
      if (c->barrier) {
        barrierOperand(c->barrier, s->loc);
        if (!c->async) report(DiagKind::IrInvalidAsync, s->loc, "only copy_async completes on a barrier");
      }
      if (c->async) {
        asyncStatement(s->loc, "copy_async");
        if (c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared)
          report(DiagKind::IrInvalidAsync, s->loc,
                 std::string("copy_async copies global memory into shared memory, not ") +
                     memScopeName(c->src.buffer->scope) + " into " + memScopeName(c->dst.buffer->scope));
      }
      auto a = constExtents(c->src), b = constExtents(c->dst);
      if (a && b) {
        int64_t na = 1, nb = 1;
        bool overflow = false;
        for (int64_t v : *a) overflow |= __builtin_mul_overflow(na, v, &na);
        for (int64_t v : *b) overflow |= __builtin_mul_overflow(nb, v, &nb);
        if (!overflow && na != nb)
          report(DiagKind::IrShapeMismatch, s->loc,
                 "copy from a " + shapeText(*a) + " region into a " + shapeText(*b) +
                     " region: the element counts differ");
      }
      return;
    }
    case StmtKind::Gemm: {
      auto* g = as<GemmStmt>(s);
      region(g->a, "A");
      region(g->b, "B");
      region(g->c, "C");
      gemmDTypes(g);
      auto a = matrix(g->a, "A"), b = matrix(g->b, "B"), c = matrix(g->c, "C");
      if (a && b && c) {
        int64_t m = g->transA ? a->second : a->first, k = g->transA ? a->first : a->second;
        int64_t kb = g->transB ? b->second : b->first, n = g->transB ? b->first : b->second;
        if (k != kb || c->first != m || c->second != n)
          report(DiagKind::IrShapeMismatch, s->loc,
                 "gemm shapes do not agree: op(A) is " + std::to_string(m) + "x" + std::to_string(k) +
                     ", op(B) is " + std::to_string(kb) + "x" + std::to_string(n) + ", C is " +
                     std::to_string(c->first) + "x" + std::to_string(c->second));
      }
      return;
    }
    case StmtKind::Fill: {
      auto* f = as<FillStmt>(s);
      region(f->dst, "destination");
      expr(f->value);
      sameDType(f->value, f->dst.buffer->dtype, s->loc, "the fill value for `" + f->dst.buffer->name + "`");
      return;
    }
    case StmtKind::Reduce: {
      auto* r = as<ReduceStmt>(s);
      region(r->src, "source");
      region(r->dst, "destination");
      if (r->dim < 0 || static_cast<size_t>(r->dim) >= r->src.ranges.size()) {
        report(DiagKind::IrInvalidAttribute, s->loc,
               "reduce dim " + std::to_string(r->dim) + " is outside the source's " +
                   std::to_string(r->src.ranges.size()) + " dimensions");
        return;
      }
      auto a = constExtents(r->src), b = constExtents(r->dst);
      if (a && b) {
        std::vector<int64_t> kept = *a;
        kept.erase(kept.begin() + r->dim);
        if (dropUnit(kept) != dropUnit(*b))
          report(DiagKind::IrShapeMismatch, s->loc,
                 "reducing a " + shapeText(*a) + " region over dim " + std::to_string(r->dim) + " gives " +
                     shapeText(kept) + ", but the destination is " + shapeText(*b));
      }
      return;
    }
    case StmtKind::Atomic: {
      auto* a = as<AtomicStmt>(s);
      indices(a->buffer, a->indices, s->loc);
      DType t = a->buffer->dtype;
      bool supported = (isInteger(t) && dtypeBits(t) >= 32) || (isFloat(t) && dtypeBits(t) >= 16);
      if (!supported)
        report(DiagKind::IrOperandType, s->loc,
               std::string("atomic_") + atomicKindName(a->atomicKind) + " works on 32- and 64-bit integers and on float16, "
               "bfloat16, float32 and float64, not on " + dt(t) + " (`" + a->buffer->name + "`)");
      expr(a->value);
      sameDType(a->value, a->buffer->dtype, s->loc, "the atomic operand for `" + a->buffer->name + "`");
      if (a->prev) {
        indices(a->prev, a->prevIndices, s->loc);
        if (a->prev->scope != MemScope::Local && a->prev->scope != MemScope::Var)
          report(DiagKind::IrOperandType, s->loc,
                 "the previous value of an atomic goes to a thread's own buffer (local or var), not to " +
                     std::string(memScopeName(a->prev->scope)) + " `" + a->prev->name + "`");
        if (a->prev->dtype != t)
          report(DiagKind::IrOperandType, s->loc,
                 "the previous value of `" + a->buffer->name + "` is " + dt(t) + ", but `" + a->prev->name +
                     "` holds " + dt(a->prev->dtype));
      }
      return;
    }
    case StmtKind::AnnotateLayout: annotation(as<AnnotateLayoutStmt>(s)); return;
    case StmtKind::Print: print(as<PrintStmt>(s)); return;
    case StmtKind::Version: version(as<VersionStmt>(s)); return;
    case StmtKind::AsyncCommit: asyncStatement(s->loc, "commit_group"); return;
    case StmtKind::BarrierArrive: {
      auto* a = as<BarrierArriveStmt>(s);
      asyncStatement(s->loc, "barrier_arrive");
      barrierOperand(a->barrier, s->loc);
      if (a->expectBytes) integer(a->expectBytes, "the bytes a barrier expects");
      return;
    }
    case StmtKind::BarrierWait: {
      auto* w = as<BarrierWaitStmt>(s);
      asyncStatement(s->loc, "barrier_wait");
      barrierOperand(w->barrier, s->loc);
      integer(w->parity, "a barrier phase's parity");
      return;
    }
    case StmtKind::WarpSpecialize: warpSpecialize(as<WarpSpecializeStmt>(s), s); return;
    case StmtKind::AsyncWait:
      asyncStatement(s->loc, "wait_group");
      if (as<AsyncWaitStmt>(s)->pending < 0)
        report(DiagKind::IrInvalidAsync, s->loc, "wait_group leaves a number of groups pending, not a negative one");
      return;
    case StmtKind::Break:
    case StmtKind::Continue: {
      const char* what = s->kind == StmtKind::Break ? "`break`" : "`continue`";
      if (loopKinds_.empty())
        report(DiagKind::IrMisplacedJump, s->loc, std::string(what) + " is outside every loop of its kernel");
      else if (loopKinds_.back() != ForKind::Serial)
        report(DiagKind::IrMisplacedJump, s->loc,
               std::string(what) + " is in a " + forKindName(loopKinds_.back()) +
                   " loop; only serial loops can be left or continued early");
      return;
    }
  }
}

bool verifyFunc(const PrimFunc& f, DiagnosticEngine& diags, const VerifyOptions& options) {
  int before = diags.errorCount();
  Verifier v(diags, options);
  v.func(f);
  return diags.errorCount() == before;
}

bool verifyModule(const Module& m, DiagnosticEngine& diags, const VerifyOptions& options) {
  bool ok = true;
  std::unordered_map<std::string, SourceLoc> names;
  for (const Func& f : m.funcs) {
    TLC_CHECK(f != nullptr, "null function in module");
    auto [it, fresh] = names.emplace(f->name, f->loc);
    if (!fresh) {
      diags.report(DiagKind::IrRedefinition, f->loc, "function `@" + f->name + "` is defined twice; rename one of them")
          .note(it->second, "the first definition is here");
      ok = false;
    }
    ok &= verifyFunc(*f, diags, options);
  }
  return ok;
}

}  // namespace tlc::ir
