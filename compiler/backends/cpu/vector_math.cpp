#include "compiler/backends/cpu/vector_math.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <limits>

#include "compiler/backends/cpu/llvm_types.h"

namespace tlc::cpu {

namespace {

// Coefficients from scripts/fit_vector_math.py, lowest degree first.
constexpr float kExpQ[] = {5.000000000e-01f, 1.666657703e-01f, 4.166655466e-02f, 8.363173075e-03f,
                           1.392617612e-03f};
constexpr float kExpm1Q[] = {1.666666667e-01f, 4.166655466e-02f, 8.333320892e-03f, 1.392617612e-03f,
                             1.988269004e-04f};
constexpr float kLogQ[] = {3.333333118e-01f,  -2.499999696e-01f, 2.000071575e-01f,
                           -1.666780232e-01f, 1.424905765e-01f,  -1.242568733e-01f,
                           1.168541992e-01f,  -1.147973385e-01f, 6.971611471e-02f};
constexpr float kErfSmallMinusX[] = {1.283791658e-01f, -3.761262667e-01f, 1.128359472e-01f, -2.685421201e-02f,
                                     5.189087423e-03f, -8.016864287e-04f, 7.875875063e-05f};
constexpr float kLogErfc[] = {4.163292177e-04f,  -1.130675144e+00f, -6.309530298e-01f, -1.110550174e-01f,
                              2.709952329e-02f,  -5.064946920e-03f, 6.858366830e-04f,  -6.229835325e-05f,
                              3.321684591e-06f,  -7.582681970e-08f};
constexpr float kAtanQ[] = {-3.333333176e-01f, 1.999954048e-01f, -1.426395560e-01f, 1.074373149e-01f,
                            -6.451928208e-02f};

// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 9 significant bits: n * kLn2Hi is exact
// for every |n| < 2^15.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;
constexpr float kInf = std::numeric_limits<float>::infinity();
// pi / 4, pi / 2 and pi as float32 pairs hi + lo (lo the rounding error of hi).
constexpr float kPi4Hi = 0.785398185f, kPi4Lo = -2.18556941e-8f;
constexpr float kPi2Hi = 1.57079637f, kPi2Lo = -4.37113883e-8f;
constexpr float kPiHi = 3.14159274f, kPiLo = -8.74227766e-8f;
constexpr float kTanPi8 = 0.414213562f;
// 1.5 * 2^23: for |v| < 2^22, v + kRoundShifter is a float of unit ulp whose
// value is kRoundShifter + rint(v) and whose low mantissa bits hold rint(v)
// as an integer, so one add (or the multiply-add that computes v) rounds to
// an integer both as a float and as bits, without vrndscaleps (8 cycles of
// latency) and cvttps2dq (7).
constexpr float kRoundShifter = 12582912.0f;

class Math {
 public:
  Math(llvm::IRBuilderBase& b, llvm::Type* t) : b_(b), t_(t), it_(t->getWithNewType(b.getInt32Ty())) {}

