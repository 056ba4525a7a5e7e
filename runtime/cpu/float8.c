/* float8 <-> float32 conversions for kernels that load or store float8
 * tensors (e4m3 "fn": no infinity, overflow gives NaN; e5m2: IEEE-like). */
#include <math.h>
#include <stdint.h>

#include "runtime/cpu/tlc_cpu_runtime.h"

static float decode(uint8_t bits, int expBits, int manBits, int hasInf) {
  int sign = bits >> 7;
  int exp = (bits >> manBits) & ((1 << expBits) - 1);
  int man = bits & ((1 << manBits) - 1);
  int bias = (1 << (expBits - 1)) - 1;
  int expMax = (1 << expBits) - 1;
  float v;
  if (hasInf && exp == expMax) {
    v = man ? NAN : INFINITY;
  } else if (!hasInf && exp == expMax && man == (1 << manBits) - 1) {
    v = NAN;
  } else if (exp == 0) {
    v = ldexpf((float)man, 1 - bias - manBits);
  } else {
    v = ldexpf((float)(man | (1 << manBits)), exp - bias - manBits);
  }
  return sign ? -v : v;
}

static uint8_t encode(float f, int expBits, int manBits, int hasInf) {
  uint8_t sign = signbit(f) ? 0x80 : 0;
  int bias = (1 << (expBits - 1)) - 1;
  int expMax = (1 << expBits) - 1;
  uint8_t nan = (uint8_t)(sign | (hasInf ? ((expMax << manBits) | (1 << (manBits - 1))) : 0x7f));
  if (isnan(f)) return nan;
  double a = fabs((double)f);
  /* Largest finite magnitude. */
  double maxFinite = hasInf ? ldexp(2.0 - ldexp(1.0, -manBits), expMax - 1 - bias)
                            : ldexp(2.0 - ldexp(1.0, 1 - manBits), expMax - bias);
  int minExp = 1 - bias; /* exponent of the smallest normal */
  int e;
  frexp(a, &e);
  e -= 1; /* a = m * 2^e with m in [1, 2) */
  if (a == 0.0) return sign;
  if (e < minExp) e = minExp;
  double quantum = ldexp(1.0, e - manBits);
  double q = a / quantum;
  double r = nearbyint(q); /* ties to even in the default rounding mode */
  double rounded = r * quantum;
  if (rounded > maxFinite || isinf(a)) {
    if (hasInf) return (uint8_t)(sign | (expMax << manBits));
    return nan;
  }
  /* Re-derive the fields from the rounded value. */
  int re;
  frexp(rounded, &re);
  re -= 1;
  if (rounded == 0.0) return sign;
  if (re < minExp) { /* subnormal */
    int man = (int)(rounded / ldexp(1.0, minExp - manBits));
    return (uint8_t)(sign | man);
  }
  int man = (int)(rounded / ldexp(1.0, re - manBits)) - (1 << manBits);
  return (uint8_t)(sign | ((re + bias) << manBits) | man);
}

float tlc_cpu_f8e4m3_to_f32(uint8_t v) { return decode(v, 4, 3, 0); }
uint8_t tlc_cpu_f32_to_f8e4m3(float v) { return encode(v, 4, 3, 0); }
float tlc_cpu_f8e5m2_to_f32(uint8_t v) { return decode(v, 5, 2, 1); }
uint8_t tlc_cpu_f32_to_f8e5m2(float v) { return encode(v, 5, 2, 1); }
