// Tile operations and allocations: T.alloc_*, T.copy, T.gemm, T.fill,
// T.clear, T.reduce_* (T.atomic_*: lower_atomics.cpp; T.annotate_layout:
// lower_layout.cpp).
//
// Operands are buffers or regions. A point `A[i, j]` of `T.copy` names a
// region that starts at (i, j) and takes its extents from the other operand
// (placePoint, point_region.h); the other tile operations take whole
// buffers or slices, and the atomics one element. Shapes are compared after
// dropping unit dimensions, symbolically: extents must be provably equal.
#include "compiler/sema/const_eval.h"
#include "compiler/sema/point_region.h"
#include "compiler/sema/sema.h"
#include "compiler/sema/tile_operands.h"

namespace tlc::sema {


Value Sema::lowerAlloc(const BuiltinInfo& b, const ast::Expr& call, const std::string& name, SourceLoc nameLoc) {
  std::string fname = std::string("T.") + b.name;
  if (!requireKernel(call.loc, quoted(fname))) return Value::error(nameLoc);
  CallArgs args;
  if (!matchArgs(call, fname, b.params, b.required, b.variadic, args)) return Value::error(nameLoc);
  if (b.id == BuiltinId::AllocVar) {
    auto dt = evalDType(*args.slots[0], "the dtype of `T.alloc_var`");
    if (!dt) return Value::error(nameLoc);
    ir::Expr init;
    if (args.slots[1]) {
      Value v = eval(*args.slots[1]);
      if (!expectScalar(v, "the initial value of `" + name + "`")) return Value::error(nameLoc);
      init = convert(v, *dt, args.slots[1]->loc);
    }
    ir::Buffer buf = ir::makeBuffer(uniqueName(name), *dt, {ir::makeInt(1, DType::Int32, call.loc)},
                                    ir::MemScope::Var, nameLoc);
    builder_->emit(std::make_shared<const ir::AllocStmt>(buf, call.loc));
    if (inKernel_ && !threadVar_) blockPrivate_.push_back(buf);
    if (init)
      builder_->emit(std::make_shared<const ir::StoreStmt>(
          buf, std::vector<ir::Expr>{ir::makeInt(0, DType::Int32, call.loc)}, init, call.loc));
    return Value::ofBuffer(buf, nameLoc);
  }
  std::optional<ir::ReduceKind> reducer;
  if (b.id == BuiltinId::AllocReducer) {
    reducer = reducerOp(args.slots[2], args.slots[3]);
    if (!reducer) return Value::error(nameLoc);
  } else if (!checkAllocScope(b, args.slots[2])) {
    return Value::error(nameLoc);
  }
  Value shapeValue = eval(*args.slots[0]);
  std::vector<Value> dims;
  if (shapeValue.kind == ValueKind::Tuple)
    dims = shapeValue.elems;
  else if (!shapeValue.isError())
    dims.push_back(shapeValue);
  if (shapeValue.isError()) return Value::error(nameLoc);
  if (dims.empty()) {
    report(DiagKind::ShapeMismatch, args.slots[0]->loc, "a buffer needs at least one dimension");
    return Value::error(nameLoc);
  }
  std::vector<ir::Expr> shape;
  for (const Value& d : dims) {
    ir::Expr x = expectInt(d, "a buffer dimension");
    if (!x) return Value::error(nameLoc);
    auto c = constIntValue(x);
    if (!c) {
      report(DiagKind::NotCompileTimeConstant, d.loc,
             "the shape of " + quoted(name) + " must be a compile-time constant, but `" + formatExpr(x) +
                 "` is only known at run time");
      return Value::error(nameLoc);
    }
    if (*c < 1) {
      report(DiagKind::ShapeMismatch, d.loc, "buffer dimensions must be positive, but this one is " + std::to_string(*c));
      return Value::error(nameLoc);
    }
    if (!checkInt32Extent(*c, d.loc, "the buffer dimension")) return Value::error(nameLoc);
    shape.push_back(ir::makeInt(*c, DType::Int32, d.loc));
  }
  auto dt = evalDType(*args.slots[1], "the dtype of " + quoted(name));
  if (!dt) return Value::error(nameLoc);
  bool localFragment = false;  // `T.alloc_fragment(shape, dtype, "local")`: T.alloc_local
  if (b.id == BuiltinId::AllocFragment && args.slots[2]) {
    Value s = eval(*args.slots[2]);
    localFragment = s.kind == ValueKind::String && s.str == "local";
  }
  ir::MemScope scope = b.id == BuiltinId::AllocShared                                 ? ir::MemScope::Shared
                       : (b.id == BuiltinId::AllocFragment && !localFragment) || reducer ? ir::MemScope::Fragment
                                                                                      : ir::MemScope::Local;
  ir::Buffer buf = ir::makeBuffer(uniqueName(name), *dt, shape, scope, nameLoc);
  builder_->emit(std::make_shared<const ir::AllocStmt>(buf, call.loc));
  if (reducer) reducers_[buf.get()] = *reducer;
  if (scope == ir::MemScope::Local && inKernel_ && !threadVar_) blockPrivate_.push_back(buf);
  return Value::ofBuffer(buf, nameLoc);
}

// Tile operations on more than one element run once for the whole block; a
// `T.Parallel` body runs once per element, so they cannot be inside one.
bool Sema::outsideParallel(const std::string& op, SourceLoc loc) {
  if (!parallelLoc_.known()) return true;
  if (threadVar_) {  // the per-thread code is the outermost Parallel loop
    report(DiagKind::ScopeViolation, loc,
           "`" + op + "` works on whole tiles, but the statements after `T.get_thread_binding()` run once per "
           "thread; move it before the binding")
        .note(perThreadLoc_, "per-thread code starts here");
    return false;
  }
  report(DiagKind::ScopeViolation, loc,
         "`" + op + "` works on whole tiles and cannot be inside a `T.Parallel` loop, whose body runs once per "
         "element; move it out of the loop")
      .note(parallelLoc_, "the `T.Parallel` loop starts here");
  return false;
}

// The extents of the point `point` from the other operand's `tile`, or none
// after an error.
std::optional<std::vector<ir::Expr>> Sema::pointExtents(const Value& point, const std::vector<ir::Expr>& tile,
                                                         SourceLoc loc) {
  const ir::Buffer& buf = bufferOf(point);
  PointPlacement p = placePoint(buf, point.region.mins, tile, loc);
  if (p.outcome == PointPlacement::Outcome::Placed) return p.extents;
  if (p.outcome == PointPlacement::Outcome::TooFewDims) {
    Diagnostic& d = report(DiagKind::CopyShapeMismatch, point.loc,
                           "the region starting at this element of " + quoted(buf->name) + " has " +
                               std::to_string(point.region.mins.size()) +
                               " dimensions, too few for the other operand's shape " + formatShape(tile));
    declaredHere(d, buf);
    return std::nullopt;
  }
  std::string list;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    if (i) list += i + 1 == p.candidates.size() && !p.moreCandidates ? " or " : ", ";
    list += quoted(formatSlice(buf, point.region.mins, p.candidates[i]));
  }
  if (p.moreCandidates) list += ", ...";
  Diagnostic& d = report(DiagKind::AmbiguousRegion, point.loc,
                         "the region starting at this element of " + quoted(buf->name) + " is ambiguous: the shape " +
                             formatShape(tile) + " can be placed as " + list +
                             ", each tile-aligned; write the slice you mean");
  declaredHere(d, buf);
  return std::nullopt;
}