  llvm::Value* c(float v) { return llvm::ConstantFP::get(t_, v); }
  llvm::Value* ci(int32_t v) { return llvm::ConstantInt::get(it_, static_cast<uint64_t>(v), true); }
  llvm::Value* fma(llvm::Value* a, llvm::Value* x, llvm::Value* y) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t_}, {a, x, y});
  }
  llvm::Value* mul(llvm::Value* a, llvm::Value* x) { return b_.CreateFMul(a, x); }
  llvm::Value* add(llvm::Value* a, llvm::Value* x) { return b_.CreateFAdd(a, x); }
  llvm::Value* sub(llvm::Value* a, llvm::Value* x) { return b_.CreateFSub(a, x); }
  llvm::Value* sel(llvm::Value* cond, llvm::Value* a, llvm::Value* x) { return b_.CreateSelect(cond, a, x); }
  llvm::Value* fabs(llvm::Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  llvm::Value* copySign(llvm::Value* mag, llvm::Value* sign) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  // x limited to [lo, hi]; a NaN stays NaN.
  llvm::Value* clampKeepNan(llvm::Value* x, float lo, float hi) {
    x = sel(b_.CreateFCmpOGT(x, c(hi)), c(hi), x);
    return sel(b_.CreateFCmpOLT(x, c(lo)), c(lo), x);
  }
  template <size_t N>
  llvm::Value* poly(llvm::Value* x, const float (&coeffs)[N]) {
    llvm::Value* r = c(coeffs[N - 1]);
    for (size_t i = N - 1; i-- > 0;) r = fma(r, x, c(coeffs[i]));
    return r;
  }
  // The coefficients at an even degree and at an odd one, paired: Estrin's
  // scheme, c0 + c1 x + x^2 (c2 + c3 x) + x^4 c4 for five, whose two levels
  // of independent multiply-adds are shorter than Horner's chain (the vector
  // loops of exp and tanh are bound by their latency, not their operations).
  // `x2` is x * x, which the callers compute anyway.
  llvm::Value* estrin5(llvm::Value* x, llvm::Value* x2, const float (&k)[5]) {
    llvm::Value* lo = fma(c(k[1]), x, c(k[0]));
    llvm::Value* hi = fma(c(k[3]), x, c(k[2]));
    return fma(c(k[4]), mul(x2, x2), fma(hi, x2, lo));
  }
  // 2^n for integers n in [-126, 127].
  llvm::Value* pow2(llvm::Value* n) { return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(n, ci(127)), 23), t_); }
  // rint(v) as a float and as an integer, for |v| < 2^22, from the sum
  // `shifted` = v + kRoundShifter (kRoundShifter above).
  llvm::Value* unshift(llvm::Value* shifted) { return sub(shifted, c(kRoundShifter)); }
  llvm::Value* shiftedInt(llvm::Value* shifted) {
    return b_.CreateSub(b_.CreateBitCast(shifted, it_), ci(int32_t(0x4b400000)));
  }

  // x * 2^n for n in [-252, 254], in two steps so that a subnormal result
  // is rounded once.
  llvm::Value* scale(llvm::Value* x, llvm::Value* n) {
    llvm::Value* n1 = b_.CreateAShr(n, 1);
    return mul(mul(x, pow2(n1)), pow2(b_.CreateSub(n, n1)));
  }

  // n = the integer nearest x / ln 2 (as a float, and `ni` as an integer)
  // and r = x - n ln 2, for |x| below 2^15 ln 2.
  void reduceLn2(llvm::Value* x, llvm::Value*& n, llvm::Value*& ni, llvm::Value*& r) {
    llvm::Value* shifted = fma(x, c(kLog2e), c(kRoundShifter));
    n = unshift(shifted);
    ni = shiftedInt(shifted);
    r = fma(n, c(-kLn2Hi), x);
    r = fma(n, c(-kLn2Lo), r);
  }
  // e^r - 1 on |r| <= ln2/2 (slightly beyond, where the rounding of x log2 e goes up).
  llvm::Value* expm1Reduced(llvm::Value* r) {
    llvm::Value* r2 = mul(r, r);
    return fma(mul(r2, r), estrin5(r, r2, kExpm1Q), fma(r2, c(0.5f), r));
  }
  // e^r on the same range.
  llvm::Value* expReduced(llvm::Value* r) {
    llvm::Value* r2 = mul(r, r);
    return add(c(1.0f), fma(r2, estrin5(r, r2, kExpQ), r));
  }

  // A NaN goes through exp and exp2 as a NaN with no test for it: the clamp
  // keeps it, so r and the polynomial are NaN, and so is their product with
  // any power of 2 (the integer n read from its bits is some integer).
  llvm::Value* exp(llvm::Value* x) {
    // Beyond [-104, 89] the result is 0 or +inf; the clamp keeps n in range.
    llvm::Value* xc = clampKeepNan(x, -104.0f, 89.0f);
    llvm::Value *n, *ni, *r;
    reduceLn2(xc, n, ni, r);
    return scale(expReduced(r), ni);
  }

  llvm::Value* exp2(llvm::Value* x) {
    llvm::Value* xc = clampKeepNan(x, -151.0f, 129.0f);
    llvm::Value* shifted = add(xc, c(kRoundShifter));
    llvm::Value* n = unshift(shifted);
    llvm::Value* r = mul(sub(xc, n), c(kLn2));  // xc - n is exact
    return scale(expReduced(r), shiftedInt(shifted));
  }

  // So does expm1: every path below gives NaN for a NaN r.
  llvm::Value* expm1(llvm::Value* x) {
    // Below -18, e^x < 2^-25 and the result rounds to -1.
    llvm::Value* xc = clampKeepNan(x, -18.0f, 89.0f);
    llvm::Value *n, *ni, *r;
    reduceLn2(xc, n, ni, r);
    llvm::Value* p = expm1Reduced(r);
    // 2^n (p + 1) - 1 = 2^n p + (2^n - 1), where 2^n - 1 is exact for the n
    // at which it matters; 2^128 is out of range, so n = 128 takes 2^127 and
    // doubles (exactly, or to +inf).
    llvm::Value* big = b_.CreateICmpSGT(ni, ci(127));
    llvm::Value* s = pow2(sel(big, ci(127), ni));
    llvm::Value* res = fma(s, p, sub(s, c(1.0f)));
    res = sel(big, mul(res, c(2.0f)), res);
    return sel(b_.CreateFCmpOEQ(x, c(0.0f)), x, res);  // keeps -0
  }

  // log(1 + f) for the reduced m = 1 + f, and the exponent k (as float).
  void logReduced(llvm::Value* x, llvm::Value*& k, llvm::Value*& logm) {
    // Subnormals are scaled into the normal range first.
    llvm::Value* small = b_.CreateFCmpOLT(x, c(std::numeric_limits<float>::min()));
    llvm::Value* xs = sel(small, mul(x, c(8388608.0f)), x);
    // Offsetting the bits by those of sqrt(1/2) puts m in [sqrt(1/2), sqrt(2)).
    llvm::Value* u = b_.CreateSub(b_.CreateBitCast(xs, it_), ci(0x3f3504f3));
    llvm::Value* ki = b_.CreateAdd(b_.CreateAShr(u, 23), sel(small, ci(-23), ci(0)));
    llvm::Value* m = b_.CreateBitCast(b_.CreateAdd(b_.CreateAnd(u, ci(0x7fffff)), ci(0x3f3504f3)), t_);
    llvm::Value* f = sub(m, c(1.0f));  // exact
    llvm::Value* f2 = mul(f, f);
    k = b_.CreateSIToFP(ki, t_);
    logm = fma(mul(f2, f), poly(f, kLogQ), fma(f2, c(-0.5f), f));
  }
  // The results of log at 0, +inf, negative numbers and NaN.
  llvm::Value* logSpecials(llvm::Value* x, llvm::Value* res) {
    res = sel(b_.CreateFCmpOEQ(x, c(kInf)), x, res);
    res = sel(b_.CreateFCmpOEQ(x, c(0.0f)), c(-kInf), res);
    return sel(b_.CreateFCmpULT(x, c(0.0f)), c(std::numeric_limits<float>::quiet_NaN()), res);
  }

  llvm::Value* log(llvm::Value* x) {
    llvm::Value *k, *logm;
    logReduced(x, k, logm);
    return logSpecials(x, fma(k, c(kLn2Hi), fma(k, c(kLn2Lo), logm)));
  }

  llvm::Value* log2(llvm::Value* x) {
    llvm::Value *k, *logm;
    logReduced(x, k, logm);
    return logSpecials(x, fma(logm, c(kLog2e), k));
  }

  llvm::Value* log1p(llvm::Value* x) {
    // log(1 + x) = log(u) + log(1 + (x - (u - 1)) / u) for u = fl(1 + x).
    llvm::Value* u = add(c(1.0f), x);
    llvm::Value* correction = b_.CreateFDiv(sub(x, sub(u, c(1.0f))), u);
    llvm::Value* res = add(log(u), correction);
    res = sel(b_.CreateFCmpOEQ(u, c(0.0f)), c(-kInf), res);
    res = sel(b_.CreateFCmpOEQ(x, c(kInf)), x, res);
    return sel(b_.CreateFCmpOEQ(x, c(0.0f)), x, res);  // keeps -0
  }

  // expm1(t) / (expm1(t) + 2) for t = 2|x|, with x's sign. t is limited to
  // 18.2 (tanh(9.1) rounds to 1), so 2^n needs no second step and no case
  // of expm1 below 0 or at overflow arises. n comes from |x| itself (times
  // 2 log2 e, exactly t log2 e), beside t rather than after it; a NaN goes
  // through every operation as a NaN (no conversion to an integer has an
  // undefined result).
  llvm::Value* tanh(llvm::Value* x) {
    llvm::Value* a = fabs(x);
    a = sel(b_.CreateFCmpOGT(a, c(9.1f)), c(9.1f), a);
    llvm::Value* t = add(a, a);
    llvm::Value* shifted = fma(a, c(2.0f * kLog2e), c(kRoundShifter));
    llvm::Value* n = unshift(shifted);
    llvm::Value* r = fma(n, c(-kLn2Lo), fma(n, c(-kLn2Hi), t));
    llvm::Value* s = pow2(shiftedInt(shifted));
    llvm::Value* e = fma(s, expm1Reduced(r), sub(s, c(1.0f)));
    return copySign(b_.CreateFDiv(e, add(e, c(2.0f))), x);
  }

  // With e = exp(-|x|) in (0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) below,
  // which keeps the subnormal results of large negative x.
  llvm::Value* sigmoid(llvm::Value* x) {
    llvm::Value* e = exp(b_.CreateFNeg(fabs(x)));
    llvm::Value* num = sel(b_.CreateFCmpOLT(x, c(0.0f)), e, c(1.0f));
    return b_.CreateFDiv(num, add(c(1.0f), e));
  }

  // atan(r) for r in [0, 1] (or NaN): r itself up to tan(pi/8), beyond it
  // pi/4 + atan((r - 1) / (r + 1)); then r + r^3 P(r^2).
  llvm::Value* atanUnit(llvm::Value* r) {
    llvm::Value* mid = b_.CreateFCmpOGT(r, c(kTanPi8));
    llvm::Value* u = sel(mid, b_.CreateFDiv(sub(r, c(1.0f)), add(r, c(1.0f))), r);
    llvm::Value* u2 = mul(u, u);
    llvm::Value* p = fma(mul(u2, u), poly(u2, kAtanQ), u);
    return sel(mid, add(add(p, c(kPi4Lo)), c(kPi4Hi)), p);
  }
  // hi + lo - p, with the small terms first.
  llvm::Value* minus(float hi, float lo, llvm::Value* p) { return add(sub(c(lo), p), c(hi)); }

  // atan(|x|) = pi/2 - atan(1 / |x|) above 1, with x's sign.
  llvm::Value* atan(llvm::Value* x) {
    llvm::Value* a = fabs(x);
    llvm::Value* big = b_.CreateFCmpOGT(a, c(1.0f));
    llvm::Value* p = atanUnit(sel(big, b_.CreateFDiv(c(1.0f), a), a));
    return copySign(sel(big, minus(kPi2Hi, kPi2Lo, p), p), x);
  }

  // The angle of (x, y): atan of the smaller of |x|, |y| over the larger,
  // turned by pi/2 when |y| is the larger and mirrored (pi - a) when x is
  // negative (-0 too), with y's sign. Equal magnitudes, zeros and infinities
  // included, give the ratio 1 or 0.
  llvm::Value* atan2(llvm::Value* y, llvm::Value* x) {
    llvm::Value *ax = fabs(x), *ay = fabs(y);
    llvm::Value* swap = b_.CreateFCmpOGT(ay, ax);
    llvm::Value* r = b_.CreateFDiv(sel(swap, ax, ay), sel(swap, ay, ax));
    r = sel(b_.CreateFCmpOEQ(ax, ay), sel(b_.CreateFCmpOEQ(ax, c(0.0f)), c(0.0f), c(1.0f)), r);
    llvm::Value* p = atanUnit(r);
    p = sel(swap, minus(kPi2Hi, kPi2Lo, p), p);
    p = sel(b_.CreateFCmpOLT(copySign(c(1.0f), x), c(0.0f)), minus(kPiHi, kPiLo, p), p);
    return copySign(p, y);
  }

  // asin(x) = atan2(x, sqrt((1 - x)(1 + x))), acos(x) = atan2(sqrt(...), x);
  // |x| > 1 makes the root NaN.
  llvm::Value* cosOfAsin(llvm::Value* x) {
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, mul(sub(c(1.0f), x), add(c(1.0f), x)));
  }
  llvm::Value* asin(llvm::Value* x) { return atan2(x, cosOfAsin(x)); }
  llvm::Value* acos(llvm::Value* x) { return atan2(cosOfAsin(x), x); }

  llvm::Value* erf(llvm::Value* x) {
    llvm::Value* a = fabs(x);
    // x + x (P(x^2) - 1): the leading 2/sqrt(pi) - 1 keeps its precision.
    llvm::Value* smallRes = fma(x, poly(mul(x, x), kErfSmallMinusX), x);
    // From 1 on, 1 - erfc with erfc = exp(log erfc); erf(4) rounds to 1.
    llvm::Value* erfc = exp(poly(clampKeepNan(a, 1.0f, 4.0f), kLogErfc));
    llvm::Value* largeRes = copySign(sub(c(1.0f), erfc), x);
    return sel(b_.CreateFCmpOLT(a, c(1.0f)), smallRes, largeRes);
  }

 private:
  llvm::IRBuilderBase& b_;
  llvm::Type* t_;
  llvm::Type* it_;
};

}  // namespace

