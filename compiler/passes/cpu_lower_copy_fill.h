// Pass cpu-lower-copy-fill: Copy and Fill tile operations become loop nests.
//
// Assumes: a verified module; copy regions hold the same number of elements
// once unit dimensions are dropped.
// Guarantees: no Copy or Fill statement remains. Each becomes Parallel loops
// over the destination's non-unit dimensions (innermost = contiguous). Region
// elements outside their buffer keep the language's semantics: writes outside
// the destination are skipped by clamping the loop bounds, reads outside the
// source yield zero through a select over an index clamped into the buffer (so
// the load itself is always in bounds). When the bounds conditions are not
// provable at compile time, a copy gets an unmasked fast path guarded by a
// single whole-region check.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module lowerCopyAndFill(const ir::Module& m);

}  // namespace tlc::cpu
