// The tiled gemm kernel run by the interpreter against a naive triple loop.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "compiler/interp/interpreter.h"
#include "ir_builders.h"

using namespace tlc;
using namespace tlc::interp;
using namespace tlc::testing;

namespace {

// C = op(A) @ op(B) in double, from the stored (already rounded) inputs.
HostTensor naiveGemm(const HostTensor& A, const HostTensor& B, bool transA, bool transB, int64_t M, int64_t N,
                     int64_t K, DType outType) {
  HostTensor C(DType::Float64, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) {
        double a = transA ? A.get(k * M + i) : A.get(i * K + k);
        double b = transB ? B.get(j * K + k) : B.get(k * N + j);
        s += a * b;
      }
      C.set(i * N + j, s);
    }
  HostTensor out(outType, {M, N});
  for (int64_t i = 0; i < M * N; ++i) out.set(i, C.get(i));
  return out;
}

void runGemm(const GemmConfig& cfg, int64_t M, int64_t N, int64_t K, double rtol) {
  PrimFunc f = makeTiledGemm(cfg);
  HostTensor A(cfg.inType, cfg.transA ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K});
  HostTensor B(cfg.inType, cfg.transB ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N});
  HostTensor C(cfg.outType, {M, N});
  fillRandom(A, 1);
  fillRandom(B, 2);
  std::vector<ArgValue> args = {ArgValue::ofTensor(A), ArgValue::ofTensor(B), ArgValue::ofTensor(C)};
  SourceManager sm;
  DiagnosticEngine diags(sm);
  bool ok = interpret(f, args, diags);
  INFO(diags.renderAll());
  REQUIRE(ok);
  CHECK(diags.diagnostics().empty());  // not even an uninitialized-read warning
  HostTensor want = naiveGemm(A, B, cfg.transA, cfg.transB, M, N, K, cfg.outType);
  // float32 accumulation differs from the double reference by about K ulps of the terms' size.
  CompareResult r = compare(C, want, 1e-6 * static_cast<double>(K), rtol);
  INFO("max abs err " << r.maxAbsErr << ", max rel err " << r.maxRelErr << ", first mismatch " << r.firstMismatchIndex);
  CHECK(r.ok());
}

}  // namespace

TEST_CASE("gemm: all four transpose combinations, tiles that divide the sizes") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      GemmConfig cfg;
      cfg.transA = ta;
      cfg.transB = tb;
      runGemm(cfg, 64, 64, 64, 1e-5);
    }
}

TEST_CASE("gemm: sizes the tiles do not divide are masked at the edges") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      GemmConfig cfg;
      cfg.transA = ta;
      cfg.transB = tb;
      runGemm(cfg, 70, 45, 33, 1e-5);
      runGemm(cfg, 1, 1, 1, 1e-5);
      runGemm(cfg, 31, 97, 5, 1e-5);
    }
}

TEST_CASE("gemm: float16 and bfloat16 inputs with float32 accumulation") {
  for (DType in : {DType::Float16, DType::BFloat16}) {
    CAPTURE(dtypeName(in));
    GemmConfig cfg;
    cfg.inType = in;
    runGemm(cfg, 50, 40, 77, 1e-5);  // products exact; only the float32 accumulation rounds
    cfg.outType = in;                // and a narrow output: one final rounding
    runGemm(cfg, 50, 40, 77, in == DType::Float16 ? 1e-3 : 8e-3);
    cfg.transB = true;
    runGemm(cfg, 33, 64, 48, in == DType::Float16 ? 1e-3 : 8e-3);
  }
}

TEST_CASE("gemm: float16 accumulation rounds after every step") {
  // A single row times a single column: 1 + 2^-11 four times. In float16
  // (11 significant bits) 1 + 2^-11 rounds back to 1 (tie to even), so each
  // step loses the small addend; in float32 accumulation it is kept.
  for (DType acc : {DType::Float16, DType::Float32}) {
    GemmConfig cfg;
    cfg.inType = DType::Float32;
    cfg.accType = acc;
    cfg.outType = DType::Float32;
    PrimFunc f = makeTiledGemm(cfg);
    HostTensor A(DType::Float32, {1, 5}), B(DType::Float32, {5, 1}), C(DType::Float32, {1, 1});
    A.set(0, 1.0);
    B.set(0, 1.0);
    for (int k = 1; k < 5; ++k) {
      A.set(k, 1.0);
      B.set(k, std::ldexp(1.0, -11));
    }
    std::vector<ArgValue> args = {ArgValue::ofTensor(A), ArgValue::ofTensor(B), ArgValue::ofTensor(C)};
    SourceManager sm;
    DiagnosticEngine diags(sm);
    REQUIRE(interpret(f, args, diags));
    CHECK(C.get(0) == (acc == DType::Float16 ? 1.0 : 1.0 + 4 * std::ldexp(1.0, -11)));
  }
}

TEST_CASE("gemm: 256^3 float32 runs in well under a few seconds") {
  GemmConfig cfg;
  cfg.blockM = 64;
  cfg.blockN = 64;
  cfg.blockK = 32;
  auto t0 = std::chrono::steady_clock::now();
  runGemm(cfg, 256, 256, 256, 1e-5);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("256^3 gemm (interpreter + naive reference): " << seconds << " s");
  CHECK(seconds < 5.0);
}
