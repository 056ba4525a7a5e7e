#include "compiler/sema/builtins.h"

namespace tlc::sema {

const std::vector<BuiltinInfo>& allBuiltins() {
  using C = BuiltinCategory;
  using B = BuiltinId;
  static const std::vector<BuiltinInfo> table = {
      {"Kernel", B::Kernel, C::Kernel, {"threads"}, 0, true},
      {"alloc_shared", B::AllocShared, C::Alloc, {"shape", "dtype", "scope"}, 2, false},
      {"alloc_fragment", B::AllocFragment, C::Alloc, {"shape", "dtype", "scope"}, 2, false},
      {"alloc_local", B::AllocLocal, C::Alloc, {"shape", "dtype", "scope"}, 2, false},
      {"alloc_var", B::AllocVar, C::Alloc, {"dtype", "init"}, 1, false},
      {"copy", B::Copy, C::TileOp, {"src", "dst", "coalesced_width", "disable_tma"}, 2, false},
      {"gemm", B::Gemm, C::TileOp, {"A", "B", "C", "transpose_A", "transpose_B", "clear_accum", "policy"}, 3, false},
      {"fill", B::Fill, C::TileOp, {"buffer", "value"}, 2, false},
      {"clear", B::Clear, C::TileOp, {"buffer"}, 1, false},
      {"reduce_max", B::ReduceMax, C::TileOp, {"src", "dst", "dim", "clear"}, 2, false},
      {"reduce_sum", B::ReduceSum, C::TileOp, {"src", "dst", "dim", "clear"}, 2, false},
      {"reduce_min", B::ReduceMin, C::TileOp, {"src", "dst", "dim", "clear"}, 2, false},
      {"reduce_abssum", B::ReduceAbsSum, C::TileOp, {"src", "dst", "dim", "clear"}, 2, false},
      {"reduce_absmax", B::ReduceAbsMax, C::TileOp, {"src", "dst", "dim", "clear"}, 2, false},
      {"atomic_add", B::AtomicAdd, C::TileOp, {"dst", "value", "memory_order"}, 2, false},
      {"atomic_max", B::AtomicMax, C::TileOp, {"dst", "value", "memory_order"}, 2, false},
      {"atomic_min", B::AtomicMin, C::TileOp, {"dst", "value", "memory_order"}, 2, false},
      {"use_swizzle", B::UseSwizzle, C::TileOp, {"panel_size", "enable"}, 1, false},
      {"annotate_layout", B::AnnotateLayout, C::TileOp, {"buffer", "layout"}, 1, false},
      {"print", B::Print, C::TileOp, {"obj", "msg"}, 1, false},
      {"swizzled_layout", B::SwizzledLayout, C::Layout, {}, 0, false},
      {"row_major_layout", B::RowMajorLayout, C::Layout, {}, 0, false},
      {"row_groups", B::RowGroups, C::Layout, {"threads_per_row", "vector"}, 2, false},
      {"shared_fallback", B::SharedFallback, C::Layout, {}, 0, false},
      {"make_swizzled_layout", B::MakeSwizzledLayout, C::Layout, {"buffer"}, 1, false},
      {"Parallel", B::Parallel, C::Loop, {"coalesced_width"}, 0, true},
      {"Pipelined", B::Pipelined, C::Loop,
       {"start", "stop", "num_stages", "order", "stage", "warp_specialize", "group"}, 1, false},
      {"serial", B::Serial, C::Loop, {"start", "stop", "step"}, 1, false},
      {"range", B::Range, C::Loop, {"start", "stop", "step"}, 1, false},
      {"unroll", B::Unroll, C::Loop, {"start", "stop"}, 1, false},
      {"vectorized", B::Vectorized, C::Loop, {"start", "stop"}, 1, false},
      {"ceildiv", B::CeilDiv, C::Scalar, {"a", "b"}, 2, false},
      {"cdiv", B::CeilDiv, C::Scalar, {"a", "b"}, 2, false},  // TileLang's `tilelang.cdiv`
      {"exp", B::Exp, C::Scalar, {"x"}, 1, false},
      {"exp2", B::Exp2, C::Scalar, {"x"}, 1, false},
      {"expm1", B::Expm1, C::Scalar, {"x"}, 1, false},
      {"log", B::Log, C::Scalar, {"x"}, 1, false},
      {"log2", B::Log2, C::Scalar, {"x"}, 1, false},
      {"log1p", B::Log1p, C::Scalar, {"x"}, 1, false},
      {"sqrt", B::Sqrt, C::Scalar, {"x"}, 1, false},
      {"rsqrt", B::Rsqrt, C::Scalar, {"x"}, 1, false},
      {"abs", B::Abs, C::Scalar, {"x"}, 1, false},
      {"sin", B::Sin, C::Scalar, {"x"}, 1, false},
      {"cos", B::Cos, C::Scalar, {"x"}, 1, false},
      {"tanh", B::Tanh, C::Scalar, {"x"}, 1, false},
      {"erf", B::Erf, C::Scalar, {"x"}, 1, false},
      {"sigmoid", B::Sigmoid, C::Scalar, {"x"}, 1, false},
      {"floor", B::Floor, C::Scalar, {"x"}, 1, false},
      {"ceil", B::Ceil, C::Scalar, {"x"}, 1, false},
      {"round", B::Round, C::Scalar, {"x"}, 1, false},
      {"pow", B::Pow, C::Scalar, {"x", "y"}, 2, false},
      {"fma", B::Fma, C::Scalar, {"a", "b", "c"}, 3, false},
      {"max", B::Max, C::Scalar, {"a", "b"}, 2, false},
      {"min", B::Min, C::Scalar, {"a", "b"}, 2, false},
      {"clamp", B::Clamp, C::Scalar, {"x", "lo", "hi"}, 3, false},
      {"isnan", B::IsNan, C::Scalar, {"x"}, 1, false},
      {"isinf", B::IsInf, C::Scalar, {"x"}, 1, false},
      {"isfinite", B::IsFinite, C::Scalar, {"x"}, 1, false},
      {"if_then_else", B::IfThenElse, C::Scalar, {"cond", "then_value", "else_value"}, 3, false},
      {"infinity", B::Infinity, C::Scalar, {"dtype"}, 1, false},
      {"min_value", B::MinValue, C::Scalar, {"dtype"}, 1, false},
      {"max_value", B::MaxValue, C::Scalar, {"dtype"}, 1, false},
      {"cast", B::Cast, C::Scalar, {"x", "dtype"}, 2, false},
      {"Cast", B::CastDTypeFirst, C::Scalar, {"dtype", "x"}, 2, false},
      {"dynamic", B::Dynamic, C::Scalar, {"name", "dtype"}, 1, false},
      {"symbolic", B::Dynamic, C::Scalar, {"name", "dtype"}, 1, false},
      {"reinterpret", B::Reinterpret, C::Scalar, {"x", "dtype"}, 2, false},
      {"unpack_int4", B::UnpackInt4, C::Scalar, {"packed", "index", "dtype"}, 2, false},
      {"unpack_uint4", B::UnpackUInt4, C::Scalar, {"packed", "index", "dtype"}, 2, false},
      {"unpack_fp4", B::UnpackFp4, C::Scalar, {"packed", "index", "dtype"}, 2, false},
      {"Tensor", B::Tensor, C::Type, {"shape", "dtype"}, 2, false},
      {"Buffer", B::Tensor, C::Type, {"shape", "dtype"}, 2, false},
      {"SharedBuffer", B::SharedBuffer, C::Type, {"shape", "dtype"}, 2, false},
      {"FragmentBuffer", B::FragmentBuffer, C::Type, {"shape", "dtype"}, 2, false},
      {"LocalBuffer", B::LocalBuffer, C::Type, {"shape", "dtype"}, 2, false},
      {"prim_func", B::PrimFunc, C::Decorator, {}, 0, false},
      {"macro", B::MacroDecorator, C::Decorator, {}, 0, false},
      {"jit", B::Jit, C::Decorator, {}, 0, false},
      {"autotune", B::Autotune, C::Decorator, {}, 0, false},
      {"tune", B::Tune, C::Decorator, {}, 0, false},
      {"GemmWarpPolicy", B::GemmWarpPolicy, C::Enum, {}, 0, false},
  };
  return table;
}

const BuiltinInfo* findBuiltin(std::string_view name) {
  for (const BuiltinInfo& b : allBuiltins())
    if (name == b.name) return &b;
  return nullptr;
}

}  // namespace tlc::sema
