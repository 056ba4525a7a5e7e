// Float32 math built only from operations the loop vectorizer widens
// (multiply-adds, comparisons, selects, integer bit operations, rint), so a
// `T.Parallel` loop that applies `T.tanh` or `T.erf` becomes vector code with
// no call into the C library. Each function is emitted inline at its use, on
// a float or a vector of floats.
//
// The methods: exp, exp2 and expm1 reduce x to r = x - n ln2 (ln2 split in
// two so that n ln2 is exact) and evaluate a polynomial on |r| <= ln2/2,
// scaled by 2^n in two steps so that results in the subnormal range are
// rounded once; log, log2 and log1p split x into 2^k m with m in
// [sqrt(1/2), sqrt(2)) and evaluate a polynomial in m - 1 (log1p adds the
// rounding error of 1 + x back); tanh is expm1(2|x|) / (expm1(2|x|) + 2)
// with x's sign; sigmoid is 1 / (1 + exp(-x)); erf is x P(x^2) below 1 and
// 1 - exp(Q(|x|)) from 1 to 4, with Q fitting log erfc. The polynomials are
// Chebyshev fits (scripts/fit_vector_math.py). Infinities, NaNs, signed
// zeros, subnormal inputs and results follow the C library.
//
// The largest errors, against the correctly rounded result, are listed by
// maxUlpError and checked by tests/cpu/vector_math_test.cpp over every
// exponent, the edge cases and the ranges where each method changes.
#pragma once

#include <string_view>

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace tlc::cpu {

// name(x) for a float32 (scalar or vector) `x`, or null when `name` is not
// one of exp, exp2, expm1, log, log2, log1p, tanh, sigmoid, erf.
llvm::Value* emitVectorMath(llvm::IRBuilderBase& b, std::string_view name, llvm::Value* x);

// The documented bound on the error of emitVectorMath(name), in units in the
// last place of the float32 result; 0 when `name` has no implementation here.
double maxUlpError(std::string_view name);

}  // namespace tlc::cpu
