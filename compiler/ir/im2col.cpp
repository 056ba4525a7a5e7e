#include "compiler/ir/im2col.h"

#include "compiler/ir/equality.h"
#include "compiler/ir/substitute.h"

namespace tlc::ir {

std::vector<int64_t> Im2colGeometry::attribute() const {
  return {kernel[0], kernel[1], stride[0], stride[1], pad[0], pad[1], dilation[0], dilation[1]};
}

bool validIm2colAttribute(const std::vector<int64_t>& a) {
  if (a.size() != 8) return false;
  for (int i : {0, 1, 2, 3, 6, 7})
    if (a[i] < 1) return false;
  return a[4] >= 0 && a[5] >= 0;
}

std::optional<Im2colGeometry> Im2colGeometry::fromAttribute(const std::vector<int64_t>& a) {
  if (!validIm2colAttribute(a)) return std::nullopt;
  Im2colGeometry g;
  g.kernel = {a[0], a[1]};
  g.stride = {a[2], a[3]};
  g.pad = {a[4], a[5]};
  g.dilation = {a[6], a[7]};
  return g;
}

namespace {

Expr lit(int64_t v) { return makeInt(v, DType::Int32); }

// The value of element (i, j) of the tile (see im2col.h), built the same
// way for the nest and for the test that a nest is one.
Expr im2colValue(const Buffer& x, DType tileType, const Expr& nhwStep, const Expr& cStep, const Im2colGeometry& g,
                 int64_t rows, int64_t cols, const Expr& i, const Expr& j) {
  const Expr &N = x->shape[0], &H = x->shape[1], &W = x->shape[2], &C = x->shape[3];
  Expr OH = im2colOutputExtent(H, g, 0), OW = im2colOutputExtent(W, g, 1);
  Expr m = add(mul(nhwStep, lit(rows)), i), k = add(mul(cStep, lit(cols)), j);
  Expr pixels = mul(OH, OW);
  Expr n = floorDiv(m, pixels), oh = floorDiv(floorMod(m, pixels), OW), ow = floorMod(m, OW);
  Expr tap = floorDiv(k, C), c = floorMod(k, C);
  Expr kh = floorDiv(tap, lit(g.kernel[1])), kw = floorMod(tap, lit(g.kernel[1]));
  Expr ih = add(sub(mul(oh, lit(g.stride[0])), lit(g.pad[0])), mul(kh, lit(g.dilation[0])));
  Expr iw = add(sub(mul(ow, lit(g.stride[1])), lit(g.pad[1])), mul(kw, lit(g.dilation[1])));
  Expr inside = logicalAnd(lt(m, mul(N, pixels)), lt(k, mul(lit(g.kernel[0] * g.kernel[1]), C)));
  inside = logicalAnd(inside, logicalAnd(lt(lit(-1), ih), lt(ih, H)));
  inside = logicalAnd(inside, logicalAnd(lt(lit(-1), iw), lt(iw, W)));
  return makeSelect(inside, makeCast(tileType, makeLoad(x, {n, ih, iw, c})), makeCast(tileType, lit(0)));
}

// `step` from `e` = step * factor + v (as add and mul build it).
Expr stepOf(const Expr& e, const VarNode* v, int64_t factor) {
  auto* sum = as<Binary>(e);
  if (!sum || sum->op != BinaryOp::Add) return nullptr;
  auto* r = as<VarRef>(sum->b);
  if (!r || r->var.get() != v) return nullptr;
  if (factor == 1) return sum->a;
  auto* prod = as<Binary>(sum->a);
  int64_t f = 0;
  if (!prod || prod->op != BinaryOp::Mul || !constInt(prod->b, &f) || f != factor) return nullptr;
  return prod->a;
}

}  // namespace

Expr im2colOutputExtent(const Expr& in, const Im2colGeometry& g, int axis) {
  Expr span = lit(g.dilation[axis] * (g.kernel[axis] - 1) + 1);
  return add(floorDiv(sub(add(in, lit(2 * g.pad[axis])), span), lit(g.stride[axis])), lit(1));
}

Stmt im2colNest(const Buffer& x, const Buffer& tile, const Expr& nhwStep, const Expr& cStep, const Im2colGeometry& g,
                SourceLoc loc) {
  int64_t rows = 0, cols = 0;
  constInt(tile->shape[0], &rows);
  constInt(tile->shape[1], &cols);
  Var i = makeVar("i", DType::Int32, loc), j = makeVar("j", DType::Int32, loc);
  Expr value = im2colValue(x, tile->dtype, nhwStep, cStep, g, rows, cols, makeVarRef(i), makeVarRef(j));
  Stmt store = std::make_shared<StoreStmt>(tile, std::vector<Expr>{makeVarRef(i), makeVarRef(j)}, value, loc);
  Stmt inner = std::make_shared<ForStmt>(j, lit(0), lit(cols), ForKind::Parallel, store, loc);
  auto outer = std::make_shared<ForStmt>(i, lit(0), lit(rows), ForKind::Parallel, inner, loc);
  outer->im2col = g.attribute();
  return outer;
}

std::optional<Im2colMatch> matchIm2col(const GatherNest& g) {
  auto geometry = Im2colGeometry::fromAttribute(g.outer->im2col);
  if (!geometry || g.loops.size() != 2 || !g.store) return std::nullopt;
  const Buffer& tile = g.store->buffer;
  int64_t rows = 0, cols = 0;
  if (tile->shape.size() != 2 || !constInt(tile->shape[0], &rows) || !constInt(tile->shape[1], &cols))
    return std::nullopt;
  VarMap lets;
  for (const LetStmt* l : g.lets) lets[l->var.get()] = substitute(l->value, lets);
  Expr value = substitute(g.store->value, lets);
  auto* sel = as<Select>(value);
  Expr loaded = sel ? sel->t : nullptr;
  if (auto* c = as<Cast>(loaded)) loaded = c->value;
  auto* load = as<Load>(loaded);
  if (!load || load->indices.size() != 4 || load->buffer->scope != MemScope::Global) return std::nullopt;
  // m and k from the load's n = m // (OH OW) (m itself when OH OW is 1) and c = k % C.
  Expr m = load->indices[0], k = load->indices[3];
  if (auto* d = as<Binary>(m); d && d->op == BinaryOp::FloorDiv) m = d->a;
  auto* mod = as<Binary>(k);
  if (!mod || mod->op != BinaryOp::FloorMod) return std::nullopt;
  k = mod->a;
  Im2colMatch r;
  r.nhwStep = stepOf(m, g.loops[0]->var.get(), rows);
  r.cStep = stepOf(k, g.loops[1]->var.get(), cols);
  if (!r.nhwStep || !r.cStep) return std::nullopt;
  Expr expected = im2colValue(load->buffer, tile->dtype, r.nhwStep, r.cStep, *geometry, rows, cols,
                              makeVarRef(g.loops[0]->var), makeVarRef(g.loops[1]->var));
  if (!structurallyEqual(value, expected)) return std::nullopt;
  r.x = load->buffer.get();
  r.tile = tile.get();
  r.geometry = *geometry;
  r.rows = rows;
  r.cols = cols;
  r.loc = g.outer->loc;
  return r;
}

}  // namespace tlc::ir
