// Checks launch arguments against a kernel's metadata: count, tensor or
// scalar, dtype, rank, shape (symbolic dimensions bound consistently, in
// parameter order), null and misaligned data pointers; converts scalars.
// Every failure names the argument, its position and what was expected.
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "runtime_internal.h"

namespace tlc::rt {
namespace {

std::string where(const tlc_kernel& k, size_t i) {
  return "argument `" + k.info.params[i].name + "` (parameter " + std::to_string(i + 1) + " of kernel `" +
         k.info.name + "`)";
}

std::string dimText(const Dim& d) {
  switch (d.kind) {
    case Dim::Kind::Const:
      return d.boundName.empty() ? std::to_string(d.value) : d.boundName + "=" + std::to_string(d.value);
    case Dim::Kind::Symbol: return d.symbol;
    case Dim::Kind::Expr: return d.expr.text;
  }
  return "?";
}

std::string expectedShape(const ParamInfo& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.shape.size(); ++i) s += (i ? ", " : "") + dimText(p.shape[i]);
  return s + (p.shape.size() == 1 ? ",)" : ")");
}

std::string actualShape(const tlc_tensor& t) {
  std::string s = "(";
  int rank = t.rank < 0 ? 0 : (t.rank > TLC_MAX_RANK ? TLC_MAX_RANK : t.rank);
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + (rank == 1 ? ",)" : ")");
}

bool isUnsigned(tlc_dtype d) { return d >= TLC_UINT8 && d <= TLC_UINT64; }
bool isFloatDtype(tlc_dtype d) { return d >= TLC_FLOAT16; }

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return (uint16_t)half;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

}  // namespace

tlc_status convertScalar(const tlc_scalar& s, tlc_dtype dtype, const std::string& what, uint64_t* storage) {
  *storage = 0;
  bool srcFloat = isFloatDtype(s.dtype);
  if ((int)s.dtype < 0 || s.dtype > TLC_FLOAT8_E5M2)
    return fail(TLC_ERROR_DTYPE, what + ": the scalar has an invalid dtype " + std::to_string((int)s.dtype));
  if (isFloatDtype(dtype)) {
    double v = srcFloat ? s.value.f : (isUnsigned(s.dtype) ? (double)s.value.u : (double)s.value.i);
    switch (dtype) {
      case TLC_FLOAT64: std::memcpy(storage, &v, 8); break;
      case TLC_FLOAT32: {
        float f = (float)v;
        std::memcpy(storage, &f, 4);
        break;
      }
      case TLC_FLOAT16: *storage = floatToHalf((float)v); break;
      case TLC_BFLOAT16: *storage = floatToBf16((float)v); break;
      default:
        return fail(TLC_ERROR_DTYPE, what + ": scalar parameters of dtype " + tlcDtypeName(dtype) +
                                         " are not supported by the runtime");
    }
    return TLC_SUCCESS;
  }
  if (srcFloat)
    return fail(TLC_ERROR_DTYPE, what + ": expected an integer scalar of dtype " + std::string(tlcDtypeName(dtype)) +
                                     " but got a " + tlcDtypeName(s.dtype) + " value");
  if (dtype == TLC_BOOL) {
    *storage = s.value.i != 0;
    return TLC_SUCCESS;
  }
  int bits = tlcDtypeSize(dtype) * 8;
  bool fits;
  if (isUnsigned(s.dtype) && s.value.u > (uint64_t)INT64_MAX) {
    fits = isUnsigned(dtype) && (bits == 64 || s.value.u < (1ull << bits));
  } else {
    int64_t v = s.value.i;
    if (isUnsigned(dtype))
      fits = v >= 0 && (bits == 64 || (uint64_t)v < (1ull << bits));
    else
      fits = bits == 64 || (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1)));
  }
  if (!fits)
    return fail(TLC_ERROR_DTYPE, what + ": the value " +
                                     (isUnsigned(s.dtype) ? std::to_string(s.value.u) : std::to_string(s.value.i)) +
                                     " does not fit in " + tlcDtypeName(dtype));
  *storage = bits == 64 ? s.value.u : (s.value.u & ((1ull << bits) - 1));
  return TLC_SUCCESS;
}

