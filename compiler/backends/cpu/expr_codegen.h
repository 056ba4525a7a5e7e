// Expressions of the lowered tile IR -> LLVM values, within one function.
//
// Holds the function's environment (variables and buffer base pointers in
// scope) and the access groups of the enclosing vectorized loops, which every
// memory access made inside them joins. Loads in the arms of a select, or in
// the right operand of and/or, are only executed when chosen, so guarded
// reads never touch memory they must not.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <unordered_map>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

class ExprEmitter {
 public:
  ExprEmitter(llvm::Module& m, llvm::Function* fn);

  llvm::Value* emitExpr(const ir::Expr& e);
  // Pointer to buf[indices] (row-major, 64-bit index arithmetic). With
  // inBounds false the address may lie outside the buffer (prefetches).
  llvm::Value* emitAddress(const ir::Buffer& buf, const std::vector<ir::Expr>& indices, bool inBounds = true);

 protected:
  void markParallelAccess(llvm::Instruction* access);

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::Function* fn_;
  llvm::IRBuilder<> b_;
  std::unordered_map<const ir::VarNode*, llvm::Value*> vars_;
  std::unordered_map<const ir::BufferNode*, llvm::Value*> bufs_;
  std::vector<llvm::MDNode*> accessGroups_;

 private:
  llvm::Value* emitBinary(const ir::Binary* e);
  llvm::Value* emitCall(const ir::Call* e);
  llvm::Value* emitSelect(const ir::Select* e);
  llvm::Value* emitShortCircuit(const ir::Binary* e);
  llvm::Value* floorDivMod(llvm::Value* a, llvm::Value* b, DType t, bool wantMod);
  llvm::Value* unaryMath(const char* intrinsicOrLibm, bool isIntrinsic, llvm::Value* x);
};

}  // namespace tlc::cpu
