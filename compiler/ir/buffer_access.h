// A visitor base that reports every buffer access in a statement tree, with
// the operations' exact semantics: read(b) for loads, copy sources, gemm
// operands (and the accumulator unless the gemm clears it), reduce sources
// (and destinations unless the reduction clears them), atomics and the
// buffers printed whole; write(b)
// for stores, copy and fill destinations, gemm accumulators, reduce
// destinations and atomics. Subclasses override read/write (and may override
// visit* methods, calling the base, to keep extra state).
#pragma once

#include <set>

#include "compiler/ir/functor.h"

namespace tlc::ir {

class BufferAccessVisitor : public IRVisitor {
 protected:
  virtual void read(const Buffer&) {}
  virtual void write(const Buffer&) {}

  void visitLoad(const Load* n) override;
  void visitStore(const StoreStmt* n) override;
  void visitCopy(const CopyStmt* n) override;
  void visitFill(const FillStmt* n) override;
  void visitReduce(const ReduceStmt* n) override;
  void visitGemm(const GemmStmt* n) override;
  void visitAtomic(const AtomicStmt* n) override;
  void visitPrint(const PrintStmt* n) override;
};

// Every buffer a statement reads or writes, registers included, how many
// gemms it holds and whether it breaks or continues a loop.
class StatementAccesses : public BufferAccessVisitor {
 public:
  std::set<const BufferNode*> reads, writes;
  bool jumps = false;
  int gemms = 0;

  void visitGemm(const GemmStmt* n) override;
  void visitBreak(const BreakStmt* n) override;
  void visitContinue(const ContinueStmt* n) override;

 protected:
  void read(const Buffer& b) override;
  void write(const Buffer& b) override;
};

// The buffers read anywhere in `s` or `e` (null: none), as BufferAccessVisitor
// counts reads; collectBufferWrites (buffer_writes.h) gives the writes.
std::set<const BufferNode*> collectBufferReads(const Stmt& s);
std::set<const BufferNode*> collectBufferReads(const Expr& e);

// Whether `s` reads or writes buffer `b`.
bool accessesBuffer(const Stmt& s, const BufferNode* b);

}  // namespace tlc::ir
