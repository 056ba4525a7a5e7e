#include "compiler/interp/program.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tlc::interp {
namespace {

using namespace tlc::ir;

class Compiler {
 public:
  Compiler(Program& p, DiagnosticEngine& d) : prog_(p), diags_(d) {}

  bool run(const PrimFunc& f) {
    prog_.func = &f;
    for (const Var& v : f.shapeVars) {
      prog_.shapeVarSlots.push_back(varSlot(v.get()));
      inScope_.insert(v.get());
    }
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      if (p.buffer) {
        int s = bufferSlot(p.buffer.get());
        prog_.buffers[s].paramIndex = static_cast<int>(i);
        prog_.paramSlots.push_back(s);
        liveBuffers_.insert(p.buffer.get());
      } else if (p.scalar) {
        prog_.paramSlots.push_back(varSlot(p.scalar.get()));
        inScope_.insert(p.scalar.get());
      } else {
        error(p.loc, "parameter `" + p.name + "` is neither a tensor nor a scalar");
        prog_.paramSlots.push_back(-1);
      }
    }
    // Parameter shapes may use shape variables and scalar parameters.
    for (const Param& p : f.params) {
      if (!p.buffer) continue;
      BufferSlot& bs = prog_.buffers[bufferSlot(p.buffer.get())];
      bs.shape.clear();
      for (const Expr& e : p.buffer->shape) bs.shape.push_back(expr(e));
    }
    if (!f.body) {
      error(f.loc, "function `" + f.name + "` has no body");
      return false;
    }
    prog_.body = stmt(f.body);
    return ok_;
  }

 private:
  Program& prog_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
  std::unordered_map<const VarNode*, int> varSlots_;
  std::unordered_map<const BufferNode*, int> bufferSlots_;
  std::unordered_set<const VarNode*> inScope_;
  std::unordered_set<const BufferNode*> liveBuffers_;
  int kernelDepth_ = 0;

  Diagnostic& error(SourceLoc loc, std::string msg, DiagKind kind = DiagKind::InterpInvalidProgram) {
    ok_ = false;
    return diags_.report(kind, loc, std::move(msg));
  }

  int varSlot(const VarNode* v) {
    auto [it, fresh] = varSlots_.emplace(v, static_cast<int>(prog_.vars.size()));
    if (fresh) prog_.vars.push_back({v});
    return it->second;
  }
  int bufferSlot(const BufferNode* b) {
    auto [it, fresh] = bufferSlots_.emplace(b, static_cast<int>(prog_.buffers.size()));
    if (fresh) prog_.buffers.push_back({b, -1, {}});
    return it->second;
  }

  int useBuffer(const Buffer& b, SourceLoc loc) {
    if (!b) {
      error(loc, "missing buffer");
      return -1;
    }
    if (!liveBuffers_.count(b.get())) {
      error(loc.known() ? loc : b->loc, "buffer `" + b->name + "` is used outside the scope of its allocation")
          .note(b->loc, "`" + b->name + "` is declared here");
    }
    return bufferSlot(b.get());
  }

  CExpr* newExpr(const Expr& e) {
    prog_.exprs.push_back(CExpr{e->kind, e->dtype, 0, -1, {}, {}, e.get()});
    return &prog_.exprs.back();
  }

