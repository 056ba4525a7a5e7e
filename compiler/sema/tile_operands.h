// Operands of tile operations in the front end: buffers and regions as
// sema Values, their extents and the IR regions they name, shared by the
// files lowering tile operations (lower_tileops.cpp, lower_atomics.cpp) and
// the reducers.
#pragma once

#include <string>
#include <vector>

#include "compiler/sema/const_eval.h"
#include "compiler/sema/value.h"
#include "compiler/support/diagnostics.h"

namespace tlc::sema {

inline std::string quoted(const std::string& s) { return "`" + s + "`"; }

inline void declaredHere(Diagnostic& d, const ir::Buffer& b) {
  d.note(b->loc, quoted(b->name) + " declared here as a " + ir::memScopeName(b->scope) + " buffer with shape " +
                     formatShape(b->shape));
}

inline const ir::Buffer& bufferOf(const Value& v) { return v.kind == ValueKind::Buffer ? v.buffer : v.region.buffer; }

// Extents of an operand; null entries for a point access.
inline std::vector<ir::Expr> extentsOf(const Value& v) {
  if (v.kind == ValueKind::Buffer) return v.buffer->shape;
  return v.region.extents;
}

inline bool isPoint(const Value& v) { return v.kind == ValueKind::Region && v.region.isPoint; }

inline bool isUnit(const ir::Expr& e) {
  auto c = constIntValue(e);
  return c && *c == 1;
}

inline std::vector<ir::Expr> dropUnitDims(const std::vector<ir::Expr>& ext) {
  std::vector<ir::Expr> out;
  for (const ir::Expr& e : ext)
    if (!isUnit(e)) out.push_back(e);
  return out;
}

inline ir::Region makeRegion(const Value& v, const std::vector<ir::Expr>& extents, SourceLoc loc) {
  ir::Region r{bufferOf(v), {}, loc};
  if (v.kind == ValueKind::Buffer) {
    for (const ir::Expr& e : v.buffer->shape) r.ranges.push_back({ir::makeInt(0, e->dtype, loc), e});
    return r;
  }
  for (size_t d = 0; d < extents.size(); ++d) r.ranges.push_back({v.region.mins[d], extents[d]});
  return r;
}

// Both shapes agree once unit dimensions are dropped.
inline bool shapesAgree(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  std::vector<ir::Expr> x = dropUnitDims(a), y = dropUnitDims(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (compareExtents(x[i], y[i]) != Equality::Equal) return false;
  return true;
}

}  // namespace tlc::sema
