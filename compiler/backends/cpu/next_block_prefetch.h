// Which reads of lowered tile IR the CPU backend prefetches for the next
// block of the grid.
//
// A block typically reads tiles of global tensors row by row, a few cache
// lines from each of many rows, and its neighbour in the grid reads the lines
// just after them. That is too many short streams for the hardware
// prefetchers, so reads wait on memory. The rule: inside a block function,
// before each innermost Vectorized loop, every load of a tensor parameter in
// the loop's body
//   - whose indices are contiguous in the loop variable (contiguous_access.h)
//   - and depend on every block index of the kernel: each block reads its own
//     part of the tensor, so no other block brought it into the cache (the
//     operand tiles of a gemm, shared by a row or column of blocks, stay
//     with the hardware prefetchers and the cache)
// is prefetched for the block the thread runs next (block + 1, x fastest):
// the loop's range of elements at the indices the next block's block indices
// give, one `prefetcht1` (into L2) per 64-byte line. Prefetches never fault,
// so ranges past the tensor's end are harmless. The backend skips them at run
// time when the loops around the load make the block read more than 256 KiB
// of it (llvm_codegen.cpp, kNextBlockBytes): by the time the next block runs,
// those lines have left L2. It then prefetches the lines of the next
// iteration of an enclosing serial loop instead (llvm_codegen.cpp,
// aheadLoop).
#pragma once

#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

// Whether an access at `indices` uses every block index: each block reads
// (or writes) its own part of the tensor.
bool ownedByBlock(const std::vector<ir::Expr>& indices, const std::vector<const ir::VarNode*>& blockVars);

// The loads of `loop`'s body to prefetch for the next block, without
// duplicates; empty when `loop` is not an innermost Vectorized loop.
std::vector<const ir::Load*> nextBlockPrefetches(const ir::ForStmt& loop,
                                                 const std::vector<const ir::VarNode*>& blockVars);

// A row read in chunks: a serial loop whose body is one innermost Vectorized
// loop of constant extent L from 0, reading at a last index `x + c * L + l`
// (c the serial loop's variable, l the vector loop's; the other indices and
// x free of both), as cpu-lower-reduce walks a row into its lanes of
// partial results. The serial loop's E iterations read E * L consecutive
// elements, which are prefetched for the next block before it, as one range;
// the vector loop itself reads too few of them (64 lanes) to be worth a
// prefetch loop of its own, and its index is not of the form `x + l`.
struct ChunkedReads {
  const ir::ForStmt* vectorLoop = nullptr;
  int64_t lanes = 0;                   // L
  std::vector<const ir::Load*> loads;  // owned by the block, without duplicates
};
ChunkedReads chunkedNextBlockPrefetches(const ir::ForStmt& loop, const std::vector<const ir::VarNode*>& blockVars);

}  // namespace tlc::cpu
