// The buffers a piece of lowered CPU tile IR reads and writes, for the passes
// that move or fold statements (cpu-hoist-fast-paths, cpu-inline-producers).
//
// Reads and writes follow ir::BufferAccessVisitor. A load inside a cpu.*
// intrinsic call (cpu.address_of, handed to cpu.gemm or an atomic) gives
// away an address: its buffer counts as opaque, read and written in ways a
// pass does not see.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"

namespace tlc::cpu {

class AccessSets : public ir::BufferAccessVisitor {
 public:
  std::unordered_map<const ir::BufferNode*, int> reads, loads;  // counts
  std::unordered_set<const ir::BufferNode*> writes, opaque;
  bool prints = false, jumps = false;

  int readsOf(const ir::BufferNode* b) const;
  // Read other than by plain loads.
  bool readOpaquely(const ir::BufferNode* b) const;
  // Whether running one of two statements with these accesses before the
  // other could change what either computes.
  bool conflictsWith(const AccessSets& o) const;

 protected:
  void read(const ir::Buffer& b) override;
  void write(const ir::Buffer& b) override;
  void visitLoad(const ir::Load* n) override;
  void visitCall(const ir::Call* n) override;
  void visitPrint(const ir::PrintStmt* n) override;
  void visitBreak(const ir::BreakStmt* n) override;
  void visitContinue(const ir::ContinueStmt* n) override;

 private:
  int intrinsicDepth_ = 0;
};

template <class Node>
AccessSets accessSetsOf(const Node& n) {
  AccessSets a;
  a.visit(n);
  return a;
}

}  // namespace tlc::cpu
