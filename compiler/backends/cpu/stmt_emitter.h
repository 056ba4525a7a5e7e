// Statements of the lowered tile IR -> LLVM IR, within one function: the
// CPU backend's statement emitter (llvm_codegen.h's generateLLVM runs one per
// exported function, and one per kernel's outlined block function).
//
// Its members live in two files: llvm_codegen.cpp (statements, loops,
// kernels and their block functions, the function's entry and exit) and
// stmt_memory_traffic.cpp (what moves memory faster than the plain loops:
// transposes through registers, streamed stores, prefetches ahead).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/TargetParser/Triple.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/backends/cpu/expr_codegen.h"
#include "compiler/backends/cpu/streaming_stores.h"
#include "compiler/backends/cpu/target.h"
#include "compiler/backends/cpu/tile_transpose.h"
#include "compiler/ir/ir.h"

namespace tlc::cpu {

class StmtEmitter : public ExprEmitter {
 public:
  StmtEmitter(llvm::Module& m, const CpuTarget& target, llvm::Function* fn, const std::string& kernelPrefix,
              const BufferSet& writeOnly, const FailureReporting& reporting)
      : ExprEmitter(m, fn),
        target_(target),
        kernelPrefix_(kernelPrefix),
        writeOnly_(&writeOnly),
        // Streamed lines are written past the stores that bounds checks test.
        streamingAllowed_(llvm::Triple(target.triple).getArch() == llvm::Triple::x86_64 && !reporting.checkBounds) {
    reporting_ = reporting;
  }

  void emit(const ir::Stmt& s);

 private:
  // break: to the innermost loop's exit; continue: to its increment. What
  // follows in the same block is unreachable and goes into a block of its own.
  void emitJump(bool isBreak);
  void emitAlloc(const ir::AllocStmt* a);
  void emitStore(const ir::StoreStmt* s);
  void emitIf(const ir::IfStmt* s);
  void emitFor(const ir::ForStmt* f);

  // A transposing nest (tile_transpose.h): T x T blocks through registers,
  // P of them side by side along the stores. Vectors are loaded along one
  // loop variable (`along`) at P x T values of the other (`across`),
  // transposed, and stored along `across` at T values of `along`.
  void emitTransposeNest(const TransposeNest& t);

  // for (var = lo; var < end; ++var) body(), with the loop metadata of `kind`
  // (and a vectorization width when width > 0).
  template <class Body>
  void emitLoop(const ir::Var& var, llvm::Value* lo, llvm::Value* end, ir::ForKind kind, int width, Body&& body,
                bool keepRolled = false) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, var->name + ".loop", fn_);
    auto* bodyBB = llvm::BasicBlock::Create(ctx_, var->name + ".body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, var->name + ".end", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(lo->getType(), 2, var->name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, end), bodyBB, exit);
    b_.SetInsertPoint(bodyBB);
    vars_[var.get()] = iv;

    llvm::MDNode* group = nullptr;
    if (kind == ir::ForKind::Vectorized) {
      group = llvm::MDNode::getDistinct(ctx_, {});
      accessGroups_.push_back(group);
    }
    jumpTargets_.push_back({exit, nullptr});
    body();
    if (group) accessGroups_.pop_back();
    if (llvm::BasicBlock* cont = jumpTargets_.back().cont) {
      b_.CreateBr(cont);
      b_.SetInsertPoint(cont);
    }
    jumpTargets_.pop_back();

    llvm::Value* next = b_.CreateAdd(iv, llvm::ConstantInt::get(lo->getType(), 1), "", false, true);
    auto* latch = b_.CreateBr(header);
    iv->addIncoming(next, b_.GetInsertBlock());
    attachLoopMetadata(latch, kind, group, width, keepRolled);
    b_.SetInsertPoint(exit);
  }

  // A Vectorized loop writing a write-only tensor (streaming_stores.h): the
  // iterations before the first 64-byte boundary of the destination and after
  // its last whole line run as the loop did; each whole line between is
  // computed into a staging vector and written with a non-temporal store.
  // Small tensors, destinations not aligned to their element, and extents
  // without one whole line take the plain loop for every iteration.
  void emitStreamingFor(const ir::ForStmt* f, const ir::StoreStmt* store, llvm::Value* lo, llvm::Value* ext);

