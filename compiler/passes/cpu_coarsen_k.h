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
//         for u in serial(U): if ko*U + u < n: the two copies for k = ko*U + u
//                                into slice u of A_s / B_s
//                             else: zero slice u of A_s and B_s
//         gemm(A_s, B_s, C)
// Assumes: a verified module, tile operations not yet lowered.
// Guarantees: the same products are accumulated into C in the same k order
// (the micro-kernel walks k in order), so results are bit-identical; loops
// that do not match the form are left alone.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module coarsenGemmK(const ir::Module& m);

}  // namespace tlc::cpu
