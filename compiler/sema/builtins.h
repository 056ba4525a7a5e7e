// The table of builtins: every name of the `T.` namespace, with its category
// and signature (parameter names in order, how many are required, whether
// extra positional arguments are accepted). The `T.` prefix is optional, so
// the same table resolves bare names. docs/builtins.md documents each entry.
#pragma once

#include <string_view>
#include <vector>

namespace tlc::sema {

enum class BuiltinId {
  // kernels and allocation
  Kernel, AllocShared, AllocFragment, AllocLocal, AllocVar, AllocReducer,
  // tile operations (statements)
  Copy, C2dIm2col, Gemm, Fill, Clear, ReduceMax, ReduceSum, ReduceMin, ReduceAbsSum, ReduceAbsMax,
  AtomicAdd, AtomicMax, AtomicMin, AtomicAddX2, AtomicAddX4, UseSwizzle, AnnotateLayout, SyncThreads, Cumsum,
  Print, ReducerInit, ReducerUpdate, FinalizeReducer,
  // layout values (the second argument of T.annotate_layout)
  SwizzledLayout, RowMajorLayout, RowGroups, SharedFallback, MakeSwizzledLayout,
  // loop iterators
  Parallel, Pipelined, Serial, Range, Unroll, Vectorized,
  // scalar functions
  CeilDiv, Exp, Exp2, Expm1, Log, Log2, Log1p, Sqrt, Rsqrt, Abs, Sin, Cos, Tanh, Erf, Sigmoid,
  Asin, Acos, Atan, Atan2,
  Floor, Ceil, Round, Pow, Fma, Max, Min, Clamp, IsNan, IsInf, IsFinite, IfThenElse, Infinity,
  MinValue, MaxValue, Cast, Reinterpret, UnpackInt4, UnpackUInt4, UnpackFp4,
  // TileLang's `T.Cast(dtype, x)`; `T.dynamic("M")` / `T.symbolic("M")`, a dynamic dimension
  CastDTypeFirst, Dynamic,
  // TileLang's `T.get_thread_binding(dim)`: the thread index in per-thread code;
  // `T.get_thread_bindings()` all three; `T.get_block_binding(dim)` / `T.get_block_bindings()`
  GetThreadBinding, GetThreadBindings, GetBlockBinding, GetBlockBindings,
  // TVM script's conditional frames: `with T.If(c):` holding `with T.Then():` and `with T.Else():`
  IfFrame, ThenFrame, ElseFrame,
  // TileLang's (TVM's) spellings of operators and functions built from others:
  // T.floordiv(a, b) is a // b, T.bitwise_and(a, b) is a & b, T.log10(x) is
  // log(x) / ln(10), ...
  FloorDivFn, FloorModFn, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, ShiftLeft, ShiftRight,
  Log10, Exp10, Tan, Sinh, Cosh, Trunc,
  // type annotations
  Tensor, SharedBuffer, FragmentBuffer, LocalBuffer,
  // TileLang's decorators (docs/language.md, TileLang spellings)
  PrimFunc, MacroDecorator, Jit,
  // the tuning space of a kernel (docs/tuning.md)
  Tune,
  // TileLang's gemm warp policies: `T.GemmWarpPolicy.FullRow`
  GemmWarpPolicy,
  // TileLang's `@tilelang.autotune(...)` (ignored: tlc's tuning space is `@T.tune`)
  Autotune,
  // `T.target("hip")`: whether this compilation is for that target kind or architecture
  Target,
  // TVM's `DataType("float16")` (`from tvm import DataType`): the dtype, whose `.bits` TileLang code reads
  DataTypeOf,
};

enum class BuiltinCategory {
  Kernel,     // only as `with T.Kernel(...) as ...` (and `with T.If(c):` / `T.Then()` / `T.Else()`)
  Alloc,      // only as the value of `name = ...`
  TileOp,     // a statement
  Loop,       // only as the iterator of a `for`
  Scalar,     // an expression
  Layout,     // a layout value for T.annotate_layout
  Type,       // only in annotations
  Decorator,  // only as `@T.prim_func`, `@T.macro`, `@tilelang.jit(...)`, `@T.tune(...)`, `@autotune(...)`
  Enum,       // a namespace of named constants (`T.GemmWarpPolicy.FullRow`)
};

struct BuiltinInfo {
  const char* name;
  BuiltinId id;
  BuiltinCategory category;
  std::vector<const char*> params;  // positional-or-keyword parameters, in order
  int required;                     // how many leading params must be given
  bool variadic;                    // extra positional arguments allowed (Kernel, Parallel)
};

// The atomics of one element that may give its previous value
// (`return_prev=True`): atomic_add, atomic_max, atomic_min.
inline bool returnsPrevious(BuiltinId id) {
  return id == BuiltinId::AtomicAdd || id == BuiltinId::AtomicMax || id == BuiltinId::AtomicMin;
}

// The builtin called `name` (with or without `T.`), or null.
const BuiltinInfo* findBuiltin(std::string_view name);
const std::vector<BuiltinInfo>& allBuiltins();

}  // namespace tlc::sema
