#include "compiler/passes/cpu_lower_atomics.h"

#include "compiler/ir/functor.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

class AtomicLowering : public IRMutator {
 protected:
  Stmt mutateAtomic(const AtomicStmt* node, const Stmt&) override {
    const char* callee = cpu_intrinsics::kAtomicAdd;
    if (node->atomicKind == AtomicKind::Max) callee = cpu_intrinsics::kAtomicMax;
    if (node->atomicKind == AtomicKind::Min) callee = cpu_intrinsics::kAtomicMin;
    DType t = node->buffer->dtype;
    Expr value = mutate(node->value);
    if (value->dtype != t) value = makeCast(t, value, node->loc);
    std::vector<Expr> idx;
    for (const Expr& i : node->indices) idx.push_back(mutate(i));
    Expr address = makeCall(cpu_intrinsics::kAddressOf, {makeLoad(node->buffer, idx, node->loc)}, DType::UInt64, node->loc);
    Expr call = makeCall(callee, {address, value}, t, node->loc);
    if (!node->prev) return std::make_shared<const EvaluateStmt>(call, node->loc);
    std::vector<Expr> prevIdx;
    for (const Expr& i : node->prevIndices) prevIdx.push_back(mutate(i));
    return std::make_shared<const StoreStmt>(node->prev, prevIdx, call, node->loc);
  }
};

}  // namespace

Module lowerAtomics(const Module& m) { return mutateBodies<AtomicLowering>(m); }

}  // namespace tlc::cpu
