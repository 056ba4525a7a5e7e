// T.c2d_im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad):
// fills the shared tile `col` ([BM, BK]) with rows nhw_step * BM ..
// and columns c_step * BK .. of the im2col matrix of the NHWC tensor
// `img` (ir/im2col.h). kernel, stride, dilation and pad are compile-time
// integers, or (h, w) pairs of them. It lowers to the Parallel gather nest
// any target runs; on sm_90a the CUDA backend loads that nest's tile by TMA
// in im2col mode where it can (docs/builtins.md).
#include "compiler/ir/im2col.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"
#include "compiler/sema/tile_operands.h"

namespace tlc::sema {

namespace {
const char* const kAxisNames[] = {"kernel", "stride", "dilation", "pad"};
}

void Sema::lowerIm2col(const ast::Expr& call, const CallArgs& args) {
  SourceLoc loc = call.loc;
  const std::string fname = "T.c2d_im2col";
  Value img = evalTileArg(*args.slots[0], "c2d_im2col");
  Value col = evalTileArg(*args.slots[1], "c2d_im2col");
  if (img.isError() || col.isError() || !outsideParallel(fname, loc)) return;
  if (img.kind != ValueKind::Buffer || img.buffer->scope != ir::MemScope::Global || img.buffer->shape.size() != 4) {
    report(DiagKind::ScopeViolation, img.loc,
           "the image of `" + fname + "` is a whole (N, H, W, C) tensor parameter, but this is " + describeValue(img));
    return;
  }
  int64_t rows = 0, cols = 0;
  const ir::Buffer& tile = col.kind == ValueKind::Buffer ? col.buffer : nullptr;
  if (!tile || tile->scope != ir::MemScope::Shared || tile->shape.size() != 2 ||
      !ir::constInt(tile->shape[0], &rows) || !ir::constInt(tile->shape[1], &cols)) {
    report(DiagKind::ScopeViolation, col.loc,
           "the tile of `" + fname + "` is a whole two-dimensional shared buffer of constant shape (pixels x "
           "columns), but this is " + describeValue(col));
    return;
  }
  if (tile->dtype != img.buffer->dtype) {
    report(DiagKind::TypeMismatch, col.loc,
           "`" + fname + "` copies without converting: the tile " + quoted(tile->name) + " is " +
               std::string(dtypeName(tile->dtype)) + " but the image " + quoted(img.buffer->name) + " is " +
               std::string(dtypeName(img.buffer->dtype)));
    return;
  }
  ir::Expr steps[2];
  for (int s = 0; s < 2; ++s) {
    steps[s] = expectInt(eval(*args.slots[2 + s]), s ? "the column step `c_step`" : "the row step `nhw_step`");
    if (!steps[s]) return;
    steps[s] = convert(Value::ofExpr(steps[s], args.slots[2 + s]->loc), DType::Int32, args.slots[2 + s]->loc);
  }
  // kernel, stride, dilation, pad: an integer for both axes or an (h, w) pair.
  int64_t geo[4][2];
  for (int a = 0; a < 4; ++a) {
    const ast::Expr* e = args.slots[4 + a];
    const std::string what = std::string("the ") + kAxisNames[a] + " of `" + fname + "`";
    Value v = eval(*e);
    if (v.isError()) return;
    std::vector<ir::Expr> parts;
    if (v.kind == ValueKind::Tuple && v.elems.size() == 2) {
      for (const Value& x : v.elems) parts.push_back(expectInt(x, what));
    } else if (v.kind == ValueKind::Tuple) {
      report(DiagKind::TypeMismatch, e->loc, what + " is an integer or an (h, w) pair, not " + describeValue(v));
      return;
    } else {
      ir::Expr x = expectInt(v, what);
      parts = {x, x};
    }
    for (int k = 0; k < 2; ++k) {
      if (!parts[k]) return;
      auto c = constIntValue(parts[k]);
      if (!c) {
        report(DiagKind::NotCompileTimeConstant, e->loc,
               what + " must be a compile-time constant, but `" + formatExpr(parts[k]) + "` is only known at run time");
        return;
      }
      int64_t lo = a == 3 ? 0 : 1;
      if (*c < lo || *c > 1024) {
        report(DiagKind::OutOfRange, e->loc,
               what + " must lie in " + std::to_string(lo) + "..1024, but it is " + std::to_string(*c));
        return;
      }
      geo[a][k] = *c;
    }
  }
  ir::Im2colGeometry g;
  g.kernel = {geo[0][0], geo[0][1]};
  g.stride = {geo[1][0], geo[1][1]};
  g.dilation = {geo[2][0], geo[2][1]};
  g.pad = {geo[3][0], geo[3][1]};
  // An image smaller than the dilated filter has no output pixels.
  for (int axis = 0; axis < 2; ++axis) {
    auto out = constIntValue(ir::im2colOutputExtent(img.buffer->shape[1 + axis], g, axis));
    if (out && *out < 1) {
      report(DiagKind::ShapeMismatch, loc,
             std::string("the image ") + quoted(img.buffer->name) + " is " + (axis ? "narrower" : "shorter") +
                 " than the dilated filter with its padding: the convolution has no output " +
                 (axis ? "columns" : "rows"));
      return;
    }
  }
  builder_->emit(ir::im2colNest(img.buffer, tile, steps[0], steps[1], g, loc));
}

}  // namespace tlc::sema
