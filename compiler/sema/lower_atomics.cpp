// The atomics: `T.atomic_add` / `T.atomic_max` / `T.atomic_min` of an
// element or of a tile's elements, TileLang's paired `T.atomic_addx2` /
// `T.atomic_addx4`, and `return_prev=True`, which gives an element's value
// before the update.
#include "compiler/sema/const_eval.h"
#include "compiler/sema/point_region.h"
#include "compiler/sema/sema.h"
#include "compiler/sema/tile_operands.h"

namespace tlc::sema {

// The element types every target updates atomically (CUDA has no atomics on
// 8- or 16-bit integers, none of the targets on float8 or bool).
static bool atomicDType(DType t) {
  switch (t) {
    case DType::Int32: case DType::UInt32: case DType::Int64: case DType::UInt64:
    case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Float64: return true;
    default: return false;
  }
}

// `T.atomic_add(dst[i, ...], value)` updates one element. With a tile as
// the value (a buffer or a slice), `T.atomic_add(C[by * 64, bx * 64], C_s)`
// or `T.atomic_add(C[a:b, c:d], C_s)`, it updates the region of the tile's
// shape (a point takes its extents from the tile, as for `T.copy`) element
// by element: a Parallel loop over the region, each element's update atomic
// on its own, masked where the region runs past a global tensor's edge.
// `return_prev=True` on an element update (`valued`) gives the element's
// value before the update, stored by the atomic into a fresh thread-local
// variable.
Value Sema::lowerAtomic(const BuiltinInfo& b, const CallArgs& args, SourceLoc loc, bool valued) {
  std::string fname = std::string("T.") + b.name;
  const Value none = Value::error(loc);  // (the statement form ignores the result)
  std::optional<bool> returnPrev = false;
  if (args.slots.size() > 3 && args.slots[3]) returnPrev = constBool(*args.slots[3], "`return_prev`");
  if (!returnPrev) return none;
  if (valued && !*returnPrev) {
    report(DiagKind::MisusedBuiltin, loc,
           "`" + fname + "` has a value only with `return_prev=True`: `old = " + fname + "(dst[i], v, return_prev=True)`");
    return none;
  }
  Value dst = evalTileArg(*args.slots[0], b.name);
  if (dst.isError()) return none;
  const ast::Expr& valueArg = *args.slots[1];
  bool sliced = false;
  if (valueArg.kind == ast::ExprKind::Subscript)
    for (size_t i = 1; i < valueArg.operands.size(); ++i) {
      const ast::Expr* x = valueArg.operands[i].get();
      if (x && x->kind == ast::ExprKind::Tuple)
        for (const auto& y : x->operands) sliced |= y && y->kind == ast::ExprKind::Slice;
      sliced |= x && x->kind == ast::ExprKind::Slice;
    }
  bool paired = b.id == BuiltinId::AtomicAddX2 || b.id == BuiltinId::AtomicAddX4;
  bool pairedElement = paired && valueArg.kind == ast::ExprKind::Subscript;
  Value v = sliced || pairedElement ? evalTileArg(valueArg, b.name) : eval(valueArg);
  if (v.isError()) return none;
  bool tile = v.kind == ValueKind::Buffer || (v.kind == ValueKind::Region && !isPoint(v));
  if (!tile && !isPoint(dst)) {
    report(DiagKind::TypeMismatch, dst.loc,
           "`" + fname + "` with a single value updates one element: write its first argument as `dst[i, j]`, or "
           "give a tile (a buffer or a slice) as the value to update a region");
    return none;
  }
  const ir::Buffer& buf = bufferOf(dst);
  if (buf->scope != ir::MemScope::Global && buf->scope != ir::MemScope::Shared) {
    Diagnostic& d = report(DiagKind::ScopeViolation, dst.loc,
                           "`" + fname + "` works on global or shared memory, but " + quoted(buf->name) + " is a " +
                               ir::memScopeName(buf->scope) + " buffer");
    declaredHere(d, buf);
    return none;
  }
  if (args.slots.size() > 2 && args.slots[2] && !checkMemoryOrder(fname, *args.slots[2])) return none;
  if (!atomicDType(buf->dtype)) {
    Diagnostic& d = report(DiagKind::TypeMismatch, dst.loc,
                           "`" + fname + "` updates int32, uint32, int64, uint64, float16, bfloat16, float32 or "
                           "float64 elements, but " + quoted(buf->name) + " is " + std::string(dtypeName(buf->dtype)));
    declaredHere(d, buf);
    return none;
  }
  ir::AtomicKind k = b.id == BuiltinId::AtomicMax   ? ir::AtomicKind::Max
                     : b.id == BuiltinId::AtomicMin ? ir::AtomicKind::Min
                                                    : ir::AtomicKind::Add;
  if (paired) {
    // TileLang's paired forms: `T.atomic_addx2(C[i, 2 * j], C_s[i, 2 * j])`
    // adds the value's element and the next one (three more for x4) into
    // the destination's, along the last dimension: one atomic update per
    // element, as `T.atomic_add` of each.
    int lanes = b.id == BuiltinId::AtomicAddX2 ? 2 : 4;
    if (!isPoint(dst) || !isPoint(v)) {
      report(DiagKind::TypeMismatch, isPoint(dst) ? v.loc : dst.loc,
             "`" + fname + "` adds " + std::to_string(lanes) + " consecutive elements: write both arguments as "
             "elements, `" + fname + "(C[i, j], C_s[i, j])`");
      return none;
    }
    for (int l = 0; l < lanes; ++l) {
      std::vector<ir::Expr> di = dst.region.mins, vi = v.region.mins;
      di.back() = foldBinary(ir::BinaryOp::Add, di.back(), ir::makeInt(l, di.back()->dtype, loc), loc);
      vi.back() = foldBinary(ir::BinaryOp::Add, vi.back(), ir::makeInt(l, vi.back()->dtype, loc), loc);
      ir::Expr value = convert(Value::ofExpr(ir::makeLoad(bufferOf(v), vi, loc), loc), buf->dtype, loc);
      builder_->emit(std::make_shared<const ir::AtomicStmt>(k, buf, di, value, loc));
    }
    return none;
  }
  if (!tile) {
    if (!expectScalar(v, "the value of `" + fname + "`")) return none;
    ir::Expr value = convert(v, buf->dtype, valueArg.loc);
    if (!valued) {
      builder_->emit(std::make_shared<const ir::AtomicStmt>(k, buf, dst.region.mins, value, loc));
      return none;
    }
    if (!parallelLoc_.known() && !threadVar_) {
      report(DiagKind::ScopeViolation, loc,
             "`" + fname + "(..., return_prev=True)` outside a `T.Parallel` loop: there the update runs once for the "
             "whole block, and its previous value is no thread's; update inside a `T.Parallel` loop or in per-thread "
             "code (after `T.get_thread_binding()`)");
      return none;
    }
    ir::Buffer prev = ir::makeBuffer(uniqueName(buf->name + "_prev"), buf->dtype, {ir::makeInt(1, DType::Int32, loc)},
                                     ir::MemScope::Var, loc);
    std::vector<ir::Expr> at{ir::makeInt(0, DType::Int32, loc)};
    builder_->emit(std::make_shared<const ir::AllocStmt>(prev, loc));
    builder_->emit(std::make_shared<const ir::AtomicStmt>(k, buf, dst.region.mins, value, loc, prev, at));
    return Value::ofExpr(ir::makeLoad(prev, at, loc), loc);
  }
  if (valued) {
    report(DiagKind::MisusedBuiltin, loc,
           "`" + fname + "(..., return_prev=True)` updates one element and gives its previous value; a tile's "
           "update has no single previous value: write the destination as `dst[i, j]` and the value as a scalar");
    return none;
  }
  if (!outsideParallel(fname, loc)) return none;
  std::vector<ir::Expr> ve = extentsOf(v), de = extentsOf(dst);
  if (isPoint(dst)) {
    auto extents = pointExtents(dst, ve, loc);
    if (!extents) return none;
    de = *extents;
  }
  if (!shapesAgree(de, ve)) {
    Diagnostic& d = report(DiagKind::ShapeMismatch, loc,
                           "`" + fname + "` adds a tile of shape " + formatShape(ve) + " into a region of shape " +
                               formatShape(de) + " of " + quoted(buf->name) + "; the shapes must agree (unit "
                               "dimensions aside)");
    declaredHere(d, buf);
    return none;
  }
  ir::Region dr = makeRegion(dst, de, args.slots[0]->loc), vr = makeRegion(v, ve, valueArg.loc);
  // One Parallel variable per non-unit dimension, shared by the two regions in order.
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> extents;
  for (const ir::Expr& e : dropUnitDims(de)) {
    vars.push_back(freshVar("i", DType::Int32, loc));
    extents.push_back(e);
  }
  // The element of `r` at the loop variables, and the conditions that keep it
  // inside a global tensor.
  std::vector<ir::Expr> inside;
  auto element = [&](const ir::Region& r) {
    std::vector<ir::Expr> idx;
    size_t next = 0;
    for (size_t d = 0; d < r.ranges.size(); ++d) {
      const auto& [lo, ext] = r.ranges[d];
      if (isUnit(ext)) {
        idx.push_back(lo);
        continue;
      }
      ir::Expr i = foldBinary(ir::BinaryOp::Add, lo, foldCast(lo->dtype, ir::makeVarRef(vars[next++], loc), loc), loc);
      idx.push_back(i);
      if (r.buffer->scope != ir::MemScope::Global) continue;
      const ir::Expr& size = r.buffer->shape[d];
      ir::Expr fits = foldBinary(ir::BinaryOp::Le, foldBinary(ir::BinaryOp::Add, lo, foldCast(lo->dtype, ext, loc), loc),
                                 foldCast(lo->dtype, size, loc), loc);
      if (auto c = constIntValue(fits); c && *c) continue;
      inside.push_back(foldBinary(ir::BinaryOp::Lt, i, foldCast(i->dtype, size, loc), loc));
    }
    return idx;
  };
  std::vector<ir::Expr> di = element(dr), vi = element(vr);
  ir::Expr value = convert(Value::ofExpr(ir::makeLoad(vr.buffer, vi, loc), loc), buf->dtype, loc);
  ir::Stmt body = std::make_shared<const ir::AtomicStmt>(k, buf, di, value, loc);
  ir::Expr guard;
  for (const ir::Expr& c : inside) guard = guard ? foldBinary(ir::BinaryOp::And, guard, c, loc) : c;
  if (guard) body = std::make_shared<const ir::IfStmt>(guard, body, nullptr, loc);
  for (size_t d = vars.size(); d-- > 0;)
    body = std::make_shared<const ir::ForStmt>(vars[d], ir::makeInt(0, DType::Int32, loc),
                                               foldCast(DType::Int32, extents[d], loc), ir::ForKind::Parallel, body, loc);
  builder_->emit(body);
  return none;
}

// `old = T.atomic_add(dst[i], v, return_prev=True)`: the atomic, and its
// previous value.
Value Sema::lowerAtomicValue(const BuiltinInfo& b, const ast::Expr& call) {
  std::string fname = std::string("T.") + b.name;
  if (!requireKernel(call.loc, quoted(fname))) return Value::error(call.loc);
  CallArgs args;
  if (!matchArgs(call, fname, b.params, b.required, b.variadic, args)) return Value::error(call.loc);
  return lowerAtomic(b, args, call.loc, true);
}

}  // namespace tlc::sema
