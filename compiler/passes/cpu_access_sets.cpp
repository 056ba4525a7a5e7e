#include "compiler/passes/cpu_access_sets.h"

#include "compiler/passes/cpu_intrinsics.h"

namespace tlc::cpu {

using namespace ir;

int AccessSets::readsOf(const BufferNode* b) const {
  auto it = reads.find(b);
  return it == reads.end() ? 0 : it->second;
}

bool AccessSets::readOpaquely(const BufferNode* b) const {
  auto it = loads.find(b);
  return opaque.count(b) || readsOf(b) != (it == loads.end() ? 0 : it->second);
}

bool AccessSets::conflictsWith(const AccessSets& o) const {
  if (prints || jumps || o.prints || o.jumps) return true;
  for (const BufferNode* b : writes)
    if (o.writes.count(b) || o.reads.count(b)) return true;
  for (const BufferNode* b : o.writes)
    if (reads.count(b)) return true;
  return false;
}

void AccessSets::read(const Buffer& b) { ++reads[b.get()]; }
void AccessSets::write(const Buffer& b) { writes.insert(b.get()); }

void AccessSets::visitLoad(const Load* n) {
  if (intrinsicDepth_ > 0) {
    opaque.insert(n->buffer.get());
    writes.insert(n->buffer.get());
  } else {
    ++loads[n->buffer.get()];
  }
  BufferAccessVisitor::visitLoad(n);
}

void AccessSets::visitCall(const Call* n) {
  int intrinsic = cpu_intrinsics::takesAddresses(n->callee) ? 1 : 0;
  intrinsicDepth_ += intrinsic;
  BufferAccessVisitor::visitCall(n);
  intrinsicDepth_ -= intrinsic;
}

void AccessSets::visitPrint(const PrintStmt* n) {
  prints = true;
  BufferAccessVisitor::visitPrint(n);
}

void AccessSets::visitBreak(const BreakStmt* n) {
  jumps = true;
  BufferAccessVisitor::visitBreak(n);
}

void AccessSets::visitContinue(const ContinueStmt* n) {
  jumps = true;
  BufferAccessVisitor::visitContinue(n);
}

}  // namespace tlc::cpu
