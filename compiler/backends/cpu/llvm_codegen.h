// Tile IR (lowered for the CPU) -> LLVM IR.
//
// Assumes: the module went through lowerForCpu: no tile operations, no
// Parallel/Pipelined loops, only Global and Local buffers, cpu.* intrinsics.
// Guarantees: one exported function per PrimFunc (see cpu_backend.h for the
// ABI). Each Kernel statement is outlined into an internal function
// `(ctx, begin, end)` that runs blocks [begin, end) of the grid (x fastest)
// and is handed to tlc_cpu_parallel_for; the values in scope at the kernel
// (parameters, shape variables, lets) travel in an 8-byte-slot context array.
// Local buffers are 64-byte aligned stack arrays of the block function, up
// to 512 KiB of them; larger ones share one heap allocation per call of the
// block function (a chunk of blocks), freed when it returns. With bounds
// checks, every load, store, atomic and gemm operand is tested against its
// buffer's shape first (kernel_failures.cpp) and streaming stores are off.
// Functions with either keep a tlc_cpu_failure record: a failure stops the
// block (a branch to the block function's exit) and the blocks not started
// yet, and the module exports tlc_module_last_failure (cpu_backend.h).
// Vectorized loops carry loop-vectorizer metadata and mark their memory
// accesses parallel; those that write a tensor the function never reads
// write its whole cache lines with non-temporal stores when it is large
// (streaming_stores.h), and the functions that do end with an sfence. In a
// block function, such loops first prefetch what the next block of the grid
// reads there, when every block reads its own part (next_block_prefetch.h).
// Integer `//` and `%` are floor division and modulo; float-to-int casts
// saturate (NaN gives 0).
#pragma once

#include <memory>

#include "compiler/backends/cpu/target.h"
#include "compiler/ir/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tlc::cpu {

struct CodegenOptions {
  bool checkBounds = false;                // CpuOptions::checkBounds
  const SourceManager* sources = nullptr;  // names the files of bounds-check sites
};

std::unique_ptr<llvm::Module> generateLLVM(const ir::Module& lowered, llvm::LLVMContext& ctx, const CpuTarget& target,
                                           const CodegenOptions& options = {});

}  // namespace tlc::cpu
