#include "compiler/backends/cpu/block_invariant.h"

#include <unordered_map>

#include "compiler/ir/functor.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// What a statement reads and writes, and whether it does anything else.
struct Access : IRVisitor {
  std::unordered_set<const BufferNode*> read, written;
  bool other = false;  // intrinsics, prints, jumps
  void visitLoad(const Load* l) override {
    read.insert(l->buffer.get());
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    written.insert(s->buffer.get());
    IRVisitor::visitStore(s);
  }
  void visitEvaluate(const EvaluateStmt* s) override {
    Access operands;
    operands.visit(s->value);
    written.insert(operands.read.begin(), operands.read.end());
    other = true;
    IRVisitor::visitEvaluate(s);
  }
  void visitPrint(const PrintStmt* p) override {
    other = true;
    IRVisitor::visitPrint(p);
  }
  void visitBreak(const BreakStmt*) override { other = true; }
  void visitContinue(const ContinueStmt*) override { other = true; }
};

struct VarUses : IRVisitor {
  const std::vector<Var>* vars = nullptr;
  bool found = false;
  void visitVarRef(const VarRef* r) override {
    for (const Var& v : *vars) found |= r->var == v;
  }
};

}  // namespace

std::unordered_set<const StmtNode*> blockInvariantStatements(const KernelStmt& k) {
  std::vector<Stmt> stmts = seqStmts(k.body);
  std::vector<Access> access(stmts.size());
  std::unordered_map<const BufferNode*, int> writers;
  for (size_t i = 0; i < stmts.size(); ++i) {
    access[i].visit(stmts[i]);
    for (const BufferNode* b : access[i].written) ++writers[b];
  }
  std::unordered_set<const StmtNode*> out;
  std::unordered_set<const BufferNode*> readBefore;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const Access& a = access[i];
    bool hoist = stmts[i]->kind != StmtKind::Alloc && !a.other && !a.written.empty();
    for (const BufferNode* b : a.written)
      hoist = hoist && b->scope != MemScope::Global && writers[b] == 1 && !readBefore.count(b);
    for (const BufferNode* b : a.read) hoist = hoist && b->scope == MemScope::Global && !writers.count(b);
    if (hoist) {
      VarUses uses;
      uses.vars = &k.blockVars;
      uses.visit(stmts[i]);
      hoist = !uses.found;
    }
    if (hoist) out.insert(stmts[i].get());
    readBefore.insert(a.read.begin(), a.read.end());
  }
  return out;
}

}  // namespace tlc::cpu
