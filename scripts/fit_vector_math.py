#!/usr/bin/env python3
"""Prints the polynomial coefficients of compiler/backends/cpu/vector_math.cpp.

Each is a Chebyshev fit (mpmath.chebyfit, 40 digits) of the part of a
function that the float32 code evaluates as a polynomial, lowest degree
first, rounded to float32. Run: python3 scripts/fit_vector_math.py
"""
import mpmath as mp

mp.mp.dps = 40


def fit(name, f, a, b, degree):
    poly, err = mp.chebyfit(f, [a, b], degree + 1, error=True)
    coeffs = ", ".join("%.9ef" % float(c) for c in reversed(poly))
    print("// %s on [%.6g, %.6g], degree %d, fit error %.2e" % (name, float(a), float(b), degree, float(err)))
    print("{%s}" % coeffs)


def at_zero(f, value):
    return lambda x: f(x) if x != 0 else mp.mpf(value)


half_ln2 = mp.log(2) / 2
sqrt2 = mp.sqrt(2)
fit("(e^r - 1 - r) / r^2", at_zero(lambda r: (mp.exp(r) - 1 - r) / r**2, 0.5), -half_ln2, half_ln2, 4)
fit("(e^r - 1 - r - r^2/2) / r^3", at_zero(lambda r: (mp.expm1(r) - r - r**2 / 2) / r**3, mp.mpf(1) / 6),
    -half_ln2, half_ln2, 4)
fit("(log(1 + f) - f + f^2/2) / f^3", at_zero(lambda f: (mp.log1p(f) - f + f**2 / 2) / f**3, mp.mpf(1) / 3),
    1 / sqrt2 - 1, sqrt2 - 1, 8)
fit("erf(sqrt(t)) / sqrt(t) - 1", at_zero(lambda t: mp.erf(mp.sqrt(t)) / mp.sqrt(t) - 1, 2 / mp.sqrt(mp.pi) - 1), 0, 1, 6)
fit("log(erfc(x))", lambda x: mp.log(mp.erfc(x)), 1, 4, 9)
tan_pi8 = mp.tan(mp.pi / 8)
fit("(atan(sqrt(u)) - sqrt(u)) / u^(3/2)",
    at_zero(lambda u: (mp.atan(mp.sqrt(u)) - mp.sqrt(u)) / (u * mp.sqrt(u)), -mp.mpf(1) / 3), 0, tan_pi8**2, 4)