llvm::Value* emitVectorMath(llvm::IRBuilderBase& b, std::string_view name, llvm::ArrayRef<llvm::Value*> args) {
  if (args.empty() || !args[0]->getType()->getScalarType()->isFloatTy()) return nullptr;
  llvm::Value* x = args[0];
  Math m(b, x->getType());
  if (args.size() == 2) return name == "atan2" ? m.atan2(args[0], args[1]) : nullptr;
  if (args.size() != 1) return nullptr;
  if (name == "exp") return m.exp(x);
  if (name == "exp2") return m.exp2(x);
  if (name == "expm1") return m.expm1(x);
  if (name == "log") return m.log(x);
  if (name == "log2") return m.log2(x);
  if (name == "log1p") return m.log1p(x);
  if (name == "tanh") return m.tanh(x);
  if (name == "sigmoid") return m.sigmoid(x);
  if (name == "erf") return m.erf(x);
  if (name == "atan") return m.atan(x);
  if (name == "asin") return m.asin(x);
  if (name == "acos") return m.acos(x);
  return nullptr;
}

double maxUlpError(std::string_view name) {
  static const struct {
    std::string_view name;
    double ulp;
  } bounds[] = {{"exp", 1.5}, {"exp2", 1.5}, {"expm1", 2.5}, {"log", 1.5}, {"log2", 2.5}, {"log1p", 2},
                {"tanh", 3}, {"sigmoid", 2.5}, {"erf", 1.5}, {"atan", 2}, {"atan2", 2.5}, {"asin", 3},
                {"acos", 3}};
  for (const auto& b : bounds)
    if (b.name == name) return b.ulp;
  return 0;
}

}  // namespace tlc::cpu
