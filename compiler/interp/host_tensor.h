// Host-side tensors: the buffers that the interpreter, the run plumbing and
// the backends' host code read and write.
//
// A HostTensor is a dense row-major array of one dtype with 64-byte aligned
// storage (owned, zero-initialised). get/set convert between the element's
// storage format and double (narrow floats round to nearest even, see
// float_convert.h; integers convert like a cast: truncate toward zero,
// saturate, NaN gives 0); getInt/setInt give exact access to wide integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"

namespace tlc::interp {

class HostTensor {
 public:
  HostTensor() = default;
  // Aborts with an internal error when the shape is invalid or memory runs
  // out; use tryCreate for sizes that come from the user.
  HostTensor(DType dtype, std::vector<int64_t> shape);
  // The largest tensor tryCreate makes.
  static constexpr uint64_t kMaxBytes = uint64_t{1} << 34;
  // Storage bytes for dtype and shape; nullopt when a dimension is negative or the size overflows.
  static std::optional<uint64_t> bytesFor(DType dtype, const std::vector<int64_t>& shape);
  // A zeroed tensor, or nullopt with the reason in *why (negative dimension,
  // more than kMaxBytes, out of memory).
  static std::optional<HostTensor> tryCreate(DType dtype, std::vector<int64_t> shape, std::string* why = nullptr);
  HostTensor(const HostTensor& other);
  HostTensor& operator=(const HostTensor& other);
  HostTensor(HostTensor&&) noexcept = default;
  HostTensor& operator=(HostTensor&&) noexcept = default;

  DType dtype = DType::Float32;
  std::vector<int64_t> shape;

  int64_t numel() const { return numel_; }
  int elementBytes() const { return dtypeBytes(dtype); }
  size_t sizeBytes() const { return static_cast<size_t>(numel_) * static_cast<size_t>(elementBytes()); }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  // Row-major strides in elements.
  std::vector<int64_t> strides() const;

  double get(int64_t flat) const;
  void set(int64_t flat, double v);
  // Integer dtypes (and bool) exactly; floats are converted like a cast.
  int64_t getInt(int64_t flat) const;
  void setInt(int64_t flat, int64_t v);

  // "float16[64, 32]"
  std::string describe() const;

 private:
  struct AlignedFree {
    void operator()(void* p) const;
  };
  std::unique_ptr<unsigned char[], AlignedFree> storage_;
  int64_t numel_ = 0;
};

// Integer conversions shared with the interpreter.
// Wraps v to the width and signedness of the integer dtype t (two's complement); bool gives 0/1.
int64_t wrapToIntDType(int64_t v, DType t);
// A float value converted to integer dtype t: NaN gives 0, otherwise truncate toward zero and saturate.
int64_t floatToIntDType(double v, DType t);
// The value of an integer of dtype t (held as int64 bits) as a double.
double intToDouble(int64_t v, DType t);

// A double uniform in [0, 1) from 64 random bits (their top 53).
inline double unitInterval(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Deterministic random contents from `seed`: floats uniform in [-1, 1) (rounded
// to the dtype), signed ints in [-8, 8], unsigned ints in [0, 15], bool 0/1.
// Never all zeros for numel() >= 2.
void fillRandom(HostTensor& t, uint64_t seed);
// Deterministic random contents from `seed`, uniform in [lo, hi): floats
// rounded to the dtype; integers the whole numbers in that interval, clamped
// to the dtype's range.
void fillUniform(HostTensor& t, double lo, double hi, uint64_t seed);

struct CompareResult {
  double maxAbsErr = 0;
  double maxRelErr = 0;     // max |got - want| / |want| over elements with want != 0
  int64_t mismatches = 0;   // elements with |got - want| > atol + rtol * |want|
  int64_t firstMismatchIndex = -1;
  bool shapeMismatch = false;  // dtypes may differ; shapes must agree
  bool ok() const { return !shapeMismatch && mismatches == 0; }
};
// NaN on exactly one side is a mismatch; NaN on both sides matches; infinities
// match only the same infinity.
CompareResult compare(const HostTensor& got, const HostTensor& want, double atol, double rtol);

// Statistics for summaries (NaNs are counted, not summed).
struct TensorStats {
  double sum = 0, mean = 0, min = 0, max = 0;
  int64_t nanCount = 0;
};
TensorStats tensorStats(const HostTensor& t);

}  // namespace tlc::interp