  // The enclosing serial loop whose next iteration an access at `indices`
  // should be prefetched for, when the loops around it make a block read
  // more than kNextBlockBytes (no next-block prefetch) and the next block is
  // too far ahead: the innermost serial loop using one of the indices'
  // variables inside which the access covers at least kAheadMinBytes
  // (`innerBytes`: what the innermost loop covers) and at most
  // kNextBlockBytes. The blocks of a running sum over 128 rows, for
  // example, read 128 short rows per step of their column loop: too many
  // streams for the hardware prefetchers.
  const ir::ForStmt* aheadLoop(const std::vector<ir::Expr>& indices, int64_t innerBytes) const;

  // Prefetches the elements [lo, lo + ext) of `var` at `indices` of `buf`
  // (contiguous in `var`), for reading into L2 (prefetcht1) or for writing
  // into L1 (prefetcht0, so the store does not wait for the line): for the
  // next block of the grid (`nextIterationOf` null,
  // next_block_prefetch.h), when the loops around
  // make the block read at most kNextBlockBytes, or for the next iteration of
  // `nextIterationOf`, when they make it read more. `lane`, when given, is
  // the vector variable of a row read in chunks (chunkedNextBlockPrefetches),
  // taken at 0: the range is the chunks' `ext` elements.
  void prefetchAhead(const ir::VarNode* var, const ir::Buffer& buf, const std::vector<ir::Expr>& indices, llvm::Value* lo,
                     llvm::Value* ext, bool write, const ir::ForStmt* nextIterationOf,
                     const ir::VarNode* lane = nullptr);

  // One aligned non-temporal store of a 64-byte line (streaming_stores.h).
  void storeLine(llvm::Value* line, llvm::Value* addr);

  // The bytes of tensor `buf` (i64).
  llvm::Value* tensorBytes(const ir::BufferNode& buf);

  // tlc_cpu_stream_store_min_bytes(), called once at the function's entry.
  llvm::Value* streamMinBytes();

  // Streamed lines are weakly ordered: fence them before the function returns
  // (and so before the thread pool reports its blocks done).
  void fenceStreamedStores();
  void attachLoopMetadata(llvm::Instruction* latch, ir::ForKind kind, llvm::MDNode* group, int width,
                          bool keepRolled = false);
  void emitEvaluate(const ir::EvaluateStmt* s);
  const ir::Load* addressedLoad(const ir::Expr& e);
  llvm::Value* i64(const ir::Expr& e) { return b_.CreateIntCast(emitExpr(e), b_.getInt64Ty(), isSigned(e->dtype)); }

  void emitGemmCall(const ir::Call* c);

  // The element's value before the update.
  llvm::Value* emitAtomic(const ir::Call* c);

  // ---- kernels: outlined block functions run by the thread pool ----------

  void emitKernel(const ir::KernelStmt* k);
  const CpuTarget& target_;
  std::string kernelPrefix_;
  int kernelCount_ = 0;
  const BufferSet* writeOnly_;
  bool streamingAllowed_;
  llvm::Value* streamMinBytes_ = nullptr;
  // The extents (i64) of the loops around the statement being emitted.
  std::vector<llvm::Value*> loopExtents_;
  // The loops around the statement being emitted (emitFor's), innermost last.
  std::vector<const ir::ForStmt*> forStack_;
  static constexpr int64_t kNextBlockBytes = 256 << 10;
  static constexpr int64_t kAheadMinBytes = 4 << 10;
  bool streamed_ = false;
  // In block functions: the values of the kernel's block index variables
  // for the next block (for next_block_prefetch.h).
  std::vector<llvm::Value*> nextBlockValues_;
  llvm::Value* heapLocals_ = nullptr;  // the exported function's own heap locals
  // The loops around the statement being emitted, innermost last: where
  // `break` goes, and where `continue` goes (made on first use).
  struct JumpTarget {
    llvm::BasicBlock* exit;
    llvm::BasicBlock* cont;
  };
  std::vector<JumpTarget> jumpTargets_;
  // Statements of the kernel body emitted before the block loop.
  std::unordered_set<const ir::StmtNode*> hoisted_;

  // Binds the buffers of `body`'s leading Allocs that planLocals puts on the
  // heap to parts of one allocation made here; returns it (null: none).
  llvm::Value* allocateHeapLocals(const ir::Stmt& body);
  void freeHeapLocals(llvm::Value* heap);

 public:
  // The function's failure record, when its kernels can fail.
  bool startFailureRecord(const ir::PrimFunc& f);
  void bindParams(const ir::PrimFunc& f);
  void finish();
};

}  // namespace tlc::cpu
