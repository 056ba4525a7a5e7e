// Transposing loop nests on the CPU: square blocks moved through registers.
//
// A nest `for i: for j (vector): dst[.., i, .., j] = src[.., j, .., i]` reads
// with a stride in its vector loop; LLVM builds each vector from scalar loads
// (no gather exists for 16-bit elements, and gathers are slow for the
// others). When both loops have constant extents that are multiples of a
// block size T (a vector register of elements, at most 16), the backend
// moves T x T blocks instead: T vector loads of T elements along i (rows of
// the source), a transpose in registers by log2(T) rounds of two-input
// shuffles, and T vector stores along j (rows of the destination). The nest
// must store one element of a buffer loaded from another buffer of the same
// type (1, 2, 4 or 8 bytes), the store consecutive in one of the two loop
// variables and the load in the other (`dst[.., j, .., i] = src[.., i, .., j]`
// reads along j and writes along i: the same blocks); not under bounds
// checks (each element would be tested on its own). When a block's rows are
// narrower than a vector register (float16 or bytes with AVX-512: T is at
// most 16), P blocks side by side along the stores move together: each
// register holds one row of each of the P blocks, the transpose works on
// the P segments at once, and each store writes P x T consecutive elements
// (a whole 64-byte line of float16 instead of two halves written apart).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <optional>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

struct TransposeNest {
  const ir::ForStmt* outer;  // over i
  const ir::ForStmt* inner;  // over j, Vectorized
  const ir::StoreStmt* store;
  const ir::Load* load;
  int64_t rows, cols, block;  // extents of i and j, and T
  int64_t pack;               // P: blocks side by side along the stores (1, 2 or 4)
  bool loadAlongOuter;        // the load consecutive in i (and the store in j), or the reverse
};

// The nest at `outer` when the rule above applies.
std::optional<TransposeNest> matchTransposeNest(const ir::ForStmt& outer, int vectorBits);

// The vectors of `parts` (1, 2 or 4 of one type) one after the other.
llvm::Value* concatVectors(llvm::IRBuilder<>& b, std::vector<llvm::Value*> parts);

// Transposes the T x T block whose rows are `rows` (T vectors of T
// elements), or P such blocks at once: T vectors of P x T elements, each
// T-element segment a row of one block.
std::vector<llvm::Value*> transposeInRegisters(llvm::IRBuilder<>& b, std::vector<llvm::Value*> rows);

}  // namespace tlc::cpu
