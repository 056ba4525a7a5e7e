// Which stores of lowered tile IR the CPU backend writes with streaming
// (non-temporal) stores.
//
// A normal store to a line that is not cached first reads the line
// (read-for-ownership), so writing an output tensor that does not fit in the
// caches moves its bytes twice. Streaming stores write whole cache lines
// straight to memory and leave them uncached. The rule:
//   - the target is x86-64 (the backend then orders the streamed lines with an
//     `sfence` before each block function, or the kernel, returns);
//   - the loop is an innermost Vectorized loop whose body is one store to a
//     tensor parameter, at an index contiguous in the loop variable (the last
//     index is `v` or `x + v` with `x` free of `v`; the others are free of
//     `v`), of an element of 1, 2, 4 or 8 bytes, over a constant extent of
//     at least 64 bytes (whole tile rows; the clamped loops of edge tiles
//     keep ordinary stores);
//   - the function never reads that tensor (no load, atomic or gemm operand
//     names it), so no kernel of the call wants the lines back in the cache;
//   - at run time, the tensor holds at least tlc_cpu_stream_store_min_bytes()
//     bytes (by default half the last-level cache, at most 16 MiB: such an
//     output and an input of its size do not stay cached together, and a
//     server's cache is shared by many cores): smaller outputs stay cached
//     for whatever reads them next.
// Transposing nests (tile_transpose.h) follow the same rule for their stores
// of whole 64-byte lines, checked for alignment at run time
// (llvm_codegen.cpp, emitTransposeNest).
// Such a loop runs its first iterations up to a 64-byte boundary of the
// destination and its last partial line as before (one copy of the loop, run
// for both); every whole line between is computed into a 64-byte staging
// vector (which LLVM keeps in a register) and written with one aligned
// non-temporal vector store.
#pragma once

#include <unordered_set>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

using BufferSet = std::unordered_set<const ir::BufferNode*>;

// Tensor parameters of `f` that no expression of its body loads (and so no
// atomic or gemm intrinsic names as an operand).
BufferSet writeOnlyTensors(const ir::PrimFunc& f);

// The store of `loop` when the rule above lets it stream (run-time size check
// aside), else null.
const ir::StoreStmt* streamableStore(const ir::ForStmt& loop, const BufferSet& writeOnly);

}  // namespace tlc::cpu
