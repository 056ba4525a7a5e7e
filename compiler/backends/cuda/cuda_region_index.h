// Index arithmetic over tile regions shared by the CUDA tile-operation
// lowerings (cuda_tile_ops.cpp, cuda_register_tiles.cpp).
#pragma once

#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cuda::regions {

using ir::nonUnitDims;
std::vector<ir::Expr> extentsOf(const ir::Region& r, const std::vector<int>& dims);
// Row-major coordinates of `flat` within `extents`.
std::vector<ir::Expr> unflatten(const ir::Expr& flat, const std::vector<ir::Expr>& extents);
// The buffer index of the region element with coordinates `locals` along `dims`.
std::vector<ir::Expr> regionIndex(const ir::Region& r, const std::vector<int>& dims, const std::vector<ir::Expr>& locals);
bool isAlwaysTrue(const ir::Expr& e);
// Whether two extents are equal (constants by value, others by identity).
bool sameExtent(const ir::Expr& a, const ir::Expr& b);
// Whether two lists of extents are equal element by element.
bool sameExtents(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b);
// The product of `e` (1 when empty).
ir::Expr product(const std::vector<ir::Expr>& e);
// Elements per vector move (16 bytes at most) of a copy between buffers in
// memory, or 0 for element-wise moves: the innermost run must be the last
// (contiguous) dimension of both regions, with a constant extent.
int64_t copyRunWidth(const ir::CopyStmt* c);

}  // namespace tlc::cuda::regions
