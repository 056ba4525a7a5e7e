// Pass cpu-prefetch-next-tiles: the global tiles that the next iteration of a
// gemm's reduction loop copies are prefetched while this iteration's gemm
// runs (the CPU form of a pipelined mainloop's asynchronous copies).
//
// A block copies its tiles of A and B from global memory at every step of the
// reduction loop. Their rows lie a whole matrix row apart (a new page each in
// large matrices), so the hardware prefetchers do not fetch them, and the
// copies wait for memory with the gemm's units idle. For a serial or
// pipelined loop whose body has a cpu.gemm call at its top level and copies
// from global tensors into block-local buffers whose source depends on the
// loop variable (at any depth of the body's serial loops of constant extent,
// such as the slices of cpu-coarsen-k, and of its ifs), the pass
//   - takes each copy's source region at the next iteration (var + 1; an
//     inner serial loop's copies once per value of its variable),
//   - merges regions of the same tensor that continue each other along their
//     rows or their columns (the slices of one coarsened tile become one),
//   - appends them to the gemm call as prefetch streams (cpu_intrinsics.h):
//     enabled when a next iteration exists, the address of its first
//     element, rows, row stride, columns.
// The micro-kernel generator spreads the streams' cache lines over its inner
// loops (gemm_microkernel.h). A prefetch changes no value: results are
// bit-identical, and a prefetched address is never checked or dereferenced.
// Regions with a non-constant extent, or more than 2 dimensions of extent > 1,
// are left out; at most 4 streams per gemm.
// Assumes: cpu-lower-gemm has run and copies are not lowered yet.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module prefetchNextTiles(const ir::Module& m);

}  // namespace tlc::cpu
