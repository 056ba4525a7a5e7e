// Pass cpu-group-blocks: runs 2 x 2 (or 2 x 1) neighbouring blocks of a grid
// together on the CPU, so that the tiles they share are copied once.
//
// One CPU thread runs a block's whole body. A gemm block copies its tile of A
// (the same for every block of its grid row) and its tile of B (the same for
// every block of its column) at each reduction step, from L3 or memory; with
// 128 x 128 tiles those copies, not the micro-kernel, are what keeps a
// float32 gemm from the CPU's peak. Running the blocks (2bx, 2by),
// (2bx + 1, 2by), (2bx, 2by + 1), (2bx + 1, 2by + 1) of a group step by step
// together lets the two blocks of a row share one A tile and the two of a
// column one B tile: half the copies, as with 256 x 256 tiles, while the
// user's tiles, and the micro-kernel over them, stay as written.
//
// The grid becomes ceildiv(gx, fx) x ceildiv(gy, fy) (fx, fy in {1, 2, 4},
// fx * fy <= 8) and
// the body runs the group's blocks jammed, in the body's order:
//   - a serial or pipelined loop whose bounds do not depend on the block and
//     whose body neither breaks nor continues is one loop over the jammed
//     bodies; likewise an `if` whose condition does not depend on the block,
//     and a `let` whose value does not (a value read from a block-local
//     buffer, such as a mask copied into a local one, depends on the block);
//   - a `let` whose value depends on the block binds one fresh variable per
//     block of the group;
//   - any other statement runs once per block of the group, with that
//     block's indices and buffers, under `if 2 * bx + 1 < gx` (and the like)
//     when the grid's extent may be odd;
//   - each block of the group has its own copy of every block-local buffer,
//     except a buffer written only by fills and by copies from tensors the
//     kernel never writes: when those writes (with the conditions, loop
//     bounds and lets around them) do not depend on the block index in which
//     two blocks of the group differ, the later block uses the earlier one's
//     buffer and its copies and fills of it are dropped.
// The pass groups along x when some gemm operand is shared that way by blocks
// that differ in x (the A tile of C = A B), or is a tensor region that does
// not depend on x (A read in place, cpu-coarsen-k), along y likewise (the B
// tile). It takes the largest group (8 blocks, then 4, 2; of two the one with
// fewer buffers) whose buffers stay within GroupLimits::maxBytes and that
// leaves at least GroupLimits::minGroups groups of a grid of known extent,
// and groups nothing when no
// operand is shared, or when a block-dependent `let` reads memory (a block
// past the grid's end would read it).
// Assumes: a verified module, tile operations not yet lowered (after
// cpu-coarsen-k).
// Guarantees: every block runs its statements in their order, with the same
// values, so results are bit-identical; blocks of a group interleave, which
// the programming model allows for any two blocks.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

struct GroupLimits {
  // The fewest groups a grid of known extent must keep (the threads that run
  // them need work); a grid of unknown extent is grouped regardless.
  int64_t minGroups = 1;
  // The most bytes of block-local buffers a group may have (half the L2 of
  // the CPU that runs it: the gemms' tiles and accumulators stay there).
  int64_t maxBytes = int64_t(1) << 20;
};

ir::Module groupBlocks(const ir::Module& m, const GroupLimits& limits);

}  // namespace tlc::cpu
