#include "compiler/interp/host_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "compiler/interp/float_convert.h"
#include "compiler/support/diagnostics.h"

namespace tlc::interp {

void HostTensor::AlignedFree::operator()(void* p) const { std::free(p); }

namespace {
std::string shapeDescription(DType dtype, const std::vector<int64_t>& shape) {
  std::string s(dtypeName(dtype));
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ']';
}
}  // namespace

HostTensor::HostTensor(DType dt, std::vector<int64_t> shp) : dtype(dt), shape(std::move(shp)) {
  numel_ = 1;
  for (int64_t d : shape) {
    TLC_CHECK(d >= 0, "negative tensor dimension");
    numel_ *= d;
  }
  size_t bytes = sizeBytes();
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  TLC_CHECK(p != nullptr, "out of host memory for a tensor of " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, rounded);
  storage_.reset(static_cast<unsigned char*>(p));
}

std::optional<uint64_t> HostTensor::bytesFor(DType dtype, const std::vector<int64_t>& shape) {
  uint64_t n = static_cast<uint64_t>(dtypeBytes(dtype));
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

std::optional<HostTensor> HostTensor::tryCreate(DType dtype, std::vector<int64_t> shape, std::string* why) {
  auto fail = [&](std::string msg) -> std::optional<HostTensor> {
    if (why) *why = std::move(msg);
    return std::nullopt;
  };
  std::string desc = shapeDescription(dtype, shape);
  std::optional<uint64_t> bytes = bytesFor(dtype, shape);
  if (!bytes) return fail(desc + " has a negative dimension or an impossible size");
  if (*bytes > kMaxBytes)
    return fail(desc + " would need " + std::to_string(*bytes >> 20) + " MiB, more than the " +
                std::to_string(kMaxBytes >> 30) + " GiB limit for host tensors");
  void* probe = std::aligned_alloc(64, (*bytes + 63) / 64 * 64 + 64);
  if (!probe) return fail("out of host memory for " + desc);
  std::free(probe);
  return HostTensor(dtype, std::move(shape));
}

HostTensor::HostTensor(const HostTensor& other) : HostTensor(other.dtype, other.shape) {
  std::memcpy(data(), other.data(), sizeBytes());
}

HostTensor& HostTensor::operator=(const HostTensor& other) {
  if (this != &other) *this = HostTensor(other);
  return *this;
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t wrapToIntDType(int64_t v, DType t) {
  switch (t) {
    case DType::Bool: return v != 0;
    case DType::Int8: return static_cast<int8_t>(v);
    case DType::Int16: return static_cast<int16_t>(v);
    case DType::Int32: return static_cast<int32_t>(v);
    case DType::UInt8: return static_cast<uint8_t>(v);
    case DType::UInt16: return static_cast<uint16_t>(v);
    case DType::UInt32: return static_cast<uint32_t>(v);
    default: return v;  // int64, uint64 (held as its bits)
  }
}

int64_t floatToIntDType(double v, DType t) {
  if (std::isnan(v)) return 0;
  if (t == DType::Bool) return v != 0;
  v = std::trunc(v);
  double lo, hi;
  switch (t) {
    case DType::Int8: lo = -128.0, hi = 127.0; break;
    case DType::Int16: lo = -32768.0, hi = 32767.0; break;
    case DType::Int32: lo = -2147483648.0, hi = 2147483647.0; break;
    case DType::UInt8: lo = 0, hi = 255.0; break;
    case DType::UInt16: lo = 0, hi = 65535.0; break;
    case DType::UInt32: lo = 0, hi = 4294967295.0; break;
    case DType::UInt64:
      if (v <= 0) return 0;
      if (v >= 18446744073709551616.0) return static_cast<int64_t>(~uint64_t{0});
      return static_cast<int64_t>(static_cast<uint64_t>(v));
    default:  // int64
      if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      return static_cast<int64_t>(v);
  }
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return static_cast<int64_t>(v);
}

double intToDouble(int64_t v, DType t) {
  if (t == DType::UInt64) return static_cast<double>(static_cast<uint64_t>(v));
  return static_cast<double>(v);
}

double HostTensor::get(int64_t i) const {
  const unsigned char* p = storage_.get();
  switch (dtype) {
    case DType::Float32: return reinterpret_cast<const float*>(p)[i];
    case DType::Float64: return reinterpret_cast<const double*>(p)[i];
    case DType::Float16: return fromFloat16(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::BFloat16: return fromBFloat16(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::Float8E4M3: return fromFloat8E4M3(p[i]);
    case DType::Float8E5M2: return fromFloat8E5M2(p[i]);
    default: return intToDouble(getInt(i), dtype);
  }
}

void HostTensor::set(int64_t i, double v) {
  unsigned char* p = storage_.get();
  switch (dtype) {
    case DType::Float32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DType::Float64: reinterpret_cast<double*>(p)[i] = v; return;
    case DType::Float16: reinterpret_cast<uint16_t*>(p)[i] = toFloat16(v); return;
    case DType::BFloat16: reinterpret_cast<uint16_t*>(p)[i] = toBFloat16(v); return;
    case DType::Float8E4M3: p[i] = toFloat8E4M3(v); return;
    case DType::Float8E5M2: p[i] = toFloat8E5M2(v); return;
    default: setInt(i, floatToIntDType(v, dtype)); return;
  }
}

int64_t HostTensor::getInt(int64_t i) const {
  const unsigned char* p = storage_.get();
  switch (dtype) {
    case DType::Bool: return p[i] != 0;
    case DType::Int8: return reinterpret_cast<const int8_t*>(p)[i];
    case DType::Int16: return reinterpret_cast<const int16_t*>(p)[i];
    case DType::Int32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::Int64: return reinterpret_cast<const int64_t*>(p)[i];
    case DType::UInt8: return p[i];
    case DType::UInt16: return reinterpret_cast<const uint16_t*>(p)[i];
    case DType::UInt32: return reinterpret_cast<const uint32_t*>(p)[i];
    case DType::UInt64: return static_cast<int64_t>(reinterpret_cast<const uint64_t*>(p)[i]);
    default: return floatToIntDType(get(i), DType::Int64);
  }
}

void HostTensor::setInt(int64_t i, int64_t v) {
  unsigned char* p = storage_.get();
  switch (dtype) {
    case DType::Bool: p[i] = v != 0; return;
    case DType::Int8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case DType::Int16: reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case DType::Int32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case DType::Int64: reinterpret_cast<int64_t*>(p)[i] = v; return;
    case DType::UInt8: p[i] = static_cast<uint8_t>(v); return;
    case DType::UInt16: reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
    case DType::UInt32: reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
    case DType::UInt64: reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); return;
    default: set(i, static_cast<double>(v)); return;
  }
}

std::string HostTensor::describe() const { return shapeDescription(dtype, shape); }

namespace {
// splitmix64: small, fast and good enough for test data.
uint64_t nextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

void fillRandom(HostTensor& t, uint64_t seed) {
  uint64_t state = seed ^ 0x5bd1e995u;
  bool anyNonZero = false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t r = nextRandom(state);
    if (isFloat(t.dtype)) {
      t.set(i, 2.0 * unitInterval(r) - 1.0);
    } else if (t.dtype == DType::Bool) {
      t.setInt(i, static_cast<int64_t>(r & 1));
    } else if (isSigned(t.dtype)) {
      t.setInt(i, static_cast<int64_t>(r % 17) - 8);
    } else {
      t.setInt(i, static_cast<int64_t>(r % 16));
    }
    anyNonZero = anyNonZero || t.get(i) != 0;
  }
  if (!anyNonZero && t.numel() > 0) t.set(0, 1.0);
}

void fillUniform(HostTensor& t, double lo, double hi, uint64_t seed) {
  uint64_t state = seed ^ 0x5bd1e995u;
  const double first = std::ceil(lo), count = std::ceil(hi) - first;  // integers: first, first + 1, ..., < hi
  for (int64_t i = 0; i < t.numel(); ++i) {
    double u = unitInterval(nextRandom(state));
    if (isFloat(t.dtype)) t.set(i, lo + u * (hi - lo));
    else if (count <= 0) t.set(i, first);
    else t.set(i, first + std::floor(u * count));
  }
}

CompareResult compare(const HostTensor& got, const HostTensor& want, double atol, double rtol) {
  CompareResult r;
  if (got.shape != want.shape) {
    r.shapeMismatch = true;
    return r;
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get(i), w = want.get(i);
    bool bad;
    if (std::isnan(g) || std::isnan(w)) {
      bad = std::isnan(g) != std::isnan(w);
      if (bad) r.maxAbsErr = r.maxRelErr = INFINITY;
    } else if (std::isinf(g) || std::isinf(w)) {
      bad = g != w;
      if (bad) r.maxAbsErr = r.maxRelErr = INFINITY;
    } else {
      double err = std::fabs(g - w);
      if (err > r.maxAbsErr) r.maxAbsErr = err;
      if (w != 0 && err / std::fabs(w) > r.maxRelErr) r.maxRelErr = err / std::fabs(w);
      bad = err > atol + rtol * std::fabs(w);
    }
    if (bad) {
      if (r.mismatches == 0) r.firstMismatchIndex = i;
      ++r.mismatches;
    }
  }
  return r;
}

TensorStats tensorStats(const HostTensor& t) {
  TensorStats s;
  bool first = true;
  int64_t counted = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get(i);
    if (std::isnan(v)) {
      ++s.nanCount;
      continue;
    }
    s.sum += v;
    ++counted;
    if (first || v < s.min) s.min = v;
    if (first || v > s.max) s.max = v;
    first = false;
  }
  s.mean = counted ? s.sum / static_cast<double>(counted) : 0;
  return s;
}

}  // namespace tlc::interp
