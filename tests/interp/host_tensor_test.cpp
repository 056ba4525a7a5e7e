#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "compiler/interp/host_tensor.h"

using namespace tlc;
using namespace tlc::interp;

TEST_CASE("host tensors: aligned row-major storage and conversions on get/set") {
  HostTensor t(DType::Float16, {3, 5});
  CHECK(t.numel() == 15);
  CHECK(t.sizeBytes() == 30);
  CHECK(reinterpret_cast<uintptr_t>(t.data()) % 64 == 0);
  CHECK(t.strides() == std::vector<int64_t>{5, 1});
  t.set(7, 0.1);
  CHECK(t.get(7) == doctest::Approx(0.1).epsilon(1e-3));
  CHECK(static_cast<const uint16_t*>(t.data())[7] == 0x2e66);
  HostTensor i8(DType::Int8, {4});
  i8.set(0, 300.0);  // saturates like a cast
  i8.set(1, -2.9);   // truncates toward zero
  i8.setInt(2, 300);  // wraps
  CHECK(i8.getInt(0) == 127);
  CHECK(i8.getInt(1) == -2);
  CHECK(i8.getInt(2) == 44);
  HostTensor u64(DType::UInt64, {1});
  u64.setInt(0, -1);
  CHECK(u64.get(0) == 18446744073709551615.0);
  HostTensor copy = t;
  CHECK(copy.get(7) == t.get(7));
  CHECK(copy.data() != t.data());
}

TEST_CASE("fillRandom is deterministic, in range, and never all zeros") {
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float8E4M3, DType::Int8, DType::UInt8,
                   DType::Int32, DType::Bool}) {
    CAPTURE(dtypeName(dt));
    HostTensor a(dt, {257}), b(dt, {257}), c(dt, {257});
    fillRandom(a, 7);
    fillRandom(b, 7);
    fillRandom(c, 8);
    bool same = true, differs = false, nonzero = false;
    for (int64_t i = 0; i < a.numel(); ++i) {
      same = same && a.get(i) == b.get(i);
      differs = differs || a.get(i) != c.get(i);
      nonzero = nonzero || a.get(i) != 0;
      if (isFloat(dt)) {
        CHECK(a.get(i) >= -1.0);
        CHECK(a.get(i) <= 1.0);  // narrow formats may round up to 1
      } else if (isSigned(dt)) {
        CHECK(std::abs(a.getInt(i)) <= 8);
      } else {
        CHECK(a.getInt(i) <= 15);
      }
    }
    CHECK(same);
    CHECK(differs);
    CHECK(nonzero);
  }
  HostTensor one(DType::Bool, {1});
  fillRandom(one, 0);
  fillRandom(one, 1);
  HostTensor two(DType::Bool, {2});
  for (uint64_t s = 0; s < 64; ++s) {
    fillRandom(two, s);
    CHECK((two.get(0) != 0 || two.get(1) != 0));
  }
}

TEST_CASE("compare: tolerances, NaN and infinity handling, first mismatch") {
  HostTensor want(DType::Float32, {5}), got(DType::Float32, {5});
  for (int i = 0; i < 5; ++i) want.set(i, i + 1.0);
  got = want;
  CHECK(compare(got, want, 0, 0).ok());
  got.set(2, 3.0003);
  CompareResult r = compare(got, want, 0, 1e-3);
  CHECK(r.ok());
  CHECK(r.maxAbsErr == doctest::Approx(0.0003).epsilon(1e-3));
  CHECK(r.maxRelErr == doctest::Approx(0.0001).epsilon(1e-2));
  r = compare(got, want, 0, 1e-5);
  CHECK(r.mismatches == 1);
  CHECK(r.firstMismatchIndex == 2);
  got = want;
  got.set(4, NAN);
  r = compare(got, want, 1, 1);
  CHECK(r.mismatches == 1);
  CHECK(r.firstMismatchIndex == 4);
  want.set(4, NAN);
  CHECK(compare(got, want, 0, 0).ok());  // NaN on both sides matches
  got.set(1, INFINITY);
  CHECK(compare(got, want, 1e9, 1e9).mismatches == 1);
  want.set(1, INFINITY);
  CHECK(compare(got, want, 0, 0).ok());
  HostTensor other(DType::Float32, {4});
  CHECK(compare(other, want, 0, 0).shapeMismatch);
}
