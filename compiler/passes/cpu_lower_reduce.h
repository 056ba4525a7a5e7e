// Pass cpu-lower-reduce: Reduce tile operations become loops.
//
// Assumes: a verified module; dst has src's dimensions without `dim` (or the
// same rank with a unit extent at `dim`).
// Guarantees: no Reduce statement remains. Each destination element gets an
// accumulator (float32 for 16-bit float destinations) initialised with the
// reduction's identity (clear) or the old destination value (no clear), and
// the result is stored back. Along the contiguous (last) dimension, when it
// is a constant of at least two 64-byte vectors of the accumulator type, a
// vector of 64 bytes of partial results (four such vectors, 256 bytes, when
// the extent holds eight: four independent chains of vector operations)
// takes one element of each chunk per lane, the lanes combine pairwise after
// the chunks (vector loops, the last two levels statements), and the
// elements past the last whole chunk follow in order (sums therefore add in
// another order than the interpreter's; maxima and minima are exact). A 2-D
// region of R rows reduced into all R elements of a 1-D destination (R a
// multiple of one vector of lanes, each row whole chunks) narrows each row's
// lanes to one vector, stores them as a row of an R x V buffer, transposes it
// into a V x R buffer and combines its rows in vector loops over the R rows.
// Along an outer
// dimension whose region has a constant last extent of at most 4096, a row
// of accumulators over the last dimension walks the reduced dimension in
// order, the row in vector loops (the interpreter's order for every
// element). Otherwise the reduced dimension is walked in order into one
// accumulator. Source reads outside the buffer yield zero, as for every
// region (no test when the region lies inside its buffer); destination
// writes outside it are skipped.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module lowerReductions(const ir::Module& m);

}  // namespace tlc::cpu
