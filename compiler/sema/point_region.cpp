#include "compiler/sema/point_region.h"

#include <algorithm>

#include "compiler/sema/const_eval.h"

namespace tlc::sema {

namespace {

bool isUnit(const ir::Expr& e) {
  auto c = constIntValue(e);
  return c && *c == 1;
}

constexpr size_t kListed = 4;  // candidates named in an ambiguity error

// The placements of the extents `ext` on the point's dimensions where
// allowed[i][d] says extent i may go on dimension d. Counted up to 2 with a
// table of completions (ways[i][d]: placements of extents i.. on dimensions
// d..), so a point of many dimensions costs rank * extents, not the number of
// placements; the first kListed + 1 are spelled out.
struct Tier {
  int64_t count = 0;  // capped at 2
  std::vector<std::vector<size_t>> first;
};

Tier placements(const std::vector<std::vector<bool>>& allowed, size_t rank) {
  size_t k = allowed.size();
  std::vector<std::vector<int64_t>> ways(k + 1, std::vector<int64_t>(rank + 1, 0));
  for (size_t d = 0; d <= rank; ++d) ways[k][d] = 1;
  for (size_t i = k; i-- > 0;)
    for (size_t d = rank; d-- > 0;)
      ways[i][d] = std::min<int64_t>(2, ways[i][d + 1] + (allowed[i][d] ? ways[i + 1][d + 1] : 0));
  Tier t;
  t.count = ways[0][0];
  std::vector<size_t> dims;
  auto walk = [&](auto&& self, size_t i, size_t from) -> void {
    if (t.first.size() > kListed) return;
    if (i == k) {
      t.first.push_back(dims);
      return;
    }
    for (size_t d = from; d < rank; ++d) {
      if (!allowed[i][d] || ways[i + 1][d + 1] == 0) continue;
      dims.push_back(d);
      self(self, i + 1, d + 1);
      dims.pop_back();
    }
  };
  if (t.count > 0) walk(walk, 0, 0);
  return t;
}

}  // namespace

PointPlacement placePoint(const ir::Buffer& buffer, const std::vector<ir::Expr>& mins,
                          const std::vector<ir::Expr>& tile, SourceLoc loc) {
  PointPlacement out;
  size_t rank = mins.size();
  // A tile of the point's rank maps dimension by dimension, unit extents
  // included: (bm, 1) from A[i, j] is A[i:+bm, j:+1] whatever the sizes.
  if (tile.size() == rank) {
    out.extents = tile;
    return out;
  }
  std::vector<ir::Expr> ext;
  for (const ir::Expr& e : tile)
    if (!isUnit(e)) ext.push_back(e);
  if (ext.size() > rank) {
    out.outcome = PointPlacement::Outcome::TooFewDims;
    return out;
  }
  // Whether a dimension can hold an extent is not asked: it would make the
  // region of a point depend on whether a size is a constant (`-D N=5`) or
  // known only at run time, and edge tiles larger than the tensor are masked.
  std::vector<std::vector<bool>> aligned(ext.size(), std::vector<bool>(rank)), any = aligned;
  for (size_t i = 0; i < ext.size(); ++i)
    for (size_t d = 0; d < rank; ++d) {
      aligned[i][d] = provablyMultipleOf(mins[d], ext[i]);
      any[i][d] = true;
    }
  auto extentsOf = [&](const std::vector<size_t>& dims) {
    std::vector<ir::Expr> r(rank, ir::makeInt(1, DType::Int32, loc));
    for (size_t i = 0; i < dims.size(); ++i) r[dims[i]] = ext[i];
    return r;
  };
  // The deciding tier: the first with a placement (the last has them all).
  const std::vector<std::vector<bool>>* tier = &aligned;
  Tier t = placements(aligned, rank);
  if (t.count == 0) {
    tier = &any;
    t = placements(any, rank);
  }
  // The trailing placement (the tile on the point's last dimensions) wins when the tier has it.
  std::vector<size_t> trailing;
  bool trailingInTier = true;
  for (size_t i = 0; i < ext.size(); ++i) {
    trailing.push_back(rank - ext.size() + i);
    trailingInTier = trailingInTier && (*tier)[i][trailing.back()];
  }
  if (trailingInTier || t.count == 1) {
    out.extents = extentsOf(trailingInTier ? trailing : t.first.front());
    return out;
  }
  out.outcome = PointPlacement::Outcome::Ambiguous;
  out.moreCandidates = t.first.size() > kListed;
  t.first.resize(std::min(t.first.size(), kListed));
  for (const auto& dims : t.first) out.candidates.push_back(extentsOf(dims));
  return out;
}

std::string formatSlice(const ir::Buffer& buffer, const std::vector<ir::Expr>& mins,
                        const std::vector<ir::Expr>& extents) {
  std::string s = buffer->name + "[";
  for (size_t d = 0; d < mins.size(); ++d) {
    if (d) s += ", ";
    s += formatExpr(mins[d]);
    if (!isUnit(extents[d])) {
      const ir::Expr& lo = mins[d];
      s += ":" + formatExpr(foldBinary(ir::BinaryOp::Add, lo, foldCast(lo->dtype, extents[d], lo->loc), lo->loc));
    }
  }
  return s + "]";
}

}  // namespace tlc::sema
