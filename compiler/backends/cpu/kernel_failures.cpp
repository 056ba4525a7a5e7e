// ExprEmitter's bounds checks and failure records (see expr_codegen.h and
// runtime/cpu/tlc_cpu_runtime.h).
//
// A checked access computes each index once, compares it (unsigned, so a
// negative index fails too) with its dimension, and on the unlikely path
// stores the index, the shape and the block indices into entry-block arrays,
// calls tlc_cpu_fail_bounds with a constant tlc_cpu_site, and branches to the
// function's failure exit. The address on the likely path is built from the
// same index values, as emitAddress builds it.
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstddef>

#include "compiler/backends/cpu/expr_codegen.h"
#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/support/diagnostics.h"
#include "compiler/support/source.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc::cpu {

using namespace ir;

llvm::Constant* ExprEmitter::constantString(const std::string& text) {
  auto it = strings_.find(text);
  if (it != strings_.end()) return it->second;
  llvm::Constant* data = llvm::ConstantDataArray::getString(ctx_, text, /*AddNull=*/true);
  auto* gv = new llvm::GlobalVariable(mod_, data->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                      data, "tlc.str");
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  strings_[text] = gv;
  return gv;
}

llvm::Value* ExprEmitter::entryArray(llvm::Type* elem, size_t n, const char* name) {
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  return entry.CreateAlloca(llvm::ArrayType::get(elem, std::max<size_t>(n, 1)), nullptr, name);
}

// { ptr kernel, ptr buffer, ptr file, i32 line, i32 column, i32 rank, i32 access, i32 length, ptr block_vars }
llvm::Constant* ExprEmitter::failureSite(const Buffer& buf, int access, SourceLoc loc) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  auto* siteTy = llvm::StructType::get(ctx_, {ptr, ptr, ptr, i32, i32, i32, i32, i32, ptr});
  std::string file;
  if (loc.known() && reporting_.sources && reporting_.sources->hasFile(loc.file))
    file = reporting_.sources->name(loc.file);
  std::string blockNames;
  for (const VarNode* v : blockVars_) blockNames += (blockNames.empty() ? "" : ",") + v->name;
  llvm::Constant* fields[] = {constantString(reporting_.funcName),
                              constantString(buf->name),
                              constantString(file),
                              b_.getInt32(loc.known() ? loc.line : 0),
                              b_.getInt32(loc.known() ? loc.col : 0),
                              b_.getInt32(int32_t(buf->shape.size())),
                              b_.getInt32(access),
                              b_.getInt32(loc.known() ? loc.len : 0),
                              constantString(blockNames)};
  auto* gv = new llvm::GlobalVariable(mod_, siteTy, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                      llvm::ConstantStruct::get(siteTy, fields), "tlc.site." + buf->name);
  return gv;
}

