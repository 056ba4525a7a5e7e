// Layout annotations: the layout values T.swizzled_layout(),
// T.row_major_layout(), T.row_groups(G, V), T.shared_fallback(),
// make_swizzled_layout(buffer) (TileLang's spelling of the swizzle), and the
// statement T.annotate_layout(buffer, layout) or, as TileLang writes it,
// T.annotate_layout({buffer: layout, ...}).
//
// An annotation is a declaration about a shared or fragment buffer of the
// kernel being lowered: it stands after the allocation, outside every loop,
// once per buffer, and its layout fits the buffer's scope and shape (for
// T.row_groups on a tile, also the kernel's thread count). It lowers to an
// AnnotateLayout statement; whether a target can honour it is the target's
// check (the CUDA backend reports conflicts with the buffer's uses).
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"
#include "compiler/sema/tile_operands.h"

namespace tlc::sema {

namespace {

std::string dimensions(size_t n) { return std::to_string(n) + (n == 1 ? " dimension" : " dimensions"); }

bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The layout as the user writes it: `T.row_groups(8, 4)`.
std::string layoutSource(const ir::LayoutSpec& l) {
  switch (l.kind) {
    case ir::LayoutKind::Swizzled: return "`T.swizzled_layout()`";
    case ir::LayoutKind::RowMajor: return "`T.row_major_layout()`";
    case ir::LayoutKind::RowGroups:
      return "`T.row_groups(" + std::to_string(l.threadsPerRow) + ", " + std::to_string(l.vector) + ")`";
    case ir::LayoutKind::SharedFallback: return "`T.shared_fallback()`";
    case ir::LayoutKind::MmaAccumulator: return "the mma accumulator layout";
  }
  return "a layout";
}

std::vector<int64_t> constShape(const ir::Buffer& b) {
  std::vector<int64_t> out;
  for (const ir::Expr& d : b->shape) out.push_back(constIntValue(d).value_or(0));
  return out;
}

}  // namespace

Value Sema::callLayoutBuiltin(const BuiltinInfo& b, const ast::Expr& call) {
  std::string fname = std::string("T.") + b.name;
  CallArgs args;
  if (!matchArgs(call, fname, b.params, b.required, b.variadic, args)) return Value::error(call.loc);
  ir::LayoutSpec spec;
  switch (b.id) {
    case BuiltinId::SwizzledLayout: spec.kind = ir::LayoutKind::Swizzled; break;
    case BuiltinId::RowMajorLayout: spec.kind = ir::LayoutKind::RowMajor; break;
    case BuiltinId::SharedFallback: spec.kind = ir::LayoutKind::SharedFallback; break;
    case BuiltinId::MakeSwizzledLayout: {
      Value buf = eval(*args.slots[0]);
      if (buf.isError()) return Value::error(call.loc);
      if (buf.kind != ValueKind::Buffer) {
        report(DiagKind::TypeMismatch, args.slots[0]->loc,
               "`make_swizzled_layout` takes the shared buffer it lays out, but this is " + describeValue(buf));
        return Value::error(call.loc);
      }
      Value v;
      v.kind = ValueKind::Layout;
      v.layout.kind = ir::LayoutKind::Swizzled;
      v.layoutBestEffort = true;
      v.layoutFor = buf.buffer;
      v.loc = call.loc;
      return v;
    }
    case BuiltinId::RowGroups: {
      spec.kind = ir::LayoutKind::RowGroups;
      static const char* what[] = {"the threads per row of `T.row_groups`", "the run length of `T.row_groups`"};
      int64_t values[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        auto v = constInt(*args.slots[k], what[k]);
        if (!v) return Value::error(call.loc);
        if (!powerOfTwo(*v)) {
          report(DiagKind::BadLayoutAnnotation, args.slots[k]->loc,
                 std::string(what[k]) + " must be a positive power of two, but it is " + std::to_string(*v));
          return Value::error(call.loc);
        }
        values[k] = *v;
      }
      spec.threadsPerRow = values[0];
      spec.vector = values[1];
      break;
    }
    default: return Value::error(call.loc);
  }
  Value v;
  v.kind = ValueKind::Layout;
  v.layout = spec;
  v.loc = call.loc;
  return v;
}

void Sema::lowerAnnotateLayout(const ast::Expr& call, const CallArgs& args) {
  SourceLoc loc = call.loc;
  if (loopDepth_ > 0) {
    report(DiagKind::BadLayoutAnnotation, loc,
           "`T.annotate_layout` declares a buffer's layout for its whole lifetime and must stand outside every loop; "
           "move it next to the allocation");
    return;
  }
  const ast::Expr& first = *args.slots[0];
  if (first.kind == ast::ExprKind::Dict) {
    if (args.slots[1]) {
      report(DiagKind::WrongArgumentCount, args.slots[1]->loc,
             "`T.annotate_layout({buffer: layout})` takes the dict alone");
      return;
    }
    for (size_t i = 0; i + 1 < first.operands.size(); i += 2)
      annotateLayout(*first.operands[i], *first.operands[i + 1], loc);
    return;
  }
  if (!args.slots[1]) {
    report(DiagKind::WrongArgumentCount, loc,
           "`T.annotate_layout` takes a buffer and a layout, `T.annotate_layout(A_s, T.swizzled_layout())`, or a dict "
           "`T.annotate_layout({A_s: T.swizzled_layout()})`");
    return;
  }
  annotateLayout(first, *args.slots[1], loc);
}

// TileLang's index-map layouts, `T.Fragment(shape, forward_thread_fn=lambda i: ...)`
// and `T.Layout(shape, lambda i, j: ...)`: their name, or empty.
static std::string indexMapLayout(const ast::Expr& e) {
  if (e.kind != ast::ExprKind::Call || e.operands.empty() || !e.operands[0]) return "";
  const ast::Expr& callee = *e.operands[0];
  if (callee.kind != ast::ExprKind::Attribute && callee.kind != ast::ExprKind::Name) return "";
  return callee.name == "Fragment" || callee.name == "Layout" ? callee.name : "";
}

void Sema::annotateLayout(const ast::Expr& bufferExpr, const ast::Expr& layoutExpr, SourceLoc loc) {
  Value target = evalTileArg(bufferExpr, "annotate_layout");
  if (std::string map = indexMapLayout(layoutExpr); !map.empty()) {
    // A layout changes where elements live, never their values: without the
    // index map the buffer takes the layout tlc infers, and computes the same.
    if (!target.isError())
      diags_.report(DiagKind::IgnoredLayout, layoutExpr.loc,
                    "`T." + map + "(...)` is ignored: tlc does not take index-map layouts and infers the layout of " +
                        (target.kind == ValueKind::Buffer ? quoted(target.buffer->name) : std::string("the buffer")) +
                        " itself (the values are the same)");
    return;
  }
  Value layout = eval(layoutExpr);
  if (target.isError() || layout.isError()) return;
  if (target.kind == ValueKind::Region) {
    report(DiagKind::TypeMismatch, target.loc,
           "`T.annotate_layout` annotates a whole buffer, not a region: write `T.annotate_layout(" +
               target.region.buffer->name + ", ...)`");
    return;
  }
  if (target.kind != ValueKind::Buffer) {
    report(DiagKind::TypeMismatch, target.loc,
           "the first argument of `T.annotate_layout` must be a buffer, but this is " + describeValue(target));
    return;
  }
  if (layout.kind != ValueKind::Layout) {
    report(DiagKind::TypeMismatch, layout.loc,
           "the second argument of `T.annotate_layout` must be a layout such as `T.swizzled_layout()` or "
           "`T.row_groups(8, 4)`, but this is " +
               describeValue(layout));
    return;
  }
  const ir::Buffer& buf = target.buffer;
  const ir::LayoutSpec& spec = layout.layout;
  std::string name = quoted(buf->name), lay = layoutSource(spec);
  if (layout.layoutFor && layout.layoutFor != buf) {
    report(DiagKind::BadLayoutAnnotation, layout.loc,
           "this layout was made for " + quoted(layout.layoutFor->name) + " but annotates " + name);
    return;
  }
  if (layout.layoutBestEffort) {
    // TileLang's make_swizzled_layout falls back to no swizzle where the
    // buffer cannot take one: a warning, and no annotation.
    std::vector<int64_t> shape = constShape(buf);
    int64_t rowBytes = shape.size() == 2 ? shape[1] * dtypeBytes(buf->dtype) : 0;
    std::string why;
    if (buf->scope != ir::MemScope::Shared)
      why = name + " is a " + ir::memScopeName(buf->scope) + " buffer, and only shared buffers are swizzled";
    else if (shape.size() != 2)
      why = "the swizzle permutes the rows of a two-dimensional buffer, and " + name + " has " + dimensions(shape.size());
    else if (rowBytes % 16 != 0)
      why = "the swizzle permutes 16-byte chunks, and the rows of " + name + " are " + std::to_string(rowBytes) +
            " bytes";
    if (!why.empty()) {
      diags_.report(DiagKind::IgnoredLayout, layout.loc, "`make_swizzled_layout` is ignored: " + why);
      return;
    }
  }
  if (buf->scope != ir::MemScope::Shared && buf->scope != ir::MemScope::Fragment) {
    Diagnostic& d = report(DiagKind::BadLayoutAnnotation, target.loc,
                           name + " is a " + ir::memScopeName(buf->scope) +
                               (buf->scope == ir::MemScope::Global ? " tensor" : " buffer") +
                               "; only shared and fragment buffers allocated in the kernel take a layout annotation");
    declaredHere(d, buf);
    return;
  }
  ir::MemScope want = ir::layoutKindScope(spec.kind);
  if (buf->scope != want) {
    Diagnostic& d =
        report(DiagKind::BadLayoutAnnotation, layout.loc,
               lay + " is a layout for " + ir::memScopeName(want) + " buffers, but " + name + " is a " +
                   ir::memScopeName(buf->scope) + " buffer; " +
                   (buf->scope == ir::MemScope::Shared
                        ? "shared buffers take `T.swizzled_layout()` or `T.row_major_layout()`"
                        : "fragments take `T.row_groups(threads_per_row, vector)` or `T.shared_fallback()`"));
    declaredHere(d, buf);
    return;
  }
  std::vector<int64_t> shape = constShape(buf);
  if (spec.kind == ir::LayoutKind::Swizzled) {
    int64_t rowBytes = shape.size() == 2 ? shape[1] * dtypeBytes(buf->dtype) : 0;
    if (shape.size() != 2 || rowBytes % 16 != 0) {
      Diagnostic& d = report(DiagKind::BadLayoutAnnotation, layout.loc,
                             "`T.swizzled_layout()` permutes the 16-byte chunks of each row of a two-dimensional "
                             "buffer, but " + name + " " +
                                 (shape.size() != 2 ? "has " + dimensions(shape.size())
                                                    : "has rows of " + std::to_string(rowBytes) + " bytes") +
                                 "; use `T.row_major_layout()` instead");
      declaredHere(d, buf);
      return;
    }
  }
  if (spec.kind == ir::LayoutKind::RowGroups) {
    if (shape.size() > 2) {
      Diagnostic& d = report(DiagKind::BadLayoutAnnotation, layout.loc,
                             "a row-group layout holds a tile (2 dimensions) or a vector (1 dimension), but " + name +
                                 " has " + dimensions(shape.size()));
      declaredHere(d, buf);
      return;
    }
    // A tile [R, C] over T threads: G threads per row, T / G rows at a time,
    // runs of V columns. Vectors take the shape of their tile (checked by the target).
    int64_t G = spec.threadsPerRow, V = spec.vector, T = kernelThreads_;
    std::string why;
    if (T % G != 0)
      why = lay + " puts " + std::to_string(G) + " threads on each row, which does not divide the kernel's " +
            std::to_string(T) + " threads";
    else if (shape.size() == 2 && shape[0] % (T / G) != 0)
      why = lay + " handles " + std::to_string(T / G) + " rows at a time (" + std::to_string(T) + " threads / " +
            std::to_string(G) + " per row), which does not divide the " + std::to_string(shape[0]) + " rows of " + name;
    else if (shape.size() == 2 && shape[1] % (G * V) != 0)
      why = lay + " spreads runs of " + std::to_string(V) + " columns over " + std::to_string(G) +
            " threads, which does not divide the " + std::to_string(shape[1]) + " columns of " + name;
    if (!why.empty()) {
      Diagnostic& d = report(DiagKind::BadLayoutAnnotation, layout.loc,
                             why + "; choose threads per row and a run length (powers of two) that divide the tile");
      declaredHere(d, buf);
      d.note(kernelLoc_, "the kernel runs " + std::to_string(T) + " threads per block");
      return;
    }
  }
  auto [it, fresh] = layoutAnnotations_.emplace(buf.get(), loc);
  if (!fresh) {
    report(DiagKind::BadLayoutAnnotation, loc, name + " already has a layout annotation; give one per buffer")
        .note(it->second, "the first annotation of " + name + " is here");
    return;
  }
  builder_->emit(std::make_shared<const ir::AnnotateLayoutStmt>(buf, spec, loc));
}

}  // namespace tlc::sema
