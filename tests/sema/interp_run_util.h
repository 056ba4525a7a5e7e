// Helpers for sema tests that run lowered kernels: the reference
// interpreter on given tensors, and an element-wise comparison with a
// reference computed in the test.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "compiler/interp/interpreter.h"
#include "tests/sema/sema_test_util.h"

namespace tlc::test {

// Runs kernel `func` (the first by default) of `c` on `tensors` (its
// parameters, in order); the run must succeed cleanly.
inline void run(const Compiled& c, std::vector<interp::HostTensor*> tensors, size_t func = 0) {
  std::vector<interp::ArgValue> args;
  for (interp::HostTensor* t : tensors) args.push_back(interp::ArgValue::ofTensor(*t));
  DiagnosticEngine diags(*c.sources);
  bool ok = interp::interpret(c.func(func), args, diags);
  INFO(diags.renderAll());
  REQUIRE(ok);
  CHECK(!diags.hasErrors());
}

// Every element of `got` within atol + rtol * |want| of `want` (the first five misses are reported).
inline void checkClose(const interp::HostTensor& got, const std::vector<double>& want, double rtol, double atol) {
  REQUIRE(got.numel() == static_cast<int64_t>(want.size()));
  int bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get(i), w = want[i];
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (bad++ < 5) FAIL_CHECK("element " << i << ": got " << g << ", want " << w);
    }
  }
  CHECK(bad == 0);
}

// RMSNorm of the rows of the M x N tensor X: X / sqrt(mean(X^2) + eps) * W.
inline std::vector<double> rmsnormRows(const interp::HostTensor& X, const interp::HostTensor& W, int64_t M, int64_t N,
                                       double eps) {
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < N; ++j) ss += X.get(i * N + j) * X.get(i * N + j);
    double r = 1.0 / std::sqrt(ss / N + eps);
    for (int64_t j = 0; j < N; ++j) want[i * N + j] = X.get(i * N + j) * r * W.get(j);
  }
  return want;
}

}  // namespace tlc::test
