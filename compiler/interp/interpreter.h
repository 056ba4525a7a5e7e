// The reference interpreter of the tile IR: the oracle every backend is
// compared with.
//
// interpret() runs a PrimFunc on host tensors element by element with the
// semantics written at the top of compiler/ir/ir.h, independently of any
// backend. Beyond ir.h it defines:
// - Scalars: integers compute in int64 and wrap to their dtype; floats
//   compute in double and are rounded to the node's dtype after every
//   operation, so float16 arithmetic behaves like float16 storage between
//   operations (for + - * / this is exactly IEEE float16/float32 arithmetic).
//   Transcendental builtins are evaluated in double and rounded once.
//   `and`, `or`, select and if_then_else evaluate only the operands they need.
//   Float min/max propagate NaN. Integer division or modulo by zero and
//   out-of-range shifts are errors.
// - Casts: float->int truncates toward zero and saturates (NaN gives 0);
//   int->int wraps; narrow floats round to nearest even.
// - Loads, stores and atomics are bounds-checked: an out-of-bounds index is a
//   located error. Tile-operation regions are masked instead (ir.h).
// - Kernels run their blocks one after the other (block variable 0 fastest);
//   every Alloc gives a fresh buffer filled with poison (NaN for floats,
//   0xA5 bytes for integers); the first read of a never-written element of a
//   buffer is reported once as a warning (uninitialized-read).
// - Dynamic shape variables are bound from the tensors' shapes; every
//   parameter's shape must then agree with its declaration.
// - Gemm and Reduce numerics: see tile_ops.cpp.
// Errors never crash: they are reported through the DiagnosticEngine and
// interpret() returns false (output tensors may then be partially written).
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "compiler/interp/host_tensor.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::interp {

// One argument: a tensor (for tensor parameters) or a scalar.
struct ArgValue {
  enum class Kind { Tensor, Int, Float };
  Kind kind = Kind::Int;
  HostTensor* tensor = nullptr;
  int64_t intValue = 0;
  double floatValue = 0;

  static ArgValue ofTensor(HostTensor& t) {
    ArgValue a;
    a.kind = Kind::Tensor;
    a.tensor = &t;
    return a;
  }
  static ArgValue ofInt(int64_t v) {
    ArgValue a;
    a.kind = Kind::Int;
    a.intValue = v;
    return a;
  }
  static ArgValue ofFloat(double v) {
    ArgValue a;
    a.kind = Kind::Float;
    a.floatValue = v;
    return a;
  }
};

// Runs `func` on `args` (one per parameter, in order). Tensors are read and
// written in place. Returns false after reporting a diagnostic on any error.
// The lines of T.print statements go to `printTo` (null: nowhere), one
// write per line, in the format of compiler/ir/print_format.h.
bool interpret(const ir::PrimFunc& func, std::vector<ArgValue>& args, DiagnosticEngine& diags,
               std::FILE* printTo = nullptr);

}  // namespace tlc::interp
