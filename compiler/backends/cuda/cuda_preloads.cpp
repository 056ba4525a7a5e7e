// Loads a pipelined iteration issues before its statements run: a scale or
// bias read from a global tensor that the kernel never writes, at an address
// that depends only on the loop variable and what the loop's body does not
// bind (`B_scale[bx, k]` in a block-scaled gemm), is loaded into a register
// at the top of the iteration. Its latency then passes while the gemm before
// its use runs, instead of after the gemm's wait (only loads after a gemm
// move; those before one are issued early already). Only loads the statements
// evaluate whenever they run are moved: outside ifs, the arms of selects and
// the right operands of `and` / `or`, and loops that may run no iteration;
// statements with a break or continue move nothing. The value read is the
// same: nothing writes the tensor.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/ir/buffer_writes.h"
#include "compiler/ir/equality.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// The indices in one form whether or not the load's statement was simplified
// before emission (a Parallel nest's body is, with its ranges: a preloaded
// `B_scale[(bx * 128) // 128, k]` is read there as `B_scale[bx, k]`).
std::vector<Expr> simplifiedIndices(const Load* l) {
  std::vector<Expr> idx;
  for (const Expr& e : l->indices) idx.push_back(passes::simplifyExpr(e));
  return idx;
}

bool samePlace(const Load* a, const Load* b) {
  return a->buffer == b->buffer && structurallyEqual(simplifiedIndices(a), simplifiedIndices(b));
}

constexpr size_t kMaxPreloads = 8;  // registers held across the iteration

class InvariantLoads : public IRVisitor {
 public:
  std::vector<const Load*> loads;
  InvariantLoads(const std::set<const BufferNode*>& written, const std::unordered_set<const VarNode*>& bound)
      : written_(written), bound_(bound) {}

  void visitLoad(const Load* l) override {
    if (!conditional_ && l->buffer->scope == MemScope::Global && !written_.count(l->buffer.get())) {
      UsesVars uses(bound_);
      for (const Expr& i : l->indices) uses.visit(i);
      if (!uses.found && !uses.loads) {
        bool known = false;
        for (const Load* p : loads) known |= samePlace(p, l);
        if (!known && loads.size() < kMaxPreloads) loads.push_back(l);
        return;
      }
    }
    IRVisitor::visitLoad(l);
  }
  void visitIf(const IfStmt* s) override {
    visit(s->cond);
    ++conditional_;
    visit(s->thenBody);
    if (s->elseBody) visit(s->elseBody);
    --conditional_;
  }
  void visitSelect(const Select* s) override {
    visit(s->cond);
    ++conditional_;
    visit(s->t);
    visit(s->f);
    --conditional_;
  }
  void visitBinary(const Binary* b) override {
    if (b->op != BinaryOp::And && b->op != BinaryOp::Or) return IRVisitor::visitBinary(b);
    visit(b->a);
    ++conditional_;
    visit(b->b);
    --conditional_;
  }
  void visitFor(const ForStmt* f) override {
    int64_t n = 0;
    bool runs = constInt(f->extent, &n) && n > 0;
    visit(f->min);
    visit(f->extent);
    conditional_ += !runs;
    visit(f->body);
    conditional_ -= !runs;
  }

 private:
  const std::set<const BufferNode*>& written_;
  const std::unordered_set<const VarNode*>& bound_;
  int conditional_ = 0;
};

}  // namespace

std::vector<const Load*> KernelEmitter::invariantLoads(const std::vector<Stmt>& stmts, bool afterGemm,
                                                      const std::vector<Stmt>& bindings) {
  std::set<const BufferNode*> written = collectBufferWrites(kernel_.body).buffers;
  BoundVars bound;
  for (const Stmt& s : stmts) bound.visit(s);
  for (const Stmt& s : bindings) bound.visit(s);
  struct Scan : IRVisitor {
    bool gemm = false, jumps = false;
    void visitGemm(const GemmStmt*) override { gemm = true; }
    void visitBreak(const BreakStmt*) override { jumps = true; }
    void visitContinue(const ContinueStmt*) override { jumps = true; }
  } scan;
  InvariantLoads found(written, bound.vars);
  for (const Stmt& s : stmts) {
    if (scan.gemm || !afterGemm) found.visit(s);
    scan.visit(s);
  }
  if (scan.jumps) return {};
  return found.loads;
}

void KernelEmitter::preloadInvariantLoads(const std::vector<Stmt>& stmts, bool afterGemm) {
  for (const Load* l : invariantLoads(stmts, afterGemm)) {
    Preload p{l->buffer.get(), simplifiedIndices(l), fresh("preload")};
    line("const " + typeName(l->dtype) + " " + p.name + " = " + access(l->buffer, p.indices) + ";");
    preloaded_.push_back(std::move(p));
  }
}

void KernelEmitter::assignPreload(const Load* l, const std::string& name) {
  line(name + " = " + access(l->buffer, simplifiedIndices(l)) + ";");
}

void KernelEmitter::usePreload(const Load* l, const std::string& name) {
  preloaded_.push_back(Preload{l->buffer.get(), simplifiedIndices(l), name});
}

const std::string* KernelEmitter::preloadedName(const Load* l) const {
  for (const Preload& p : preloaded_)
    if (p.buffer == l->buffer.get() && structurallyEqual(p.indices, simplifiedIndices(l))) return &p.name;
  return nullptr;
}

}  // namespace tlc::cuda
