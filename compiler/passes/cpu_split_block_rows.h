// Pass cpu-split-block-rows: a block whose rows are independent runs its
// body over a few rows at a time, when its tiles are too large for L1.
//
// On a GPU, a block of 128 threads walking its 128 rows of a tensor in
// steps (a running sum along rows: `for k in T.serial(..)`, each step a copy
// of a 128 x 64 tile in, a serial walk per row, a copy out) keeps each row's
// data in its thread's registers. On the CPU one thread runs the block, and
// each step moves the whole 32 KiB tile through L1 together with the lines
// of the 128 rows it reads and writes: they do not fit, and the block ran at
// less than half of memcpy's bandwidth where the same kernel with 32-row
// blocks ran near it. When no row of the block uses another row's data, the
// block may as well run its body for rows 0..G-1, then G..2G-1, and so on:
//
//   alloc s: shared float32[128, 64]       alloc s: shared float32[32, 64]
//   fill(acc, 0.0)                         for r in serial(0 : +4) {
//   for k in serial(..) {                    fill(acc, 0.0)
//     copy(X[bx * 128 : +128, ..], s)   ->   for k in serial(..) {
//     for i in parallel(0 : +128) {..}         copy(X[bx * 128 + r * 32 : +32, ..], s)
//     ...                                      for i in parallel(0 : +32) {.. i + r * 32 ..}
//
// The rule: every shared and fragment buffer of the kernel is allocated at
// the top of its body with the same constant first extent R (the block's
// rows); every access to such a buffer is inside a Parallel loop over
// [0, R) (a row loop, not nested in another) and has that loop's variable
// as its first index; copies, fills and reductions (not over the rows) use
// whole buffers, and a copy between such a buffer and a tensor maps the
// buffer's rows onto R consecutive elements of one dimension of the tensor;
// the kernel writes no tensor it reads, and has no atomic, gemm, print, jump
// or asynchronous statement; and some serial loop holds a row loop or a
// copy (the steps that make the tile traffic). When the buffers take more
// than `maxBytes` (a quarter of L1), G is the largest multiple of 16 below R
// that divides R and whose rows of all the buffers take at most `maxBytes`;
// no split when there is none.
//
// Assumes: tile operations not yet lowered (before cpu-lower-copy-fill).
// Guarantees: each row is computed by the same statements in the same
// order, with the same values (a row loop's variable i stands for row
// i + r * G everywhere but the buffers' first index); rows of different
// groups no longer interleave, which only a dependence between rows could
// observe, and there is none.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module splitBlockRows(const ir::Module& m, int64_t maxBytes);

}  // namespace tlc::cpu
