#include "compiler/passes/cpu_map_loops.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

class ContainsParallel : public IRVisitor {
 public:
  bool found = false;
  void visitFor(const ForStmt* node) override {
    if (node->forKind == ForKind::Parallel) found = true;
    IRVisitor::visitFor(node);
  }
};

class LoopMapping : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    ForKind kind = node->forKind;
    if (kind == ForKind::Pipelined) kind = ForKind::Serial;
    if (kind == ForKind::Parallel) {
      ContainsParallel inner;
      inner.visit(node->body);
      kind = inner.found ? ForKind::Serial : ForKind::Vectorized;
    }
    if (kind == node->forKind && body == node->body) return self;
    auto f = std::make_shared<ForStmt>(node->var, node->min, node->extent, kind, body, node->loc);
    return f;
  }
};

}  // namespace

Module mapLoopsForCpu(const Module& m) { return mutateBodies<LoopMapping>(m); }

}  // namespace tlc::cpu
