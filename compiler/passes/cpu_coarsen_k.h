// Pass cpu-coarsen-k: re-tiles the reduction loop of a block's gemm for the
// CPU, so one micro-kernel call covers several of the program's k steps.
//
// GPU-style tiles step k by a small block_K (e.g. 32); on the CPU each gemm
// call then reloads and stores its register accumulators every 32 k steps.
// For a loop of the canonical form
//     for k in serial/Pipelined(n):          # any extent n
//         copy(<global region depending on k>, A_s)
//         copy(<global region depending on k>, B_s)
//         gemm(A_s, B_s, C)                  # clear_accum=False
// where A_s and B_s are block-local buffers used nowhere else, the pass makes
// A_s and B_s U times longer along k (U * block_K ~ 256) and rewrites the loop
// as
//     for ko in serial(ceildiv(n, U)):
//         if ko*U + U - 1 < n:   (all U steps exist; when both copies' slices
//                                 continue each other, see below)
//             copy(<the U steps' source regions as one>, B_s)
//             gemm(<the U steps' source regions of A as one>, B_s, C)
//               (A read in place; else copied into A_s like B, and
//                gemm(A_s, B_s, C))
//         else:
//           for u in serial(U): if ko*U + u < n: the two copies for k = ko*U + u
//                                  into slice u of A_s / B_s
//                               else: zero slice u of A_s and B_s
//           gemm(A_s, B_s, C)
// (only the first branch when n is a constant multiple of U).
// A copy's slices continue each other when its source region moves, from one
// step to the next, by its own constant extent along one dimension (the one
// that lands on the buffer's k dimension) and stays put along the others, as
// in `T.copy(A[by * bM, k * bK], A_s)`. One copy of whole tile rows (1 KiB of
// each row of A for 256 float32 k) is what the hardware prefetchers follow;
// U copies of 128-byte pieces of 128 rows a page apart each are not.
// The gemm reads A's rows where they are when A is not transposed, has the
// tile's dtype, and its region starts at indices that cannot be negative:
// its rows are contiguous along k, which the micro-kernel's broadcasts walk,
// and cpu-lower-gemm clamps M and K to the part of the region inside the
// tensor, which the zeros of the copy stood for. That saves half of the
// mainloop's copies. B is still copied: its rows lie a tensor row apart
// along k and would fall into a few L1 sets. A tile no longer used is not
// allocated.
// Assumes: a verified module, tile operations not yet lowered.
// Guarantees: the same products are accumulated into C in the same k order
// (the micro-kernel walks k in order), so results are the same (the steps
// past K that the copies padded with zeros are skipped instead: an
// accumulator of -0.0 stays -0.0 rather than becoming +0.0); loops that do
// not match the form are left alone.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module coarsenGemmK(const ir::Module& m);

}  // namespace tlc::cpu
