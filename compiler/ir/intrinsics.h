// The table of intrinsics: every callee an ir::Call may name, with its arity
// and the dtypes of its operands and result. The verifier checks each call
// against it, so a call it accepts is one every consumer (interpreter, CPU
// backend, CUDA emitter) can evaluate. docs/tile-ir.md lists the names.
//
// Portable intrinsics may appear anywhere, including .tir input. Target
// intrinsics (`cpu.*`) are introduced by one target's lowering passes and are
// only valid in IR those passes produced.
#pragma once

#include <string_view>

#include "compiler/ir/dtype.h"

namespace tlc::ir {

enum class IntrinsicRule {
  FloatMath,   // float operands, all of the result's dtype
  Numeric,     // non-bool operands, all of the result's dtype
  Integer,     // integer operands, all of the result's dtype
  Predicate,   // one float operand, bool result
  Choice,      // (bool, T, T) -> T
  FloatConst,  // no operands, float result
  Cast,        // one operand of any dtype, any result dtype
  Reinterpret, // one non-bool operand, a non-bool result of the same width
  Unpack4,     // (integer word, integer nibble index) -> a number (unpack_fp4: a float)
  Target,      // a target intrinsic; its lowering guarantees the operands
};

struct IntrinsicInfo {
  const char* name;
  int arity;
  IntrinsicRule rule;
  const char* target;  // the target whose lowering introduces it, or null
};

// The intrinsic called `name`, or null.
const IntrinsicInfo* findIntrinsic(std::string_view name);

// The names of the portable intrinsics, for suggestions and docs.
std::string portableIntrinsicNames();

}  // namespace tlc::ir