// Whether `b` holds one element (every dimension a constant 1).
static bool singleElement(const ir::Buffer& b) {
  for (auto& d : b->shape) {
    auto c = constIntValue(d);
    if (!c || *c != 1) return false;
  }
  return true;
}


void Sema::lowerTileOp(const BuiltinInfo& b, const ast::Expr& call) {
  std::string fname = std::string("T.") + b.name;
  if (!requireKernel(call.loc, quoted(fname))) return;
  CallArgs args;
  if (!matchArgs(call, fname, b.params, b.required, b.variadic, args)) return;
  SourceLoc loc = call.loc;

  switch (b.id) {
    case BuiltinId::Copy: {
      if (!checkCoalescedWidth(args.slots[2])) return;
      // TileLang's `disable_tma=True`: tlc decides per copy where TMA applies (docs/language.md).
      if (args.slots[3] && !constBool(*args.slots[3], "`disable_tma`")) return;
      Value src = evalTileArg(*args.slots[0], b.name);
      Value dst = evalTileArg(*args.slots[1], b.name);
      if (src.isError() || dst.isError()) return;
      if (!(isPoint(src) && isPoint(dst)) && !outsideParallel(fname, loc)) return;
      std::vector<ir::Expr> se = extentsOf(src), de = extentsOf(dst);
      if (isPoint(src) && isPoint(dst)) {
        for (auto& e : se) e = ir::makeInt(1, DType::Int32, loc);
        for (auto& e : de) e = ir::makeInt(1, DType::Int32, loc);
        // Outside a Parallel loop two points usually mean a tile copy whose
        // extent nothing gives: it moves one element.
        if (!parallelLoc_.known() && (!singleElement(bufferOf(src)) || !singleElement(bufferOf(dst))))
          report(DiagKind::SingleElementCopy, loc,
                 "this `T.copy` moves one element: both operands are single elements (" +
                     quoted(formatSlice(bufferOf(src), src.region.mins, se)) + " and " +
                     quoted(formatSlice(bufferOf(dst), dst.region.mins, de)) +
                     "), so nothing gives the region an extent; to copy a tile, write one operand as a slice "
                     "(such as `A[y:y + 64, x:x + 128]`) or a tile buffer; to move one element, assign it");
      } else if (isPoint(src) || isPoint(dst)) {
        bool srcPoint = isPoint(src);
        auto extents = pointExtents(srcPoint ? src : dst, srcPoint ? de : se, loc);
        if (!extents) return;
        (srcPoint ? se : de) = *extents;
      }
      if (!shapesAgree(se, de)) {
        Diagnostic& d = report(DiagKind::CopyShapeMismatch, loc,
                               "`T.copy` source " + quoted(bufferOf(src)->name) + " has shape " + formatShape(se) +
                                   " but destination " + quoted(bufferOf(dst)->name) + " has shape " +
                                   formatShape(de) + "; the shapes must agree (unit dimensions aside)");
        declaredHere(d, bufferOf(src));
        if (bufferOf(dst) != bufferOf(src)) declaredHere(d, bufferOf(dst));
        return;
      }
      builder_->emit(std::make_shared<const ir::CopyStmt>(makeRegion(src, se, args.slots[0]->loc),
                                                          makeRegion(dst, de, args.slots[1]->loc), loc));
      return;
    }
    case BuiltinId::Gemm: lowerGemm(b, call, args); return;
    case BuiltinId::Cumsum: lowerCumsum(call, args); return;
    case BuiltinId::AnnotateLayout: lowerAnnotateLayout(call, args); return;
    case BuiltinId::Print: lowerPrint(call, args); return;
    case BuiltinId::C2dIm2col: lowerIm2col(call, args); return;
    case BuiltinId::UseSwizzle: {
      if (kernelSwizzleLoc_.known()) {
        report(DiagKind::MisusedBuiltin, loc, "`T.use_swizzle` is already given for this kernel")
            .note(kernelSwizzleLoc_, "first given here");
        return;
      }
      auto panel = constInt(*args.slots[0], "the swizzle panel size");
      if (!panel) return;
      if (*panel < 1) {
        report(DiagKind::MisusedBuiltin, args.slots[0]->loc,
               "the swizzle panel size must be at least 1, but it is " + std::to_string(*panel));
        return;
      }
      bool enable = true;
      if (args.slots[1]) {
        auto e = constBool(*args.slots[1], "`enable`");
        if (!e) return;
        enable = *e;
      }
      if (args.slots[2]) {
        Value o = eval(*args.slots[2]);
        if (o.isError()) return;
        if (o.kind != ValueKind::String || (o.str != "row" && o.str != "column")) {
          report(DiagKind::TypeMismatch, args.slots[2]->loc, "`order` is \"row\" or \"column\"");
          return;
        }
        if (o.str == "column")
          report(DiagKind::IgnoredHint, args.slots[2]->loc,
                 "`order=\"column\"` is ignored: blocks are grouped in panels of rows (the rasterization changes "
                 "the order blocks run in, not the result)");
      }
      kernelSwizzleLoc_ = loc;
      kernelSwizzle_ = enable ? *panel : -1;  // -1: the row order, asked for
      return;
    }
    case BuiltinId::SyncThreads:
      if (threadVar_) {
        report(DiagKind::ScopeViolation, loc,
               "`T.sync_threads()` in per-thread code is not supported: the statements after "
               "`T.get_thread_binding()` run as independent iterations, one per thread, with no barrier between "
               "them; exchange values through tile operations before the binding instead")
            .note(perThreadLoc_, "per-thread code starts here");
        return;
      }
      // Barriers are derived from the block's accesses (every statement
      // outside a Parallel loop sees the effects of the ones before it).
      report(DiagKind::IgnoredHint, loc,
             "`T.sync_threads()` is ignored: tlc places the block's barriers itself, where one statement reads what "
             "another thread wrote");
      return;
    case BuiltinId::Fill:
    case BuiltinId::Clear: {
      Value dst = evalTileArg(*args.slots[0], b.name);
      if (dst.isError()) return;
      // In per-thread code a thread fills its own local buffer element by element.
      bool own = threadVar_ && dst.kind == ValueKind::Buffer &&
                 (dst.buffer->scope == ir::MemScope::Local || dst.buffer->scope == ir::MemScope::Var);
      if (!own && !outsideParallel(fname, loc)) return;
      if (isPoint(dst)) {
        report(DiagKind::TypeMismatch, dst.loc,
               "`" + fname + "` fills a buffer or a slice such as `A[0:4, :]`, not a single element (assign it instead)");
        return;
      }
      const ir::Buffer& buf = bufferOf(dst);
      ir::Expr value;
      if (b.id == BuiltinId::Fill) {
        Value v = eval(*args.slots[1]);
        if (!expectScalar(v, "the fill value")) return;
        value = convert(v, buf->dtype, args.slots[1]->loc);
      } else {
        value = isFloat(buf->dtype) ? ir::makeFloat(0, buf->dtype, loc)
                : buf->dtype == DType::Bool ? ir::makeBool(false, loc)
                                            : ir::makeInt(0, buf->dtype, loc);
      }
      if (own) {
        std::vector<ir::Var> vars;
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < buf->shape.size(); ++d) {
          vars.push_back(freshVar("e", DType::Int32, loc));
          idx.push_back(ir::makeVarRef(vars.back(), loc));
        }
        ir::Stmt st = std::make_shared<const ir::StoreStmt>(buf, idx, value, loc);
        for (size_t d = vars.size(); d-- > 0;)
          st = std::make_shared<const ir::ForStmt>(vars[d], ir::makeInt(0, DType::Int32, loc), buf->shape[d],
                                                   ir::ForKind::Serial, st, loc);
        builder_->emit(st);
        return;
      }
      builder_->emit(std::make_shared<const ir::FillStmt>(makeRegion(dst, extentsOf(dst), args.slots[0]->loc), value, loc));
      return;
    }
    case BuiltinId::ReduceMax:
    case BuiltinId::ReduceSum:
    case BuiltinId::ReduceMin:
    case BuiltinId::ReduceAbsSum:
    case BuiltinId::ReduceAbsMax: lowerReduce(b, call, args); return;
    case BuiltinId::AtomicAdd:
    case BuiltinId::AtomicMax:
    case BuiltinId::AtomicMin:
    case BuiltinId::AtomicAddX2:
    case BuiltinId::AtomicAddX4: lowerAtomic(b, args, loc); return;  // (a previous value asked for goes unused)
    case BuiltinId::ReducerInit:
    case BuiltinId::ReducerUpdate:
    case BuiltinId::FinalizeReducer: lowerReducerOp(b, call, args); return;
    default: break;
  }
}

