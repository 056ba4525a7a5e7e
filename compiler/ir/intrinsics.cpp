#include "compiler/ir/intrinsics.h"

#include <string>
#include <vector>

namespace tlc::ir {

namespace {

const std::vector<IntrinsicInfo>& table() {
  using R = IntrinsicRule;
  static const std::vector<IntrinsicInfo> t = {
      {"exp", 1, R::FloatMath, nullptr},       {"exp2", 1, R::FloatMath, nullptr},
      {"exp10", 1, R::FloatMath, nullptr},     {"expm1", 1, R::FloatMath, nullptr},
      {"log", 1, R::FloatMath, nullptr},       {"log2", 1, R::FloatMath, nullptr},
      {"log10", 1, R::FloatMath, nullptr},     {"log1p", 1, R::FloatMath, nullptr},
      {"sqrt", 1, R::FloatMath, nullptr},      {"rsqrt", 1, R::FloatMath, nullptr},
      {"sin", 1, R::FloatMath, nullptr},       {"cos", 1, R::FloatMath, nullptr},
      {"tan", 1, R::FloatMath, nullptr},       {"asin", 1, R::FloatMath, nullptr},
      {"acos", 1, R::FloatMath, nullptr},      {"atan", 1, R::FloatMath, nullptr},
      {"sinh", 1, R::FloatMath, nullptr},      {"cosh", 1, R::FloatMath, nullptr},
      {"tanh", 1, R::FloatMath, nullptr},      {"erf", 1, R::FloatMath, nullptr},
      {"sigmoid", 1, R::FloatMath, nullptr},   {"floor", 1, R::FloatMath, nullptr},
      {"ceil", 1, R::FloatMath, nullptr},      {"round", 1, R::FloatMath, nullptr},
      {"trunc", 1, R::FloatMath, nullptr},     {"fabs", 1, R::FloatMath, nullptr},
      {"pow", 2, R::FloatMath, nullptr},       {"atan2", 2, R::FloatMath, nullptr},
      {"fmod", 2, R::FloatMath, nullptr},      {"fma", 3, R::FloatMath, nullptr},
      {"abs", 1, R::Numeric, nullptr},         {"min", 2, R::Numeric, nullptr},
      {"max", 2, R::Numeric, nullptr},         {"clamp", 3, R::Numeric, nullptr},
      {"ceildiv", 2, R::Integer, nullptr},     {"isnan", 1, R::Predicate, nullptr},
      {"isinf", 1, R::Predicate, nullptr},     {"isfinite", 1, R::Predicate, nullptr},
      {"if_then_else", 3, R::Choice, nullptr}, {"infinity", 0, R::FloatConst, nullptr},
      {"ninf", 0, R::FloatConst, nullptr},     {"cast", 1, R::Cast, nullptr},
      {"reinterpret", 1, R::Reinterpret, nullptr}, {"unpack_int4", 2, R::Unpack4, nullptr},
      {"unpack_uint4", 2, R::Unpack4, nullptr}, {"unpack_fp4", 2, R::Unpack4, nullptr},
      // Introduced by the CPU lowering (compiler/passes/cpu_intrinsics.h).
      {"cpu.address_of", 1, R::Target, "cpu"}, {"cpu.gemm", 11, R::Target, "cpu"},
      {"cpu.atomic_add", 2, R::Target, "cpu"}, {"cpu.atomic_max", 2, R::Target, "cpu"},
      {"cpu.atomic_min", 2, R::Target, "cpu"}, {"cpu.max_keep", 2, R::Target, "cpu"},
      {"cpu.min_keep", 2, R::Target, "cpu"},
  };
  return t;
}

}  // namespace

const IntrinsicInfo* findIntrinsic(std::string_view name) {
  for (const IntrinsicInfo& i : table())
    if (name == i.name) return &i;
  return nullptr;
}

std::string portableIntrinsicNames() {
  std::string out;
  for (const IntrinsicInfo& i : table())
    if (!i.target) out += (out.empty() ? "" : ", ") + std::string(i.name);
  return out;
}

}  // namespace tlc::ir
