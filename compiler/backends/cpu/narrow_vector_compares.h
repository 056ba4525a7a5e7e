// An LLVM IR clean-up after the optimizer: integer vector compares of 64-bit
// lanes whose operands are 32-bit values widened (a loop index compared with
// an int32 element: InstCombine widens the compare to the 64-bit index
// before the vectorizer splats it) compare the 32-bit values instead.
#pragma once

#include <llvm/IR/PassManager.h>

namespace tlc::cpu {

struct NarrowVectorCompares : llvm::PassInfoMixin<NarrowVectorCompares> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

}  // namespace tlc::cpu