// Two regions of one buffer that provably share no element: in some
// dimension one ends before the other starts.
static bool provablyDisjoint(const Value& a, const Value& b) {
  if (a.kind != ValueKind::Region || b.kind != ValueKind::Region) return false;
  auto end = [](const RegionValue& r, size_t d) {
    const ir::Expr& lo = r.mins[d];
    return foldBinary(ir::BinaryOp::Add, lo, foldCast(lo->dtype, r.extents[d], lo->loc), lo->loc);
  };
  for (size_t d = 0; d < a.region.mins.size(); ++d) {
    auto gapAB = constantDifference(b.region.mins[d], end(a.region, d));
    auto gapBA = constantDifference(a.region.mins[d], end(b.region, d));
    if ((gapAB && *gapAB >= 0) || (gapBA && *gapBA >= 0)) return true;
  }
  return false;
}

void Sema::lowerGemm(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args) {
  Value ops[3];
  bool ok = true;
  for (int i = 0; i < 3; ++i) {
    ops[i] = evalTileArg(*args.slots[i], "gemm");
    if (ops[i].isError()) ok = false;
  }
  if (!ok || !outsideParallel("T.gemm", call.loc)) return;
  if (!checkWarpPolicy(args.slots[6])) return;
  // TileLang's `k_pack` (operand packing of AMD's MFMA) and `wg_wait` (how
  // many wgmma groups stay in flight after the call) are the compiler's own
  // choices here: the defaults are accepted, other values noted.
  for (int k : {7, 8}) {
    if (!args.slots[k]) continue;
    auto v = constInt(*args.slots[k], std::string("`") + b.params[k] + "`");
    if (!v) return;
    if (*v != (k == 7 ? 1 : 0))
      report(DiagKind::IgnoredHint, args.slots[k]->loc,
             std::string("`") + b.params[k] + "=" + std::to_string(*v) +
                 "` is ignored: tlc chooses the tensor-core instructions' operand packing and keeps wgmma groups in "
                 "flight as far as the code after the gemm allows");
  }
  bool tA = false, tB = false, clear = false;
  for (int k = 3; k < 6; ++k) {
    if (!args.slots[k]) continue;
    auto v = constBool(*args.slots[k], std::string("`") + b.params[k] + "`");
    if (!v) return;
    (k == 3 ? tA : k == 4 ? tB : clear) = *v;
  }
  static const char* kRole[] = {"A", "B", "C"};
  std::vector<ir::Expr> mats[3];
  for (int i = 0; i < 3; ++i) {
    const ir::Buffer& buf = bufferOf(ops[i]);
    if (isPoint(ops[i])) {
      report(DiagKind::TypeMismatch, ops[i].loc,
             std::string("gemm operand ") + kRole[i] + " must be a buffer or a slice, not a single element");
      return;
    }
    ir::MemScope s = buf->scope;
    if (i == 2 && s != ir::MemScope::Fragment && s != ir::MemScope::Local) {
      Diagnostic& d = report(DiagKind::ScopeViolation, ops[i].loc,
                             "the gemm accumulator " + quoted(buf->name) + " must be a fragment buffer (`T.alloc_fragment`), "
                             "but it is a " + ir::memScopeName(s) + " buffer");
      declaredHere(d, buf);
      return;
    }
    if (i < 2 && s != ir::MemScope::Shared && s != ir::MemScope::Fragment && s != ir::MemScope::Local) {
      Diagnostic& d = report(DiagKind::ScopeViolation, ops[i].loc,
                             std::string("gemm operand ") + kRole[i] + " " + quoted(buf->name) +
                                 " must be in shared or fragment memory, but it is a " + ir::memScopeName(s) +
                                 " buffer; copy the tile first with `T.copy`");
      declaredHere(d, buf);
      return;
    }
    std::vector<ir::Expr> ext = extentsOf(ops[i]);
    while (ext.size() > 2 && isUnit(ext.front())) ext.erase(ext.begin());
    if (ext.size() != 2) {
      Diagnostic& d = report(DiagKind::GemmShapeMismatch, ops[i].loc,
                             std::string("gemm operand ") + kRole[i] + " " + quoted(buf->name) +
                                 " must be a matrix (2 dimensions), but its shape is " + formatShape(extentsOf(ops[i])));
      declaredHere(d, buf);
      return;
    }
    mats[i] = ext;
  }
  const ir::Buffer &A = bufferOf(ops[0]), &B = bufferOf(ops[1]), &C = bufferOf(ops[2]);
  if (A->dtype != B->dtype) {
    Diagnostic& d = report(DiagKind::TypeMismatch, call.loc,
                           "gemm operands A and B must have one dtype, but " + quoted(A->name) + " is " +
                               std::string(dtypeName(A->dtype)) + " and " + quoted(B->name) + " is " +
                               std::string(dtypeName(B->dtype)));
    declaredHere(d, A);
    declaredHere(d, B);
    return;
  }
  if (isFloat(A->dtype) && !isFloat(C->dtype)) {
    Diagnostic& d = report(DiagKind::TypeMismatch, call.loc,
                           "gemm accumulates float operands in a float C, but " + quoted(A->name) + " is " +
                               std::string(dtypeName(A->dtype)) + " and the accumulator " + quoted(C->name) + " is " +
                               std::string(dtypeName(C->dtype)) +
                               "; use a float16, bfloat16, float32 or float64 accumulator (integer and bool "
                               "operands accumulate in any C)");
    declaredHere(d, A);
    declaredHere(d, C);
    return;
  }
  for (int i = 0; i < 2; ++i) {
    if (bufferOf(ops[i]) != C || provablyDisjoint(ops[i], ops[2])) continue;
    Diagnostic& d = report(DiagKind::AliasedOperands, ops[i].loc,
                           std::string("gemm operand ") + kRole[i] + " " + quoted(C->name) +
                               " overlaps the accumulator C, which the gemm writes while it reads " + kRole[i] +
                               "; copy the operand into a buffer of its own first");
    declaredHere(d, C);
    return;
  }
  ir::Expr M = mats[0][tA ? 1 : 0], Ka = mats[0][tA ? 0 : 1];
  ir::Expr Kb = mats[1][tB ? 1 : 0], N = mats[1][tB ? 0 : 1];
  auto mismatch = [&](const std::string& what, const ir::Buffer& x, const std::string& xs, const ir::Expr& xv,
                      const ir::Buffer& y, const std::string& ys, const ir::Expr& yv, int xi, int yi) {
    Diagnostic& d = report(DiagKind::GemmShapeMismatch, call.loc,
                           "gemm " + what + " disagree: " + quoted(x->name) + " gives " + xs + " = " + formatExpr(xv) +
                               " (shape " + formatShape(mats[xi]) + ")" + " but " + quoted(y->name) + " gives " + ys +
                               " = " + formatExpr(yv) + " (shape " + formatShape(mats[yi]) + ")" +
                               (tA || tB ? std::string(" with transpose_A=") + (tA ? "True" : "False") +
                                               ", transpose_B=" + (tB ? "True" : "False")
                                         : ""));
    declaredHere(d, x);
    if (y != x) declaredHere(d, y);
  };
  bool good = true;
  if (compareExtents(Ka, Kb) != Equality::Equal) {
    mismatch("reduction dimensions", A, "K", Ka, B, "K", Kb, 0, 1);
    good = false;
  }
  if (compareExtents(M, mats[2][0]) != Equality::Equal) {
    mismatch("row counts", A, "M", M, C, "M", mats[2][0], 0, 2);
    good = false;
  }
  if (compareExtents(N, mats[2][1]) != Equality::Equal) {
    mismatch("column counts", B, "N", N, C, "N", mats[2][1], 1, 2);
    good = false;
  }
  if (!good) return;
  builder_->emit(std::make_shared<const ir::GemmStmt>(
      makeRegion(ops[0], extentsOf(ops[0]), args.slots[0]->loc), makeRegion(ops[1], extentsOf(ops[1]), args.slots[1]->loc),
      makeRegion(ops[2], extentsOf(ops[2]), args.slots[2]->loc), tA, tB, clear, call.loc));
}

