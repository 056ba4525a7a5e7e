#include "compiler/ir/buffer_writes.h"

#include "compiler/ir/functor.h"

namespace tlc::ir {
namespace {

class WriteScan : public IRVisitor {
 public:
  BufferWrites out;

  void visitStore(const StoreStmt* s) override {
    out.buffers.insert(s->buffer.get());
    IRVisitor::visitStore(s);
  }
  void visitCopy(const CopyStmt* s) override {
    out.buffers.insert(s->dst.buffer.get());
    IRVisitor::visitCopy(s);
  }
  void visitFill(const FillStmt* s) override {
    out.buffers.insert(s->dst.buffer.get());
    IRVisitor::visitFill(s);
  }
  void visitGemm(const GemmStmt* s) override {
    out.buffers.insert(s->c.buffer.get());
    out.accumulates = true;
    IRVisitor::visitGemm(s);
  }
  void visitReduce(const ReduceStmt* s) override {
    out.buffers.insert(s->dst.buffer.get());
    out.accumulates = true;
    IRVisitor::visitReduce(s);
  }
  void visitAtomic(const AtomicStmt* s) override {
    out.buffers.insert(s->buffer.get());
    out.accumulates = true;
    IRVisitor::visitAtomic(s);
  }
};

}  // namespace

BufferWrites collectBufferWrites(const Stmt& s) {
  WriteScan scan;
  scan.visit(s);
  return scan.out;
}

}  // namespace tlc::ir
