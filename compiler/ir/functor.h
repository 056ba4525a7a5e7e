// Traversal of the tile IR.
//
// IRVisitor walks every expression and statement, children first-to-last;
// override a visit function to look at one kind and call the base to keep
// descending. IRMutator rebuilds the tree bottom-up and returns the very same
// node when no child changed, so unchanged subtrees stay shared.
// Both dispatch on the kinds listed in node_kinds.def.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);
  void visitRegion(const Region& r);

#define EXPR(Name) virtual void visit##Name(const Name* node);
#include "compiler/ir/node_kinds.def"
  virtual void visitSeq(const SeqStmt* node);
  virtual void visitKernel(const KernelStmt* node);
  virtual void visitAlloc(const AllocStmt* node);
  virtual void visitFor(const ForStmt* node);
  virtual void visitIf(const IfStmt* node);
  virtual void visitStore(const StoreStmt* node);
  virtual void visitLet(const LetStmt* node);
  virtual void visitEvaluate(const EvaluateStmt* node);
  virtual void visitCopy(const CopyStmt* node);
  virtual void visitGemm(const GemmStmt* node);
  virtual void visitFill(const FillStmt* node);
  virtual void visitReduce(const ReduceStmt* node);
  virtual void visitAtomic(const AtomicStmt* node);
  virtual void visitAnnotateLayout(const AnnotateLayoutStmt* node);
  virtual void visitBreak(const BreakStmt* node);
  virtual void visitContinue(const ContinueStmt* node);
  virtual void visitPrint(const PrintStmt* node);
  virtual void visitVersion(const VersionStmt* node);
  virtual void visitAsyncCommit(const AsyncCommitStmt* node);
  virtual void visitAsyncWait(const AsyncWaitStmt* node);
  virtual void visitBarrierArrive(const BarrierArriveStmt* node);
  virtual void visitBarrierWait(const BarrierWaitStmt* node);
  virtual void visitWarpSpecialize(const WarpSpecializeStmt* node);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);
  Region mutateRegion(const Region& r);
  // Returns true and fills `out` if any element changed.
  bool mutateExprs(const std::vector<Expr>& in, std::vector<Expr>& out);

 protected:
  // Each takes the node and the shared pointer that owns it (to return unchanged).
#define EXPR(Name) virtual Expr mutate##Name(const Name* node, const Expr& self);
#include "compiler/ir/node_kinds.def"
  virtual Stmt mutateSeq(const SeqStmt* node, const Stmt& self);
  virtual Stmt mutateKernel(const KernelStmt* node, const Stmt& self);
  virtual Stmt mutateAlloc(const AllocStmt* node, const Stmt& self);
  virtual Stmt mutateFor(const ForStmt* node, const Stmt& self);
  virtual Stmt mutateIf(const IfStmt* node, const Stmt& self);
  virtual Stmt mutateStore(const StoreStmt* node, const Stmt& self);
  virtual Stmt mutateLet(const LetStmt* node, const Stmt& self);
  virtual Stmt mutateEvaluate(const EvaluateStmt* node, const Stmt& self);
  virtual Stmt mutateCopy(const CopyStmt* node, const Stmt& self);
  virtual Stmt mutateGemm(const GemmStmt* node, const Stmt& self);
  virtual Stmt mutateFill(const FillStmt* node, const Stmt& self);
  virtual Stmt mutateReduce(const ReduceStmt* node, const Stmt& self);
  virtual Stmt mutateAtomic(const AtomicStmt* node, const Stmt& self);
  virtual Stmt mutateAnnotateLayout(const AnnotateLayoutStmt* node, const Stmt& self);
  virtual Stmt mutateBreak(const BreakStmt* node, const Stmt& self);
  virtual Stmt mutateContinue(const ContinueStmt* node, const Stmt& self);
  virtual Stmt mutatePrint(const PrintStmt* node, const Stmt& self);
  virtual Stmt mutateVersion(const VersionStmt* node, const Stmt& self);
  virtual Stmt mutateAsyncCommit(const AsyncCommitStmt* node, const Stmt& self);
  virtual Stmt mutateAsyncWait(const AsyncWaitStmt* node, const Stmt& self);
  virtual Stmt mutateBarrierArrive(const BarrierArriveStmt* node, const Stmt& self);
  virtual Stmt mutateBarrierWait(const BarrierWaitStmt* node, const Stmt& self);
  virtual Stmt mutateWarpSpecialize(const WarpSpecializeStmt* node, const Stmt& self);
  // A barrier operand with its index mutated (the same buffer).
  BarrierRef mutateBarrier(const BarrierRef& b);
};

}  // namespace tlc::ir
