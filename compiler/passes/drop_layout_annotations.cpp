#include "compiler/passes/drop_layout_annotations.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::passes {

using namespace ir;

namespace {

class DropAnnotations : public IRMutator {
 protected:
  // An empty sequence, which the enclosing sequence flattens away.
  Stmt mutateAnnotateLayout(const AnnotateLayoutStmt* node, const Stmt&) override { return makeSeq({}, node->loc); }
};

}  // namespace

Module dropLayoutAnnotations(const Module& m) { return mutateBodies<DropAnnotations>(m); }

}  // namespace tlc::passes