  const CExpr* expr(const Expr& e) {
    if (!e) {
      error({}, "missing expression");
      prog_.exprs.push_back(CExpr{ExprKind::IntImm, DType::Int32, 0, -1, intValue(0), {}, nullptr});
      return &prog_.exprs.back();
    }
    CExpr* c = newExpr(e);
    switch (e->kind) {
      case ExprKind::IntImm:
        c->imm = isFloat(e->dtype) ? floatValue(static_cast<double>(static_cast<const IntImm*>(e.get())->value))
                                   : intValue(wrapToIntDType(static_cast<const IntImm*>(e.get())->value, e->dtype));
        break;
      case ExprKind::FloatImm: {
        double v = static_cast<const FloatImm*>(e.get())->value;
        c->imm = isFloat(e->dtype) ? floatValue(roundFloat(v, e->dtype)) : intValue(floatToIntDType(v, e->dtype));
        break;
      }
      case ExprKind::VarRef: {
        const Var& v = static_cast<const VarRef*>(e.get())->var;
        if (!inScope_.count(v.get()))
          error(e->loc.known() ? e->loc : v->loc, "variable `" + v->name + "` is used outside its scope");
        c->slot = varSlot(v.get());
        break;
      }
      case ExprKind::Binary: {
        auto* b = static_cast<const Binary*>(e.get());
        c->op = static_cast<int>(b->op);
        c->kids = {expr(b->a), expr(b->b)};
        if (b->op == BinaryOp::Div && b->a && !isFloat(b->a->dtype))
          error(e->loc, "true division `/` of " + std::string(dtypeName(b->a->dtype)) +
                            " values; integer division is `//`");
        break;
      }
      case ExprKind::Unary: {
        auto* u = static_cast<const Unary*>(e.get());
        c->op = static_cast<int>(u->op);
        c->kids = {expr(u->a)};
        break;
      }
      case ExprKind::Cast:
        c->kids = {expr(static_cast<const Cast*>(e.get())->value)};
        break;
      case ExprKind::Select: {
        auto* s = static_cast<const Select*>(e.get());
        c->kids = {expr(s->cond), expr(s->t), expr(s->f)};
        break;
      }
      case ExprKind::Call: {
        auto* call = static_cast<const Call*>(e.get());
        for (const Expr& a : call->args) c->kids.push_back(expr(a));
        auto sig = findInterpBuiltin(call->callee);
        if (!sig) {
          error(e->loc, "`" + call->callee + "` is not a builtin the interpreter can evaluate",
                DiagKind::InterpUnsupported);
        } else if (sig->arity != static_cast<int>(call->args.size())) {
          error(e->loc, "`" + call->callee + "` takes " + std::to_string(sig->arity) + " argument(s), not " +
                            std::to_string(call->args.size()));
        } else {
          c->op = static_cast<int>(sig->id);
        }
        break;
      }
      case ExprKind::Load: {
        auto* l = static_cast<const Load*>(e.get());
        c->slot = useBuffer(l->buffer, e->loc);
        checkRank(l->buffer, l->indices.size(), e->loc);
        for (const Expr& i : l->indices) c->kids.push_back(expr(i));
        break;
      }
    }
    return c;
  }

  void checkRank(const Buffer& b, size_t n, SourceLoc loc) {
    if (b && b->shape.size() != n)
      error(loc, "`" + b->name + "` has " + std::to_string(b->shape.size()) + " dimension(s) but is indexed with " +
                     std::to_string(n));
  }

  // A barrier operand: its buffer's slot and its index, first of `c.exprs`.
  void barrier(CStmt& c, const BarrierRef& b, SourceLoc loc) {
    c.slot = useBuffer(b.buffer, loc);
    if (b.buffer && b.buffer->scope != MemScope::Barrier) error(loc, "`" + b.buffer->name + "` is not a barrier buffer");
    c.exprs.push_back(expr(b.index));
  }

  CRegion region(const Region& r) {
    CRegion c{useBuffer(r.buffer, r.loc), {}, r.loc};
    if (r.buffer && r.ranges.size() != r.buffer->shape.size())
      error(r.loc, "a region of `" + r.buffer->name + "` needs one range per dimension (" +
                       std::to_string(r.buffer->shape.size()) + "), not " + std::to_string(r.ranges.size()));
    for (const Range& rg : r.ranges) c.ranges.push_back({expr(rg.min), expr(rg.extent)});
    return c;
  }

  CStmt* newStmt(const Stmt& s) {
    prog_.stmts.push_back(CStmt{s->kind, s.get(), {}, {}, {}, -1, {}});
    return &prog_.stmts.back();
  }

  void bindVar(const Var& v, SourceLoc loc) {
    if (!v) {
      error(loc, "missing variable");
      return;
    }
    inScope_.insert(v.get());
  }

