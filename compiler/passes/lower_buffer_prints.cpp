#include "compiler/passes/lower_buffer_prints.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::passes {

using namespace ir;

namespace {

class LowerBufferPrints : public IRMutator {
 protected:
  Stmt mutatePrint(const PrintStmt* p, const Stmt& self) override {
    if (!p->buffer) return self;
    const Buffer& b = p->buffer;
    std::vector<Var> vars;
    std::vector<Expr> idx;
    for (size_t d = 0; d < b->shape.size(); ++d) {
      vars.push_back(makeVar("i" + std::to_string(d), b->shape[d]->dtype, p->loc));
      idx.push_back(makeVarRef(vars.back(), p->loc));
    }
    auto element = std::make_shared<PrintStmt>(makeLoad(b, idx, p->loc), nullptr, p->message, p->at, p->loc);
    element->element = b->name;
    element->index = idx;
    Stmt body = element;
    for (size_t d = b->shape.size(); d-- > 0;)
      body = std::make_shared<const ForStmt>(vars[d], makeInt(0, b->shape[d]->dtype, p->loc), b->shape[d],
                                             ForKind::Serial, body, p->loc);
    return body;
  }
};

}  // namespace

Module lowerBufferPrints(const Module& m) { return mutateBodies<LowerBufferPrints>(m); }

}  // namespace tlc::passes