void Sema::lowerReduce(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args) {
  std::string fname = std::string("T.") + b.name;
  Value src = evalTileArg(*args.slots[0], b.name);
  Value dst = evalTileArg(*args.slots[1], b.name);
  if (src.isError() || dst.isError() || !outsideParallel(fname, call.loc)) return;
  for (const Value* v : {&src, &dst}) {
    if (isPoint(*v)) {
      report(DiagKind::TypeMismatch, v->loc, "`" + fname + "` takes buffers or slices, not a single element");
      return;
    }
    const ir::Buffer& buf = bufferOf(*v);
    if (buf->scope == ir::MemScope::Global || buf->scope == ir::MemScope::Var) {
      Diagnostic& d = report(DiagKind::ScopeViolation, v->loc,
                             "`" + fname + "` works on fragment, shared or local buffers, but " + quoted(buf->name) +
                                 " is a " + ir::memScopeName(buf->scope) + " buffer; copy it first with `T.copy`");
      declaredHere(d, buf);
      return;
    }
  }
  std::vector<ir::Expr> se = extentsOf(src), de = extentsOf(dst);
  // The last dimension by default, as in TileLang.
  auto optDim = tileDim(args.slots[2], -1, bufferOf(src), static_cast<int64_t>(se.size()), call.loc);
  if (!optDim) return;
  int64_t dim = *optDim;
  bool clear = true;
  if (args.slots[3]) {
    auto c = constBool(*args.slots[3], "`clear`");
    if (!c) return;
    clear = *c;
  }
  std::vector<ir::Expr> expected = se;
  expected.erase(expected.begin() + dim);
  if (!shapesAgree(expected, de)) {
    Diagnostic& d = report(DiagKind::ShapeMismatch, call.loc,
                           "`" + fname + "` over dim " + std::to_string(dim) + " of shape " + formatShape(se) +
                               " gives shape " + formatShape(expected) + ", but the destination " +
                               quoted(bufferOf(dst)->name) + " has shape " + formatShape(de));
    declaredHere(d, bufferOf(src));
    declaredHere(d, bufferOf(dst));
    return;
  }
  ir::ReduceKind k = b.id == BuiltinId::ReduceMax      ? ir::ReduceKind::Max
                     : b.id == BuiltinId::ReduceSum    ? ir::ReduceKind::Sum
                     : b.id == BuiltinId::ReduceMin    ? ir::ReduceKind::Min
                     : b.id == BuiltinId::ReduceAbsSum ? ir::ReduceKind::AbsSum
                                                       : ir::ReduceKind::AbsMax;
  builder_->emit(std::make_shared<const ir::ReduceStmt>(k, makeRegion(src, se, args.slots[0]->loc),
                                                        makeRegion(dst, de, args.slots[1]->loc), static_cast<int>(dim),
                                                        clear, call.loc));
}

