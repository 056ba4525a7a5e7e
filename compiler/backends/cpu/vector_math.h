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
// 1 - exp(Q(|x|)) from 1 to 4, with Q fitting log erfc; atan reduces |x| to
// [0, 1] by 1/|x| and then to [-tan(pi/8), tan(pi/8)] by (r - 1)/(r + 1)
// and evaluates r + r^3 P(r^2); atan2 takes atan of the smaller magnitude
// over the larger and places it in its quadrant; asin and acos are atan2 of x
// and sqrt((1 - x)(1 + x)). The polynomials are
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
template <typename T> class ArrayRef;
}  // namespace llvm

namespace tlc::cpu {

// name(args...) for float32 (scalar or vector) arguments, or null when
// `name` is not one of exp, exp2, expm1, log, log2, log1p, tanh, sigmoid,
// erf, atan, asin, acos (one argument) or atan2 (y, x).
llvm::Value* emitVectorMath(llvm::IRBuilderBase& b, std::string_view name, llvm::ArrayRef<llvm::Value*> args);

// The documented bound on the error of emitVectorMath(name), in units in the
// last place of the float32 result; 0 when `name` has no implementation here.
double maxUlpError(std::string_view name);

}  // namespace tlc::cpu
