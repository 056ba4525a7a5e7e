// The region a point operand of a tile operation names.
//
// A point `A[i, j, ...]` (every index a scalar) starts a region at
// (i, j, ...) and takes its extents from the other operand of the operation
// (the "tile"). A tile with as many dimensions as the point gives each
// dimension its extent, in order. Otherwise the tile's non-unit extents are placed, in order, on an
// order-preserving choice of the point's dimensions; every other dimension
// gets extent 1. When the point has more dimensions than the tile has
// non-unit extents there are several such placements, and the first of these
// tiers that is not empty decides:
//   1. aligned: every chosen dimension's index is provably a multiple of the
//      extent (`k * 64` for 64, `0`, `by * bm` for bm): the tile-aligned
//      reading;
//   2. every placement.
// The sizes of the point's dimensions play no part, so a region never
// depends on whether a size is a compile-time constant.
// In that tier the trailing placement (the tile on the point's last
// dimensions) is the region when the tier has it; otherwise a single
// placement is, and several are ambiguous (only tile-aligned ones can be: the
// last tier has the trailing placement): the caller reports them and the user
// writes the slice. With as many non-unit extents
// as point dimensions there is one placement, so a 2-D tile read from a 2-D
// point never depends on the indices.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::sema {

struct PointPlacement {
  enum class Outcome { Placed, TooFewDims, Ambiguous };
  Outcome outcome = Outcome::Placed;
  // Placed: the point's extents, one per dimension.
  std::vector<ir::Expr> extents;
  // Ambiguous: the extents of the first candidates of the deciding tier, and
  // whether it has more than those.
  std::vector<std::vector<ir::Expr>> candidates;
  bool moreCandidates = false;
};

// Places `tile`'s extents on the point `buffer[mins...]` (see above).
PointPlacement placePoint(const ir::Buffer& buffer, const std::vector<ir::Expr>& mins,
                          const std::vector<ir::Expr>& tile, SourceLoc loc);

// A region in slice spelling: `K[b, k * 64:k * 64 + 64, h, 0:128]` (extent-1
// dimensions as their index).
std::string formatSlice(const ir::Buffer& buffer, const std::vector<ir::Expr>& mins,
                        const std::vector<ir::Expr>& extents);

}  // namespace tlc::sema
