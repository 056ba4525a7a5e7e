#include "compiler/ir/buffer_writes.h"

#include "compiler/ir/buffer_access.h"

namespace tlc::ir {
namespace {

class WriteScan : public BufferAccessVisitor {
 public:
  BufferWrites out;

 protected:
  void write(const Buffer& b) override { out.buffers.insert(b.get()); }
  void visitGemm(const GemmStmt* s) override {
    out.accumulates = true;
    BufferAccessVisitor::visitGemm(s);
  }
  void visitReduce(const ReduceStmt* s) override {
    out.accumulates = true;
    BufferAccessVisitor::visitReduce(s);
  }
  void visitAtomic(const AtomicStmt* s) override {
    out.accumulates = true;
    BufferAccessVisitor::visitAtomic(s);
  }
};

}  // namespace

BufferWrites collectBufferWrites(const Stmt& s) {
  WriteScan scan;
  scan.visit(s);
  return scan.out;
}

}  // namespace tlc::ir
