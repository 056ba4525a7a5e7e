// Applies a statement rewrite to the body of every function of a module,
// keeping functions whose body did not change.
#pragma once

#include <memory>

#include "compiler/ir/functor.h"

namespace tlc::ir {

template <class Rewrite>
ir::Module rewriteBodies(const ir::Module& m, Rewrite&& rewrite) {
  ir::Module out;
  for (const ir::Func& f : m.funcs) {
    ir::Stmt body = rewrite(*f);
    if (body == f->body) {
      out.funcs.push_back(f);
    } else {
      auto nf = std::make_shared<ir::PrimFunc>(*f);
      nf->body = std::move(body);
      out.funcs.push_back(std::move(nf));
    }
  }
  return out;
}

// Runs a fresh IRMutator of type M over every body.
template <class M>
ir::Module mutateBodies(const ir::Module& m) {
  return rewriteBodies(m, [](const ir::PrimFunc& f) { return M().mutate(f.body); });
}

}  // namespace tlc::ir
