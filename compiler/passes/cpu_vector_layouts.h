// Pass cpu-vector-layouts: the dimensions of a block's own buffers are
// ordered so that the vector loops that compute with them run along the
// buffer's rows.
//
// A shared or fragment buffer is plain row-major on the CPU, and it is the
// block's own: its layout is the compiler's choice. When the vector loops
// of a kernel read and write a tile down its columns (`s[i, j]` in a loop
// vectorized over i, as a row-wise running sum leaves it after
// cpu-interchange-serial), each vector is built from scalar loads. Here
// such a buffer's dimensions are permuted so that the dimension the vector
// loops step through is the last one: those accesses become vector loads
// and stores, and the copies between the tile and tensors (a store of a
// plain load) become transposing nests, which the backend moves as square
// blocks through registers (backends/cpu/tile_transpose.h).
//
// The choice: each access in a Vectorized loop whose indices step through
// exactly one dimension of the buffer, by one element per iteration, votes
// for that dimension, weighted by the iterations of the loops around it
// (constant extents; 16 for the others). Copies (a store whose value is a
// load, or a select of one) do not vote: they can be moved either way. A
// buffer is permuted when one dimension has more votes than the last.
//
// Assumes: tile operations are lowered to loads and stores (cpu-map-loops
// has run); shapes of buffers allocated in a kernel are constant.
// Guarantees: the same values are computed; a permuted buffer keeps its
// name. Buffers whose address is taken (`cpu.address_of`: the gemm
// micro-kernel's operands), that are printed whole or updated atomically
// keep their layout.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module chooseVectorLayouts(const ir::Module& m);

}  // namespace tlc::cpu
