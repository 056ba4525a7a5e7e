// Pass cpu-lower-reduce: Reduce tile operations become loops.
//
// Assumes: a verified module; dst has src's dimensions without `dim` (or the
// same rank with a unit extent at `dim`).
// Guarantees: no Reduce statement remains. Each destination element gets an
// accumulator (a one-element local buffer, float32 for 16-bit float
// destinations) initialised with the reduction's identity (clear) or the old
// destination value (no clear); the reduced dimension is walked in order and
// the result stored back. Source reads outside the buffer yield zero, as for
// every region; destination writes outside it are skipped.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module lowerReductions(const ir::Module& m);

}  // namespace tlc::cpu
