// Where the CPU backend keeps a kernel's block-local buffers (shared and
// fragment tiles): the first 512 KiB of them, in allocation order, in the
// frame of the function that runs the blocks; the rest in one heap
// allocation per chunk of blocks (docs/cpu-backend.md, Tiles).
#pragma once

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/LLVMContext.h>

#include <utility>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

struct LocalPlan {
  std::vector<std::pair<const ir::AllocStmt*, int64_t>> heap;  // buffer, byte offset in the allocation
  int64_t heapBytes = 0;
};

// The heap part of the buffers of `body`'s leading Allocs (where
// cpu-block-local-storage puts them all).
LocalPlan planLocals(const ir::Stmt& body, const llvm::DataLayout& layout, llvm::LLVMContext& ctx);

// Whether some part of `s` (the function itself or one of its kernels) keeps
// block-local buffers on the heap.
bool usesHeapLocals(const ir::Stmt& s, const llvm::DataLayout& layout, llvm::LLVMContext& ctx);

}  // namespace tlc::cpu
