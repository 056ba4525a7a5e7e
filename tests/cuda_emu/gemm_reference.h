// The largest absolute error of C = A * B (float16 A [M, K] and B [K, N] as
// bit patterns, float C) against a double-precision product; infinity when
// an element of C is NaN. Shared by the emulated gemm tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/cuda_emu/emu_float.h"

namespace tlc::test {

inline double maxGemmError(const std::vector<uint16_t>& A, const std::vector<uint16_t>& B, const std::vector<float>& C,
                           int M, int N, int K) {
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k)
        ref += (double)tlc_emu_float::halfToFloat(A[(size_t)i * K + k]) *
               tlc_emu_float::halfToFloat(B[(size_t)k * N + j]);
      double e = std::fabs(ref - C[(size_t)i * N + j]);
      if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
    }
  return worst;
}

}  // namespace tlc::test
