// One walk over a kernel body that the CUDA backend's planning starts from:
// its allocations (block level or inside Parallel loops), its block-level
// gemms and Pipelined loops, and the buffers written inside Parallel loops.
#pragma once

#include <unordered_set>
#include <vector>

#include "compiler/ir/buffer_access.h"

namespace tlc::cuda {

class KernelScan : public ir::BufferAccessVisitor {
 public:
  // Parallel-loop nesting; a caller that sets it to 1 before visiting counts every write.
  int depth = 0;
  std::vector<const ir::AllocStmt*> blockAllocs, threadAllocs;
  std::unordered_set<const ir::BufferNode*> writtenInParallel;
  std::vector<const ir::GemmStmt*> gemms;
  std::vector<const ir::ForStmt*> pipelined;

  void visitFor(const ir::ForStmt* f) override {
    if (f->forKind == ir::ForKind::Pipelined && depth == 0) pipelined.push_back(f);
    bool par = f->forKind == ir::ForKind::Parallel;
    depth += par;
    ir::BufferAccessVisitor::visitFor(f);
    depth -= par;
  }
  void visitAlloc(const ir::AllocStmt* a) override { (depth ? threadAllocs : blockAllocs).push_back(a); }
  void visitGemm(const ir::GemmStmt* g) override {
    if (depth == 0) gemms.push_back(g);
    ir::BufferAccessVisitor::visitGemm(g);
  }

 protected:
  void write(const ir::Buffer& b) override {
    if (depth > 0) writtenInParallel.insert(b.get());
  }
};

}  // namespace tlc::cuda
