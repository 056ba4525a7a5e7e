// The examples compute what their header comments say: each is lowered by
// the front end, run by the reference interpreter on seeded random inputs
// with sizes that the tiles do not divide, and compared with a naive
// reference written here.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/sema/interp_run_util.h"

using namespace tlc;
using namespace tlc::test;
using interp::ArgValue;
using interp::HostTensor;

namespace {

Compiled compileExample(const std::string& rel, const std::vector<Define>& defines = {}) {
  Compiled c = compileFile(std::string(TLC_SOURCE_DIR) + "/examples/" + rel, defines);
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  return c;
}

}  // namespace

TEST_CASE("elementwise_add adds") {
  Compiled c = compileExample("elementwise_add/add.tl");
  const int64_t M = 37, N = 70;
  HostTensor A(DType::Float16, {M, N}), B(DType::Float16, {M, N}), C(DType::Float16, {M, N});
  interp::fillRandom(A, 1);
  interp::fillRandom(B, 2);
  run(c, {&A, &B, &C});
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M * N; ++i) want[i] = A.get(i) + B.get(i);
  checkClose(C, want, 1e-3, 1e-3);
}

TEST_CASE("gemm multiplies, with dynamic and with bound sizes") {
  for (bool bound : {false, true}) {
    CAPTURE(bound);
    const int64_t M = 70, N = 50, K = 45;
    std::vector<Define> defines;
    if (bound) defines = {{"M", "70"}, {"N", "50"}, {"K", "45"}, {"block_M", "32"}, {"block_N", "32"}, {"block_K", "16"}};
    Compiled c = compileExample("gemm/gemm.tl", defines);
    HostTensor A(DType::Float16, {M, K}), B(DType::Float16, {K, N}), C(DType::Float16, {M, N});
    interp::fillRandom(A, 3);
    interp::fillRandom(B, 4);
    run(c, {&A, &B, &C});
    std::vector<double> want(M * N, 0.0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += A.get(i * K + k) * B.get(k * N + j);
        want[i * N + j] = s;
      }
    checkClose(C, want, 2e-3, 2e-3);
  }
}

TEST_CASE("softmax normalizes each row") {
  Compiled c = compileExample("softmax/softmax.tl");
  const int64_t M = 9, N = 300;
  HostTensor X(DType::Float16, {M, N}), Y(DType::Float16, {M, N});
  interp::fillRandom(X, 5);
  for (int64_t i = 0; i < M * N; ++i) X.set(i, X.get(i) * 4);
  run(c, {&X, &Y});
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j) mx = std::max(mx, X.get(i * N + j));
    for (int64_t j = 0; j < N; ++j) sum += std::exp(X.get(i * N + j) - mx);
    for (int64_t j = 0; j < N; ++j) want[i * N + j] = std::exp(X.get(i * N + j) - mx) / sum;
  }
  checkClose(Y, want, 1e-2, 1e-4);
}

TEST_CASE("rmsnorm scales each row by its reciprocal root mean square") {
  Compiled c = compileExample("rmsnorm/rmsnorm.tl", {{"N", "96"}});
  const int64_t M = 7, N = 96;
  HostTensor X(DType::Float16, {M, N}), W(DType::Float16, {N}), Y(DType::Float16, {M, N});
  interp::fillRandom(X, 6);
  interp::fillRandom(W, 7);
  run(c, {&X, &W, &Y});
  checkClose(Y, rmsnormRows(X, W, M, N, 1e-6), 1e-2, 1e-3);
}

TEST_CASE("row_sum sums each row") {
  Compiled c = compileExample("row_reduce/row_sum.tl");
  const int64_t M = 70, N = 300;
  HostTensor X(DType::Float32, {M, N}), out(DType::Float32, {M});
  interp::fillRandom(X, 8);
  run(c, {&X, &out});
  std::vector<double> want(M, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) want[i] += X.get(i * N + j);
  checkClose(out, want, 1e-5, 1e-4);
}
