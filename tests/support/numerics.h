// What tests/support/numerics.tl must write, computed here with loops over its
// input (not by the interpreter): run it with RunSettings::saveDir = dir, then
// checkNumerics(dir).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/support/copy_regions.h"

namespace tlc::test {

inline std::string numericsFile() { return std::string(TLC_SOURCE_DIR) + "/tests/support/numerics.tl"; }

// Toward zero, saturated to [lo, hi], NaN to 0.
inline double saturated(float x, double lo, double hi) {
  if (std::isnan(x)) return 0;
  return std::clamp(std::trunc(static_cast<double>(x)), lo, hi);
}

inline void checkNumerics(const std::string& dir) {
  interp::HostTensor A = loadSaved(dir, "A"), R = loadSaved(dir, "R"), P = loadSaved(dir, "P");
  interp::HostTensor C = loadSaved(dir, "C"), U = loadSaved(dir, "U"), Z = loadSaved(dir, "Z");
  for (int64_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    bool hasNaN = i == 1 || i == 2;
    double mx = -INFINITY, mn = INFINITY, ab = 0;
    for (int64_t j = 0; j < 8; ++j) {
      double v = A.get(i * 8 + j);
      mx = std::max(mx, v);
      mn = std::min(mn, v);
      ab = std::max(ab, std::fabs(v));
    }
    if (hasNaN) {
      CHECK(std::isnan(R.get(0 * 4 + i)));
      CHECK(std::isnan(R.get(1 * 4 + i)));
      CHECK(std::isnan(R.get(2 * 4 + i)));
    } else {
      CHECK(R.get(0 * 4 + i) == mx);
      CHECK(R.get(1 * 4 + i) == mn);
      CHECK(R.get(2 * 4 + i) == ab);
    }
    CHECK(std::isnan(P.get(i)));
    CHECK(Z.getInt(i) == 0);
    for (int64_t j = 0; j < 8; ++j) {
      float a = static_cast<float>(A.get(i * 8 + j));
      CHECK(static_cast<double>(C.getInt(i * 8 + j)) == saturated(a * 1e10f, -2147483648.0, 2147483647.0));
      CHECK(static_cast<double>(U.getInt(i * 8 + j)) == saturated(a * 1000.0f, 0, 255));
    }
  }
}

}  // namespace tlc::test
