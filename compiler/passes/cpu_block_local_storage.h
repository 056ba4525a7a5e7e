// Pass cpu-block-local-storage: shared, fragment, local and var buffers become
// storage private to the block that runs them.
//
// On the CPU one block of the grid runs start to finish on one thread, so
// every non-global buffer of a block is private to it.
// Assumes: tile operations are lowered (buffers are only used by Load, Store
// and intrinsic address_of calls); non-global buffers have constant shapes.
// Guarantees: every Alloc has scope Local and sits at the top of the body of
// its Kernel (or of its function outside kernels): the backend gives each a
// fixed-size, 64-byte aligned array, in the frame of the block function or,
// past 512 KiB in all, on the heap (llvm_codegen.h), reused by the blocks
// that thread runs. A kernel whose buffers need more than 1 GiB per block is
// a cpu-block-local-too-large error at the kernel. An Alloc whose shape is
// not constant is an internal error here (the front end only accepts
// constant tile shapes).
#pragma once

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::cpu {

ir::Module makeBlockLocalStorage(const ir::Module& m, passes::PassContext& ctx);

}  // namespace tlc::cpu