tlc_status checkArguments(const tlc_kernel& k, const tlc_arg* args, int32_t nargs, bool device, CheckedArgs* out) {
  const KernelInfo& info = k.info;
  if (nargs != (int32_t)info.params.size() || (nargs > 0 && !args)) {
    std::string names;
    for (size_t i = 0; i < info.params.size(); ++i) names += (i ? ", " : "") + info.params[i].name;
    return fail(TLC_ERROR_ARGUMENT_COUNT, "kernel `" + info.name + "` takes " + std::to_string(info.params.size()) +
                                              " arguments (" + names + ") but was given " +
                                              (nargs > 0 && !args ? "a null argument array" : std::to_string(nargs)));
  }
  // Where each symbol was bound, for messages.
  std::map<std::string, std::string> boundFrom;
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ParamInfo& p = info.params[i];
    const tlc_arg& a = args[i];
    if (a.kind != TLC_ARG_TENSOR && a.kind != TLC_ARG_SCALAR)
      return fail(TLC_ERROR_ARGUMENT_KIND, where(k, i) + ": invalid argument kind " + std::to_string((int)a.kind));
    if (!p.isTensor) {
      if (a.kind != TLC_ARG_SCALAR)
        return fail(TLC_ERROR_ARGUMENT_KIND, where(k, i) + ": expected a scalar of dtype " + tlcDtypeName(p.dtype) +
                                                 " but got a tensor");
      uint64_t storage;
      if (tlc_status st = convertScalar(a.scalar, p.dtype, where(k, i), &storage)) return st;
      if (!isFloatDtype(p.dtype)) {
        int64_t v = isUnsigned(a.scalar.dtype) ? (int64_t)a.scalar.value.u : a.scalar.value.i;
        out->env[p.name] = v;
      }
      continue;
    }
    if (a.kind != TLC_ARG_TENSOR)
      return fail(TLC_ERROR_ARGUMENT_KIND, where(k, i) + ": expected a tensor of shape " + expectedShape(p) +
                                               " and dtype " + tlcDtypeName(p.dtype) + " but got a scalar");
    const tlc_tensor& t = a.tensor;
    if (t.dtype != p.dtype)
      return fail(TLC_ERROR_DTYPE, where(k, i) + ": expected dtype " + tlcDtypeName(p.dtype) + " but got " +
                                       tlcDtypeName(t.dtype));
    if (t.rank != (int32_t)p.shape.size())
      return fail(TLC_ERROR_RANK, where(k, i) + ": expected a rank-" + std::to_string(p.shape.size()) +
                                      " tensor of shape " + expectedShape(p) + " but got rank " +
                                      std::to_string(t.rank) + " " + actualShape(t));
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] < 0)
        return fail(TLC_ERROR_SHAPE, where(k, i) + ": dimension " + std::to_string(d) + " of shape " +
                                         actualShape(t) + " is negative");
    // Bind new symbols first, then compare every dimension.
    std::string conflicts;
    bool bad = false;
    for (int d = 0; d < t.rank; ++d) {
      const Dim& dim = p.shape[d];
      if (dim.kind != Dim::Kind::Symbol) continue;
      auto it = out->env.find(dim.symbol);
      if (it == out->env.end()) {
        out->env[dim.symbol] = t.shape[d];
        boundFrom[dim.symbol] = "dimension " + std::to_string(d) + " of `" + p.name + "`";
      } else if (it->second != t.shape[d]) {
        bad = true;
        conflicts += std::string(conflicts.empty() ? "" : " and ") + dim.symbol + " = " + std::to_string(it->second) +
                     " (" + boundFrom[dim.symbol] + ")";
      }
    }
    for (int d = 0; d < t.rank && !bad; ++d) {
      const Dim& dim = p.shape[d];
      if (dim.kind == Dim::Kind::Const && dim.value != t.shape[d]) bad = true;
      if (dim.kind == Dim::Kind::Expr) {
        std::string err;
        auto v = evalRpn(dim.expr, out->env, &err);
        if (!v) return fail(TLC_ERROR_SHAPE, where(k, i) + ": cannot check dimension " + std::to_string(d) + ": " + err);
        if (*v != t.shape[d]) {
          bad = true;
          conflicts += std::string(conflicts.empty() ? "" : " and ") + dim.expr.text + " = " + std::to_string(*v);
        }
      }
    }
    if (bad)
      return fail(TLC_ERROR_SHAPE, where(k, i) + ": expected shape " + expectedShape(p) +
                                       (conflicts.empty() ? "" : " with " + conflicts) + " but got " + actualShape(t));
    if (!t.data)
      return fail(TLC_ERROR_NULL_POINTER, where(k, i) + ": the data pointer is null");
    int32_t elem = tlcDtypeSize(t.dtype);
    if (((uintptr_t)t.data) % (uintptr_t)elem != 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%p", t.data);
      return fail(TLC_ERROR_ALIGNMENT, where(k, i) + ": the data pointer " + buf + " is not aligned to " +
                                           std::to_string(elem) + " bytes (the size of " + tlcDtypeName(t.dtype) + ")");
    }
    if (device) {
      std::string why;
      if (tlc_status st = deviceCheckPointer(k.module, t.data, &why))
        return fail(st, where(k, i) + ": " + why);
    }
  }
  for (size_t s = 0; s < info.shapeSymbols.size(); ++s) {
    auto it = out->env.find(info.shapeSymbols[s]);
    if (it == out->env.end())
      return fail(TLC_ERROR_SHAPE, "kernel `" + info.name + "`: the shape symbol `" + info.shapeSymbols[s] +
                                       "` is not the whole dimension of any tensor argument, so it cannot be inferred");
    tlc_dtype dt = info.shapeSymbolDtypes[s];
    if (dt == TLC_INT32 && it->second > INT32_MAX)
      return fail(TLC_ERROR_SHAPE, "kernel `" + info.name + "`: " + info.shapeSymbols[s] + " = " +
                                       std::to_string(it->second) + " (" + boundFrom[info.shapeSymbols[s]] +
                                       ") exceeds the int32 range the kernel indexes with");
    out->shapeVars.push_back(it->second);
  }
  return TLC_SUCCESS;
}

}  // namespace tlc::rt
