#include "compiler/ir/buffer_access.h"

namespace tlc::ir {

void BufferAccessVisitor::visitLoad(const Load* n) {
  read(n->buffer);
  IRVisitor::visitLoad(n);
}

void BufferAccessVisitor::visitStore(const StoreStmt* n) {
  write(n->buffer);
  IRVisitor::visitStore(n);
}

void BufferAccessVisitor::visitCopy(const CopyStmt* n) {
  read(n->src.buffer);
  write(n->dst.buffer);
  IRVisitor::visitCopy(n);
}

void BufferAccessVisitor::visitFill(const FillStmt* n) {
  write(n->dst.buffer);
  IRVisitor::visitFill(n);
}

void BufferAccessVisitor::visitReduce(const ReduceStmt* n) {
  read(n->src.buffer);
  if (!n->clear) read(n->dst.buffer);
  write(n->dst.buffer);
  IRVisitor::visitReduce(n);
}

void BufferAccessVisitor::visitGemm(const GemmStmt* n) {
  read(n->a.buffer);
  read(n->b.buffer);
  if (!n->clearAccum) read(n->c.buffer);
  write(n->c.buffer);
  IRVisitor::visitGemm(n);
}

void BufferAccessVisitor::visitAtomic(const AtomicStmt* n) {
  read(n->buffer);
  write(n->buffer);
  if (n->prev) write(n->prev);
  IRVisitor::visitAtomic(n);
}

void BufferAccessVisitor::visitPrint(const PrintStmt* n) {
  if (n->buffer) read(n->buffer);
  IRVisitor::visitPrint(n);
}

void StatementAccesses::visitGemm(const GemmStmt* n) {
  ++gemms;
  BufferAccessVisitor::visitGemm(n);
}
void StatementAccesses::visitBreak(const BreakStmt*) { jumps = true; }
void StatementAccesses::visitContinue(const ContinueStmt*) { jumps = true; }
void StatementAccesses::read(const Buffer& b) { reads.insert(b.get()); }
void StatementAccesses::write(const Buffer& b) { writes.insert(b.get()); }

namespace {
class ReadScan : public BufferAccessVisitor {
 public:
  std::set<const BufferNode*> reads;

 protected:
  void read(const Buffer& b) override { reads.insert(b.get()); }
};

template <class Node>
std::set<const BufferNode*> readsOf(const Node& node) {
  ReadScan scan;
  if (node) scan.visit(node);
  return scan.reads;
}
}  // namespace

std::set<const BufferNode*> collectBufferReads(const Stmt& s) { return readsOf(s); }
std::set<const BufferNode*> collectBufferReads(const Expr& e) { return readsOf(e); }

bool accessesBuffer(const Stmt& s, const BufferNode* b) {
  struct Scan : BufferAccessVisitor {
    const BufferNode* target;
    bool found = false;
    void read(const Buffer& x) override { found |= x.get() == target; }
    void write(const Buffer& x) override { found |= x.get() == target; }
  } scan;
  scan.target = b;
  scan.visit(s);
  return scan.found;
}

}  // namespace tlc::ir
