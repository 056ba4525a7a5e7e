// Expressions of the lowered tile IR -> LLVM values, within one function.
//
// Holds the function's environment (variables and buffer base pointers in
// scope) and the access groups of the enclosing vectorized loops, which every
// memory access made inside them joins. Loads in the arms of a select, or in
// the right operand of and/or, are only executed when chosen, so guarded
// reads never touch memory they must not.
//
// With bounds checks on (kernel_failures.cpp), every access tests its
// indices against the buffer's shape first; one outside records the failure
// in the call's tlc_cpu_failure record and branches to the function's
// failure exit.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <unordered_map>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc {
class SourceManager;
}

namespace tlc::cpu {

// What an ExprEmitter needs to check accesses and report failures.
struct FailureReporting {
  bool checkBounds = false;
  const SourceManager* sources = nullptr;  // file names of the sites (null: none)
  std::string funcName;                    // the PrimFunc, named in reports
};

class ExprEmitter {
 public:
  ExprEmitter(llvm::Module& m, llvm::Function* fn);

  llvm::Value* emitExpr(const ir::Expr& e);
  // Pointer to buf[indices] (row-major, 64-bit index arithmetic). With
  // inBounds false the address may lie outside the buffer (prefetches).
  llvm::Value* emitAddress(const ir::Buffer& buf, const std::vector<ir::Expr>& indices, bool inBounds = true);
  // The address of an access (TLC_CPU_ACCESS_*) at `loc`: emitAddress, after
  // a bounds check when checks are on.
  llvm::Value* accessAddress(const ir::Buffer& buf, const std::vector<ir::Expr>& indices, int access, SourceLoc loc);

 protected:
  void markParallelAccess(llvm::Instruction* access);
  // The call's failure record: allocated and cleared in the entry block of an
  // exported function, or a pointer another function was given.
  void createFailureRecord();
  // Records a memory failure when `heap` is null, then goes to the failure exit.
  void checkLocalAllocation(llvm::Value* heap, int64_t bytes);
  // while (cond && no failure yet): the value to branch on in a block loop.
  llvm::Value* andNoFailure(llvm::Value* cond);
  // In the exported function's exit path: the record becomes the thread's last failure.
  void endFailureRecord();
  // A printf call writing the line of an element or value print (print_codegen.cpp).
  void emitPrint(const ir::PrintStmt* p);
  // The pointer to a private NUL-terminated copy of `text`.
  llvm::Constant* constantString(const std::string& text);

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::Function* fn_;
  llvm::IRBuilder<> b_;
  std::unordered_map<const ir::VarNode*, llvm::Value*> vars_;
  std::unordered_map<const ir::BufferNode*, llvm::Value*> bufs_;
  std::vector<llvm::MDNode*> accessGroups_;
  FailureReporting reporting_;
  llvm::Value* failure_ = nullptr;           // the tlc_cpu_failure record; null when the function has none
  llvm::BasicBlock* failureExit_ = nullptr;  // where a failing access goes
  // In block functions: the kernel's block variables, for reports.
  std::vector<const ir::VarNode*> blockVars_;

 private:
  llvm::Value* emitBinary(const ir::Binary* e);
  llvm::Value* emitCall(const ir::Call* e);
  llvm::Value* emitBitsCall(const ir::Call* e);
  llvm::Value* emitSelect(const ir::Select* e);
  llvm::Value* emitShortCircuit(const ir::Binary* e);
  llvm::Value* floorDivMod(llvm::Value* a, llvm::Value* b, DType t, bool wantMod);
  llvm::Value* unaryMath(const char* intrinsicOrLibm, bool isIntrinsic, llvm::Value* x);
  llvm::Constant* failureSite(const ir::Buffer& buf, int access, SourceLoc loc);
  llvm::Value* entryArray(llvm::Type* elem, size_t n, const char* name);
  std::unordered_map<std::string, llvm::Constant*> strings_;
};

}  // namespace tlc::cpu