llvm::Value* ExprEmitter::accessAddress(const Buffer& buf, const std::vector<Expr>& indices, int access,
                                        SourceLoc loc) {
  if (!reporting_.checkBounds || !failure_) return emitAddress(buf, indices);
  auto it = bufs_.find(buf.get());
  TLC_CHECK(it != bufs_.end(), "buffer `" + buf->name + "` is not in scope in the CPU backend");
  TLC_CHECK(indices.size() == buf->shape.size(), "access to `" + buf->name + "` with the wrong number of indices");
  llvm::Type* i64 = b_.getInt64Ty();
  std::vector<llvm::Value*> idx, dims;
  llvm::Value* inside = nullptr;
  for (size_t d = 0; d < indices.size(); ++d) {
    idx.push_back(b_.CreateIntCast(emitExpr(indices[d]), i64, isSigned(indices[d]->dtype)));
    dims.push_back(b_.CreateIntCast(emitExpr(buf->shape[d]), i64, isSigned(buf->shape[d]->dtype)));
    llvm::Value* ok = b_.CreateICmpULT(idx[d], dims[d]);
    inside = inside ? b_.CreateAnd(inside, ok) : ok;
  }
  if (inside) {
    auto* okBB = llvm::BasicBlock::Create(ctx_, buf->name + ".inside", fn_);
    auto* failBB = llvm::BasicBlock::Create(ctx_, buf->name + ".outside", fn_);
    b_.CreateCondBr(inside, okBB, failBB, llvm::MDBuilder(ctx_).createLikelyBranchWeights());
    b_.SetInsertPoint(failBB);
    llvm::Value* idxArr = entryArray(i64, idx.size(), "oob.index");
    llvm::Value* dimArr = entryArray(i64, dims.size(), "oob.shape");
    llvm::Value* blockArr = entryArray(i64, blockVars_.size(), "oob.block");
    for (size_t d = 0; d < idx.size(); ++d) {
      b_.CreateStore(idx[d], b_.CreateConstGEP1_64(i64, idxArr, d));
      b_.CreateStore(dims[d], b_.CreateConstGEP1_64(i64, dimArr, d));
    }
    for (size_t i = 0; i < blockVars_.size(); ++i) {
      const VarNode* v = blockVars_[i];
      b_.CreateStore(b_.CreateIntCast(vars_.at(v), i64, isSigned(v->dtype)), b_.CreateConstGEP1_64(i64, blockArr, i));
    }
    llvm::Type* ptr = b_.getPtrTy();
    llvm::FunctionCallee fail = mod_.getOrInsertFunction(
        "tlc_cpu_fail_bounds", llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr, ptr}, false));
    b_.CreateCall(fail, {failure_, failureSite(buf, access, loc), idxArr, dimArr, blockArr});
    b_.CreateBr(failureExit_);
    b_.SetInsertPoint(okBB);
  }
  llvm::Value* linear = b_.getInt64(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    if (d > 0) linear = b_.CreateMul(linear, dims[d], "", false, true);
    linear = b_.CreateAdd(linear, idx[d], "", false, true);
  }
  return b_.CreateInBoundsGEP(storageType(ctx_, buf->dtype), it->second, linear, buf->name + ".addr");
}

void ExprEmitter::createFailureRecord() {
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  auto* rec = entry.CreateAlloca(llvm::ArrayType::get(b_.getInt8Ty(), sizeof(tlc_cpu_failure)), nullptr, "failure");
  rec->setAlignment(llvm::Align(alignof(tlc_cpu_failure)));
  failure_ = rec;
  llvm::FunctionCallee begin = mod_.getOrInsertFunction(
      "tlc_cpu_failure_begin", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
  b_.CreateCall(begin, {failure_});
}

void ExprEmitter::checkLocalAllocation(llvm::Value* heap, int64_t bytes) {
  auto* okBB = llvm::BasicBlock::Create(ctx_, "locals.allocated", fn_);
  auto* failBB = llvm::BasicBlock::Create(ctx_, "locals.failed", fn_);
  b_.CreateCondBr(b_.CreateIsNotNull(heap), okBB, failBB, llvm::MDBuilder(ctx_).createLikelyBranchWeights());
  b_.SetInsertPoint(failBB);
  llvm::FunctionCallee fail = mod_.getOrInsertFunction(
      "tlc_cpu_fail_memory", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty()}, false));
  b_.CreateCall(fail, {failure_, constantString(reporting_.funcName), b_.getInt64(bytes)});
  b_.CreateBr(failureExit_);
  b_.SetInsertPoint(okBB);
}

llvm::Value* ExprEmitter::andNoFailure(llvm::Value* cond) {
  if (!failure_) return cond;
  static_assert(offsetof(tlc_cpu_failure, state) == 0, "the state is the record's first field");
  auto* state = b_.CreateAlignedLoad(b_.getInt32Ty(), failure_, llvm::Align(4), "failure.state");
  state->setAtomic(llvm::AtomicOrdering::Monotonic);
  return b_.CreateAnd(cond, b_.CreateICmpEQ(state, b_.getInt32(0)));
}

void ExprEmitter::endFailureRecord() {
  llvm::FunctionCallee end = mod_.getOrInsertFunction(
      "tlc_cpu_failure_end", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
  b_.CreateCall(end, {failure_});
}

}  // namespace tlc::cpu