// The dimension a tile operation on `src` (of rank `rank`) works along: the
// argument `arg` (counted from the end when negative) or `dflt`; nullopt
// after reporting one that is not constant or out of range.
std::optional<int64_t> Sema::tileDim(const ast::Expr* arg, int64_t dflt, const ir::Buffer& src, int64_t rank,
                                     SourceLoc loc) {
  int64_t dim = dflt;
  if (arg) {
    auto d = constInt(*arg, "`dim`");
    if (!d) return std::nullopt;
    dim = *d;
  }
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) {
    Diagnostic& d = report(DiagKind::ShapeMismatch, arg ? arg->loc : loc,
                           "`dim` is out of range: " + quoted(src->name) + " has " + std::to_string(rank) +
                               " dimension" + (rank == 1 ? "" : "s"));
    declaredHere(d, src);
    return std::nullopt;
  }
  return dim;
}

// TileLang's `T.cumsum(src, dst=None, dim=0, reverse=False)`: the running
// sums of a shared or fragment tile along `dim` (from the end with
// `reverse`), into `dst` or in place. Written out as a Parallel loop over the
// other dimensions around a serial walk along `dim`:
//   dst[.., 0, ..] = src[.., 0, ..];  dst[.., j, ..] = dst[.., j - 1, ..] + src[.., j, ..]
void Sema::lowerCumsum(const ast::Expr& call, const CallArgs& args) {
  SourceLoc loc = call.loc;
  Value src = evalTileArg(*args.slots[0], "cumsum");
  Value dst = args.slots[1] ? evalTileArg(*args.slots[1], "cumsum") : src;
  if (src.isError() || dst.isError() || !outsideParallel("T.cumsum", loc)) return;
  for (const Value* v : {&src, &dst}) {
    if (v->kind != ValueKind::Buffer || v->buffer->scope == ir::MemScope::Global ||
        v->buffer->scope == ir::MemScope::Var) {
      report(DiagKind::ScopeViolation, v->loc,
             "`T.cumsum` works on whole shared, fragment or local buffers; copy a tensor's tile into one first");
      return;
    }
  }
  const ir::Buffer &sb = src.buffer, &db = dst.buffer;
  if (!shapesAgree(sb->shape, db->shape) || sb->shape.size() != db->shape.size()) {
    report(DiagKind::ShapeMismatch, loc,
           "`T.cumsum` writes a tile of its source's shape " + formatShape(sb->shape) + ", but " + quoted(db->name) +
               " has shape " + formatShape(db->shape));
    return;
  }
  int64_t rank = static_cast<int64_t>(sb->shape.size());
  auto optDim = tileDim(args.slots[2], 0, sb, rank, loc);
  if (!optDim) return;
  int64_t dim = *optDim;
  bool reverse = false;
  if (args.slots[3]) {
    auto r = constBool(*args.slots[3], "`reverse`");
    if (!r) return;
    reverse = *r;
  }
  // Loop variables: the other dimensions' (Parallel), then the walk's.
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> idx;
  for (int64_t d = 0; d < rank; ++d) {
    vars.push_back(freshVar(d == dim ? "j" : "i", DType::Int32, loc));
    idx.push_back(ir::makeVarRef(vars.back(), loc));
  }
  ir::Expr n = sb->shape[dim];
  auto at = [&](ir::Expr j) {
    std::vector<ir::Expr> v = idx;
    v[dim] = std::move(j);
    return v;
  };
  auto load = [&](const ir::Buffer& b, ir::Expr j) { return ir::makeLoad(b, at(std::move(j)), loc); };
  auto store = [&](ir::Expr j, ir::Expr value) {
    return std::make_shared<const ir::StoreStmt>(db, at(j), foldCast(db->dtype, std::move(value), loc), loc);
  };
  ir::Expr one = ir::makeInt(1, DType::Int32, loc);
  ir::Expr first = reverse ? foldBinary(ir::BinaryOp::Sub, n, one, loc) : ir::makeInt(0, DType::Int32, loc);
  // Step t of the walk writes j = t + 1 (or n - 2 - t) from its neighbour toward `first`.
  ir::Expr t = idx[dim];
  ir::Expr j = reverse ? foldBinary(ir::BinaryOp::Sub, foldBinary(ir::BinaryOp::Sub, n, one, loc),
                                    foldBinary(ir::BinaryOp::Add, t, one, loc), loc)
                       : foldBinary(ir::BinaryOp::Add, t, one, loc);
  ir::Expr prev = reverse ? foldBinary(ir::BinaryOp::Add, j, one, loc) : t;
  ir::Expr sum = foldBinary(ir::BinaryOp::Add, load(db, prev), foldCast(db->dtype, load(sb, j), loc), loc);
  std::vector<ir::Stmt> body;
  if (sb.get() != db.get()) body.push_back(store(first, load(sb, first)));
  body.push_back(std::make_shared<const ir::ForStmt>(vars[dim], ir::makeInt(0, DType::Int32, loc),
                                                     foldBinary(ir::BinaryOp::Sub, n, one, loc), ir::ForKind::Serial,
                                                     store(j, sum), loc));
  ir::Stmt nest = ir::makeSeq(std::move(body), loc);
  for (int64_t d = rank - 1; d >= 0; --d)
    if (d != dim)
      nest = std::make_shared<const ir::ForStmt>(vars[d], ir::makeInt(0, DType::Int32, loc), sb->shape[d],
                                                 ir::ForKind::Parallel, nest, loc);
  builder_->emit(nest);
}

}  // namespace tlc::sema