  // A statement that is the whole body of a For/Let/If/Kernel: an Alloc
  // there is visible to nothing after it.
  const CStmt* body(const Stmt& s) {
    const CStmt* c = stmt(s);
    if (auto* a = as<AllocStmt>(s)) liveBuffers_.erase(a->buffer.get());
    return c;
  }

  const CStmt* stmt(const Stmt& s) {
    if (!s) {
      prog_.stmts.push_back(CStmt{StmtKind::Seq, nullptr, {}, {}, {}, -1, {}});
      return &prog_.stmts.back();
    }
    CStmt* c = newStmt(s);
    switch (s->kind) {
      case StmtKind::Seq: {
        // Allocs inside the sequence stay visible to its later statements only.
        std::vector<const BufferNode*> allocated;
        for (const Stmt& child : static_cast<const SeqStmt*>(s.get())->stmts) {
          c->body.push_back(stmt(child));
          if (auto* a = as<AllocStmt>(child)) allocated.push_back(a->buffer.get());
        }
        for (const BufferNode* b : allocated) liveBuffers_.erase(b);
        break;
      }
      case StmtKind::Kernel: {
        auto* k = static_cast<const KernelStmt*>(s.get());
        if (kernelDepth_ > 0) error(s->loc, "a kernel launch inside another kernel");
        if (k->grid.empty() || k->grid.size() > 3 || k->grid.size() != k->blockVars.size())
          error(s->loc, "a kernel needs 1 to 3 grid extents, one block variable each");
        for (const Expr& g : k->grid) c->exprs.push_back(expr(g));
        for (const Var& v : k->blockVars) {
          bindVar(v, s->loc);
          if (v) c->vars.push_back(varSlot(v.get()));
        }
        ++kernelDepth_;
        c->body.push_back(body(k->body));
        --kernelDepth_;
        for (const Var& v : k->blockVars)
          if (v) inScope_.erase(v.get());
        break;
      }
      case StmtKind::Alloc: {
        auto* a = static_cast<const AllocStmt*>(s.get());
        if (!a->buffer) {
          error(s->loc, "allocation of a missing buffer");
          break;
        }
        c->slot = bufferSlot(a->buffer.get());
        BufferSlot& bs = prog_.buffers[c->slot];
        if (bs.paramIndex >= 0) error(s->loc, "allocation of parameter `" + a->buffer->name + "`");
        std::vector<const CExpr*> shape;
        for (const Expr& e : a->buffer->shape) shape.push_back(expr(e));
        prog_.buffers[c->slot].shape = std::move(shape);
        prog_.buffers[c->slot].versions = std::max<int64_t>(a->versions, 1);
        prog_.buffers[c->slot].arrivals = a->arrivals;
        liveBuffers_.insert(a->buffer.get());
        break;
      }
      case StmtKind::For: {
        auto* f = static_cast<const ForStmt*>(s.get());
        c->exprs = {expr(f->min), expr(f->extent)};
        bindVar(f->var, s->loc);
        if (f->var) c->vars.push_back(varSlot(f->var.get()));
        c->body.push_back(body(f->body));
        if (f->var) inScope_.erase(f->var.get());
        break;
      }
      case StmtKind::If: {
        auto* i = static_cast<const IfStmt*>(s.get());
        c->exprs = {expr(i->cond)};
        c->body.push_back(body(i->thenBody));
        c->body.push_back(i->elseBody ? body(i->elseBody) : nullptr);
        break;
      }
      case StmtKind::Store: {
        auto* st = static_cast<const StoreStmt*>(s.get());
        c->slot = useBuffer(st->buffer, s->loc);
        checkRank(st->buffer, st->indices.size(), s->loc);
        for (const Expr& i : st->indices) c->exprs.push_back(expr(i));
        c->exprs.push_back(expr(st->value));
        break;
      }
      case StmtKind::Let: {
        auto* l = static_cast<const LetStmt*>(s.get());
        c->exprs = {expr(l->value)};
        bindVar(l->var, s->loc);
        if (l->var) c->vars.push_back(varSlot(l->var.get()));
        c->body.push_back(body(l->body));
        if (l->var) inScope_.erase(l->var.get());
        break;
      }
      case StmtKind::Evaluate:
        c->exprs = {expr(static_cast<const EvaluateStmt*>(s.get())->value)};
        break;
      case StmtKind::Break:
      case StmtKind::Continue: break;
      case StmtKind::Copy: {
        auto* cp = static_cast<const CopyStmt*>(s.get());
        c->regions = {region(cp->src), region(cp->dst)};
        if (cp->barrier) barrier(*c, cp->barrier, s->loc);
        break;
      }
      case StmtKind::Gemm: {
        auto* g = static_cast<const GemmStmt*>(s.get());
        c->regions = {region(g->a), region(g->b), region(g->c)};
        break;
      }
      case StmtKind::Fill: {
        auto* f = static_cast<const FillStmt*>(s.get());
        c->regions = {region(f->dst)};
        c->exprs = {expr(f->value)};
        break;
      }
      case StmtKind::Reduce: {
        auto* r = static_cast<const ReduceStmt*>(s.get());
        c->regions = {region(r->src), region(r->dst)};
        if (r->dim < 0 || static_cast<size_t>(r->dim) >= r->src.ranges.size())
          error(s->loc, "reduction dimension " + std::to_string(r->dim) + " is not a dimension of the source region");
        break;
      }
      case StmtKind::Atomic: {
        auto* a = static_cast<const AtomicStmt*>(s.get());
        c->slot = useBuffer(a->buffer, s->loc);
        checkRank(a->buffer, a->indices.size(), s->loc);
        for (const Expr& i : a->indices) c->exprs.push_back(expr(i));
        c->exprs.push_back(expr(a->value));
        if (a->prev) {
          c->vars.push_back(useBuffer(a->prev, s->loc));
          checkRank(a->prev, a->prevIndices.size(), s->loc);
          for (const Expr& i : a->prevIndices) c->exprs.push_back(expr(i));
        }
        break;
      }
      case StmtKind::Print: {
        auto* p = static_cast<const PrintStmt*>(s.get());
        if (p->buffer) c->slot = useBuffer(p->buffer, s->loc);
        if (p->value) c->exprs.push_back(expr(p->value));
        for (const PrintTag& t : p->iteration) c->exprs.push_back(expr(t.value));
        for (const Expr& i : p->index) c->exprs.push_back(expr(i));
        break;
      }
      case StmtKind::AnnotateLayout:
        // Layouts place elements in memory; they change no value.
        useBuffer(static_cast<const AnnotateLayoutStmt*>(s.get())->buffer, s->loc);
        break;
      case StmtKind::Version: {
        auto* v = static_cast<const VersionStmt*>(s.get());
        c->exprs = {expr(v->version)};
        for (const Buffer& b : v->buffers) c->vars.push_back(useBuffer(b, s->loc));
        c->body.push_back(body(v->body));
        break;
      }
      case StmtKind::AsyncCommit:
      case StmtKind::AsyncWait: break;
      case StmtKind::BarrierArrive: {
        auto* a = static_cast<const BarrierArriveStmt*>(s.get());
        barrier(*c, a->barrier, s->loc);
        if (a->expectBytes) c->exprs.push_back(expr(a->expectBytes));
        break;
      }
      case StmtKind::BarrierWait: {
        auto* w = static_cast<const BarrierWaitStmt*>(s.get());
        barrier(*c, w->barrier, s->loc);
        c->exprs.push_back(expr(w->parity));
        break;
      }
      case StmtKind::WarpSpecialize: {
        auto* w = static_cast<const WarpSpecializeStmt*>(s.get());
        c->body = {body(w->producer), body(w->consumer)};
        break;
      }
    }
    return c;
  }
};

}  // namespace

std::optional<Program> compileProgram(const ir::PrimFunc& func, DiagnosticEngine& diags) {
  Program p;
  Compiler c(p, diags);
  if (!c.run(func)) return std::nullopt;
  return p;
}

}  // namespace tlc::interp
