#include "compiler/ir/loop_jumps.h"

#include "compiler/ir/functor.h"

namespace tlc::ir {

namespace {

class JumpFinder : public IRVisitor {
 public:
  bool found = false;
  using IRVisitor::visit;
  void visitFor(const ForStmt*) override {}  // jumps in there are that loop's
  void visitKernel(const KernelStmt*) override {}
  void visitBreak(const BreakStmt*) override { found = true; }
  void visitContinue(const ContinueStmt*) override { found = true; }
};

}  // namespace

bool jumpsOutOf(const Stmt& body) {
  if (!body) return false;
  JumpFinder f;
  f.visit(body);
  return f.found;
}

}  // namespace tlc::ir
