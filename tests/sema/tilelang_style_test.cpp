// Kernels written in TileLang's spelling (tests/tilelang/): a kernel factory
// under `@tilelang.jit`, a factory with a `@T.macro`, a top-level
// `@T.prim_func` with free names bound by -D. Each is lowered by the front
// end, run by the reference interpreter on seeded random inputs at sizes the
// tiles do not divide, and compared with a naive reference written here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tests/sema/interp_run_util.h"

using namespace tlc;
using namespace tlc::test;
using interp::ArgValue;
using interp::HostTensor;

namespace {

Compiled compileStyle(const std::string& name, const std::vector<Define>& defines = {}) {
  Compiled c = compileFile(std::string(TLC_SOURCE_DIR) + "/tests/tilelang/" + name, defines);
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  CHECK(!c.diags->hasErrors());
  return c;
}

std::string binding(const ir::PrimFunc& f, const std::string& name) {
  for (const ir::Binding& b : f.bindings)
    if (b.name == name) return b.value;
  return "<unbound>";
}

}  // namespace

TEST_CASE("a kernel factory under @tilelang.jit is a gemm named after the factory") {
  for (bool bound : {false, true}) {
    CAPTURE(bound);
    const int64_t M = 70, N = 90, K = 45;
    std::vector<Define> defines = {{"block_M", "32"}, {"block_N", "32"}, {"block_K", "16"}};
    if (bound) defines.insert(defines.end(), {{"M", "70"}, {"N", "90"}, {"K", "45"}, {"dtype", "bfloat16"}});
    Compiled c = compileStyle("matmul.tl", defines);
    const ir::PrimFunc& f = c.func();
    CHECK(f.name == "matmul");
    CHECK(binding(f, "block_M") == "32");
    CHECK(binding(f, "accum_dtype") == "float32");  // the string "float"
    CHECK(binding(f, "dtype") == (bound ? "bfloat16" : "float16"));
    CHECK(f.shapeVars.size() == (bound ? 0u : 3u));  // unbound M, N, K are dynamic dimensions
    // The warning about @tilelang.jit is the only diagnostic.
    CHECK(c.diags->diagnostics().size() == 1);
    DType dt = bound ? DType::BFloat16 : DType::Float16;
    HostTensor A(dt, {M, K}), B(dt, {K, N}), C(dt, {M, N});
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
    checkClose(C, want, bound ? 1e-2 : 2e-3, bound ? 1e-2 : 2e-3);
  }
}

TEST_CASE("a kernel factory with a @T.macro computes a row softmax") {
  const int64_t M = 13, N = 150;  // 8-row blocks and 64-column tiles divide neither
  Compiled c = compileStyle("softmax.tl", {{"N", "150"}});
  CHECK(c.func().name == "softmax");
  HostTensor X(DType::Float16, {M, N}), Y(DType::Float16, {M, N});
  interp::fillRandom(X, 5);
  for (int64_t i = 0; i < M * N; ++i) X.set(i, X.get(i) * 4 - 1);  // negative rows too
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

TEST_CASE("a top-level @T.prim_func takes its free names from -D") {
  const int64_t M = 45, N = 100;
  Compiled c = compileStyle("bias_relu.tl", {{"M", "45"}, {"N", "100"}, {"block_M", "16"}, {"block_N", "32"}});
  const ir::PrimFunc& f = c.func();
  CHECK(f.name == "main");
  CHECK(binding(f, "block_N") == "32");
  HostTensor A(DType::Float16, {M, N}), bias(DType::Float32, {N}), C(DType::Float32, {M, N});
  interp::fillRandom(A, 6);
  interp::fillRandom(bias, 7);
  for (int64_t i = 0; i < M * N; ++i) A.set(i, A.get(i) * 2 - 1);
  for (int64_t j = 0; j < N; ++j) bias.set(j, bias.get(j) - 0.5);
  run(c, {&A, &bias, &C});
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) want[i * N + j] = std::max(A.get(i * N + j) + bias.get(j), 0.0) * 0.5;
  checkClose(C, want, 1e-6, 1e-6);
}

TEST_CASE("a top-level @T.prim_func with a free name left unbound is reported at its use") {
  Compiled c = compileFile(std::string(TLC_SOURCE_DIR) + "/tests/tilelang/bias_relu.tl",
                           {{"M", "45"}, {"N", "100"}, {"block_M", "16"}});
  CHECK(!c.module.has_value());
  std::string text = c.rendered();
  CHECK(text.find("`block_N` is not defined") != std::string::npos);
  CHECK(text.find("[unbound-compile-param]") != std::string::npos);
}

TEST_CASE("T.dynamic declares a dimension the tensors give; the 3-D grid's batch index passes the swizzle") {
  const int64_t Bt = 3, M = 150, N = 70, K = 50;
  Compiled c = compileStyle("batched_gemm.tl", {{"N", "70"}, {"K", "50"}});
  const ir::PrimFunc& f = c.func();
  CHECK(f.name == "batched_gemm");
  REQUIRE(f.shapeVars.size() == 2u);  // batch and M
  CHECK(f.shapeVars[1]->name == "M");
  HostTensor A(DType::Float16, {Bt, M, K}), B(DType::Float16, {Bt, K, N}), C(DType::Float32, {Bt, M, N});
  interp::fillRandom(A, 8);
  interp::fillRandom(B, 9);
  run(c, {&A, &B, &C});
  std::vector<double> want(Bt * M * N);
  for (int64_t b = 0; b < Bt; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = b;  // the epilogue adds T.Cast("float32", bz)
        for (int64_t k = 0; k < K; ++k) s += A.get((b * M + i) * K + k) * B.get((b * K + k) * N + j);
        want[(b * M + i) * N + j] = s;
      }
  checkClose(C, want, 2e-3, 2e-3);
}

TEST_CASE("a factory in Python's idiom picks its kernel with a compile-time if and checks an assert") {
  const int64_t M = 37, N = 32;  // 16-row blocks do not divide M
  for (int split : {1, 2}) {
    CAPTURE(split);
    Compiled c = compileStyle("python_factory.tl", {{"N", "32"}, {"split", std::to_string(split)}});
    const ir::PrimFunc& f = c.func();
    CHECK(f.name == "scaled_rows");
    CHECK(f.params[0].buffer->dtype == DType::Float32);  // `dtype` is rebound in the factory's body
    CHECK(c.diags->diagnostics().size() == 2);  // the ignored @tilelang.autotune and @tilelang.jit
    HostTensor X(DType::Float32, {M, N}), Y(DType::Float32, {M, N});
    interp::fillRandom(X, 10);
    run(c, {&X, &Y});
    std::vector<double> want(M * N);
    for (int64_t i = 0; i < M; ++i) {
      double rowSum = 0;
      for (int64_t j = 0; j < N; ++j) rowSum += X.get(i * N + j);
      for (int64_t j = 0; j < N; ++j) want[i * N + j] = X.get(i * N + j) * 0.5 + (split > 1 ? rowSum : 0.0);
    }
    checkClose(Y, want, 1e-5, 1e-5);
  }
  Compiled bad = compileFile(std::string(TLC_SOURCE_DIR) + "/tests/tilelang/python_factory.tl", {{"N", "40"}});
  CHECK(!bad.module.has_value());
  CHECK(bad.rendered().find("assertion failed with these compile-time parameters: N must be a multiple of block_N") !=
        std::string::npos);
}

TEST_CASE("names assigned at the top of the file are every kernel's: constants are parameters with defaults") {
  const int64_t M = 37, N = 100;  // neither 16 rows nor 64 columns divide them
  for (bool overridden : {false, true}) {
    CAPTURE(overridden);
    std::vector<Define> defines = {{"N", "100"}};
    if (overridden) defines.push_back({"SCALE", "0.5"});
    Compiled c = compileStyle("module_globals.tl", defines);
    const ir::PrimFunc& f = c.func();
    CHECK(binding(f, "BLOCK") == "64");
    CHECK(binding(f, "block_N") == "64");  // the parameter's default reads the global tuple's BN
    CHECK(f.params[0].buffer->dtype == DType::Float16);
    const double scale = overridden ? 0.5 : 3.0;
    HostTensor X(DType::Float16, {M, N}), Y(DType::Float16, {M, N});
    interp::fillRandom(X, 11);
    run(c, {&X, &Y});
    std::vector<double> want(M * N);
    for (int64_t i = 0; i < M * N; ++i) want[i] = X.get(i) * scale + 1.0;
    checkClose(Y, want, 2e-3, 2e-3);
  }
}

TEST_CASE("an index-map layout (`T.Fragment(..., lambda)`) is ignored with a warning and the kernel computes the same") {
  const int64_t H = 5, S = 3, D = 100;
  Compiled c = compileStyle("lse_combine.tl", {{"H", "5"}, {"splits", "3"}, {"dim", "100"}});
  size_t ignored = 0;
  for (const Diagnostic& d : c.diags->diagnostics()) ignored += d.kind == DiagKind::IgnoredLayout;
  CHECK(ignored == 1);
  HostTensor L(DType::Float32, {H, S}), P(DType::Float32, {H, S, D}), O(DType::Float32, {H, D});
  interp::fillRandom(L, 12);
  interp::fillRandom(P, 13);
  run(c, {&L, &P, &O});
  std::vector<double> want(H * D, 0.0);
  for (int64_t r = 0; r < H; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t s = 0; s < S; ++s) mx = std::max(mx, L.get(r * S + s));
    for (int64_t s = 0; s < S; ++s) sum += std::exp2(L.get(r * S + s) - mx);
    double lse = std::log2(sum) + mx;
    for (int64_t s = 0; s < S; ++s)
      for (int64_t i = 0; i < D; ++i) want[r * D + i] += std::exp2(L.get(r * S + s) - lse) * P.get((r * S + s) * D + i);
  }
  checkClose(O, want, 1e-5, 1e-5);
}

TEST_CASE("TVM spellings of operators and conversions, T.cumsum, and ignored hints compute what TileLang's do") {
  const int64_t M = 21, N = 16, BM = 8;
  Compiled c = compileStyle("tvm_spellings.tl", {{"M", "21"}});
  size_t hints = 0;
  for (const Diagnostic& d : c.diags->diagnostics()) hints += d.kind == DiagKind::IgnoredHint;
  CHECK(hints == 2);
  HostTensor X(DType::Float32, {M, N}), U(DType::UInt32, {M, N}), F(DType::Float32, {M, N}),
      Z(DType::UInt32, {M, N}), C(DType::Float32, {M, N}), R(DType::Float32, {M, N});
  interp::fillRandom(X, 21);
  interp::fillRandom(U, 22);
  run(c, {&X, &U, &F, &Z, &C, &R});
  std::vector<double> f(M * N), z(M * N), cs(M * N), rs(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float x = float(X.get(i * N + j));
      int64_t q = int64_t(std::floor(x * 4.0f));
      int64_t fd = q >= 0 ? q / 3 : -((-q + 2) / 3), fm = q - fd * 3;
      f[i * N + j] = double(fd * 10 + fm) + std::log10(std::fabs(x) + 1.0) + std::pow(10.0, x * 0.5) +
                     std::tan(x * 0.5) + std::sinh(x) * std::cosh(x) + std::trunc(x * 3.0) + x +
                     (std::sqrt(double(N)) / std::log2(std::exp(1.0)) + 2.0 + M_PI);
      uint32_t u = uint32_t(U.get(i * N + j));
      z[i * N + j] = double(((u >> 3) & 255u) ^ ((u << 1) | ~u));
    }
  // Running sums along rows; reverse running sums down the columns of each 8-row tile.
  for (int64_t i = 0; i < M; ++i) {
    double run = 0;
    for (int64_t j = 0; j < N; ++j) cs[i * N + j] = run += X.get(i * N + j);
  }
  for (int64_t t = 0; t < M; t += BM)
    for (int64_t j = 0; j < N; ++j) {
      double run = 0;
      // Rows of the last tile past M read as zeros (the copy's fill).
      for (int64_t i = t + BM - 1; i >= t; --i) {
        run += i < M ? X.get(i * N + j) : 0.0;
        if (i < M) rs[i * N + j] = run;
      }
    }
  checkClose(F, f, 1e-4, 1e-4);
  checkClose(Z, z, 0, 0);
  checkClose(C, cs, 1e-5, 1e-5);
  checkClose(R, rs, 1e-5, 1e-5);
}

TEST_CASE("a plain Python helper with tvm.tir calls expands where kernel code calls it") {
  const int64_t N = 37, K = 64;
  Compiled c = compileStyle("python_helper.tl", {{"N", "37"}});
  HostTensor B(DType::UInt8, {N, K / 2}), W(DType::Float16, {N, K});
  interp::fillRandom(B, 31);
  run(c, {&B, &W});
  std::vector<double> want(N * K);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      unsigned byte = unsigned(B.get(n * (K / 2) + k / 2)), f4 = (byte >> (4 * (k % 2))) & 15u;
      unsigned s = f4 >> 3, e = f4 & 7u, bits = (((e | 8u) | (s << 5)) << 10) & 0xffffu;
      // The float16 with these bits: sign, 5 exponent bits, 10 mantissa bits.
      int exponent = int((bits >> 10) & 31u);
      double mant = double(bits & 1023u) / 1024.0;
      double v = exponent == 0 ? std::ldexp(mant, -14) : std::ldexp(1.0 + mant, exponent - 15);
      want[n * K + k] = e == 0 ? 0.0 : ((bits >> 15) ? -v : v);
    }
  checkClose(W, want, 0, 0);
}

TEST_CASE("shapes sliced, concatenated and unpacked from lists") {
  const int64_t B = 2, S = 37, D = 32;
  Compiled c = compileStyle("shape_lists.tl");
  HostTensor X(DType::Float32, {B, S, D}), Y(DType::Float32, {B, S, D / 2}), Z(DType::Float32, {B, S});
  interp::fillRandom(X, 41);
  run(c, {&X, &Y, &Z});
  std::vector<double> y(B * S * D / 2), z(B * S);
  for (int64_t r = 0; r < B * S; ++r) {
    for (int64_t j = 0; j < D / 2; ++j)
      y[r * D / 2 + j] = double(float(X.get(r * D + 2 * j)) + float(X.get(r * D + 2 * j + 1)));
    z[r] = double(float(X.get(r * D)) + float(X.get(r * D + 1)));
  }
  checkClose(Y, y, 0, 0);
  checkClose(Z, z, 0, 0);
}

TEST_CASE("a split-K gemm adds its accumulator tiles into C with a tile-level T.atomic_add or T.atomic_addx2") {
  const int64_t M = 70, N = 46, K = 96;  // 32 x 32 tiles divide neither M nor N; 3 slices of 32
  for (const char* file : {"splitk_atomic.tl", "splitk_atomic_x2.tl"}) {
    CAPTURE(file);
    Compiled c = compileStyle(file, {{"M", "70"}, {"N", "46"}, {"K", "96"}});
    HostTensor A(DType::Float16, {M, K}), B(DType::Float16, {K, N}), C(DType::Float32, {M, N});
    interp::fillRandom(A, 51);
    interp::fillRandom(B, 52);
    interp::fillRandom(C, 53);
    std::vector<double> want(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = C.get(i * N + j);
        for (int64_t k = 0; k < K; ++k) s += A.get(i * K + k) * B.get(k * N + j);
        want[i * N + j] = s;
      }
    run(c, {&A, &B, &C});
    checkClose(C, want, 1e-4, 1e-4);
  }
}

TEST_CASE("while loops walk a block's rows and each element's 3n + 1 steps") {
  const int64_t M = 11, N = 64, cap = 40;  // 3-row blocks: the last block has 2 rows
  Compiled c = compileStyle("while_loops.tl", {{"M", "11"}});
  HostTensor X(DType::Float32, {M, N}), V(DType::Int32, {M, N}), S(DType::Float32, {M}), C(DType::Int32, {M, N});
  interp::fillRandom(X, 61);
  interp::fillRandom(V, 62);
  for (int64_t i = 0; i < M * N; ++i) V.set(i, 1 + std::abs(int64_t(V.get(i))) % 1000);
  run(c, {&X, &V, &S, &C});
  std::vector<double> s(M), steps(M * N);
  for (int64_t r = 0; r < M; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += float(X.get(r * N + j));
    s[r] = sum;
    for (int64_t j = 0; j < N; ++j) {
      int64_t n = int64_t(V.get(r * N + j)), k = 0;
      while (n != 1 && k < cap) n = n % 2 == 0 ? n / 2 : 3 * n + 1, ++k;
      steps[r * N + j] = double(k);
    }
  }
  checkClose(S, s, 1e-5, 1e-5);
  checkClose(C, steps, 0, 0);
}

TEST_CASE("thread-level code after T.get_thread_binding runs once per thread of a (16, 8) block") {
  const int64_t N = 45, K = 37;  // 8 rows a block: the last block has 5; 16 threads along K: 3 steps, the last partial
  Compiled c = compileStyle("thread_binding.tl", {{"N", "45"}, {"K", "37"}});
  HostTensor A(DType::Float16, {K}), B(DType::Float16, {N, K}), C(DType::Float32, {N}), I(DType::Int32, {N, 16});
  interp::fillRandom(A, 71);
  interp::fillRandom(B, 72);
  interp::fillRandom(C, 73);
  std::vector<double> want(N), ids(N * 16);
  for (int64_t n = 0; n < N; ++n) {
    double s = C.get(n);
    for (int64_t k = 0; k < K; ++k) s += A.get(k) * B.get(n * K + k);
    want[n] = s;
    for (int64_t t = 0; t < 16; ++t) ids[n * 16 + t] = double(1000 * t + 10 * (n % 8) + (t % 4) * (t % 4));
  }
  run(c, {&A, &B, &C, &I});
  checkClose(C, want, 1e-4, 1e-4);
  checkClose(I, ids, 0, 0);
}

TEST_CASE("T.If / T.Then / T.Else frames are an if and its else") {
  const int64_t M = 70;  // 16-row blocks: the last has 6 rows
  Compiled c = compileStyle("if_frames.tl", {{"M", "70"}});
  HostTensor X(DType::Float32, {M, 64}), Y(DType::Float32, {M, 64});
  interp::fillRandom(X, 81);
  run(c, {&X, &Y});
  std::vector<double> want(M * 64);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < 64; ++j)
      want[r * 64 + j] = ((r / 16) % 2 == 0 ? X.get(r * 64 + j) : 1.0) * (j < 32 ? 2.0 : 1.0);
  checkClose(Y, want, 0, 0);
}

TEST_CASE("reducers: row sums over column tiles, a one-element sum of squares, column maxima and a minimum") {
  Compiled c = compileStyle("reducers.tl");
  REQUIRE(c.module->funcs.size() == 3);
  {
    const int64_t M = 37, N = 300;  // 8-row blocks, 64-column tiles: neither divides
    HostTensor A(DType::Float32, {M, N}), B(DType::Float32, {M});
    interp::fillRandom(A, 91);
    run(c, {&A, &B}, 0);
    std::vector<double> want(M, 0.0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) want[i] += A.get(i * N + j);
    checkClose(B, want, 1e-5, 1e-5);
  }
  {
    const int64_t M = 5, N = 300;
    HostTensor X(DType::Float16, {M, N}), W(DType::Float16, {N}), Y(DType::Float16, {M, N});
    interp::fillRandom(X, 92);
    interp::fillRandom(W, 93);
    run(c, {&X, &W, &Y}, 1);
    checkClose(Y, rmsnormRows(X, W, M, N, 1e-6), 2e-3, 2e-3);
  }
  {
    const int64_t M = 70, N = 100, blocks = (N + 31) / 32;  // 32 x 32 tiles divide neither
    HostTensor A(DType::Float32, {M, N}), cmax(DType::Float32, {N}), lo(DType::Float32, {blocks});
    interp::fillRandom(A, 94);
    run(c, {&A, &cmax, &lo}, 2);
    std::vector<double> mx(N, -INFINITY), mn(blocks, INFINITY);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        mx[j] = std::max(mx[j], A.get(i * N + j));
        mn[j / 32] = std::min(mn[j / 32], A.get(i * N + j));
      }
    checkClose(cmax, mx, 0, 0);
    checkClose(lo, mn, 0, 0);
  }
}

TEST_CASE("atomics returning the previous value: tickets per bin, and a maximum that keeps the old one") {
  Compiled c = compileStyle("atomic_prev.tl");
  REQUIRE(c.module->funcs.size() == 2);
  {
    const int64_t N = 300, B = 7;  // 128-element blocks: the last one partial
    HostTensor bins(DType::Int32, {N}), H(DType::Int32, {B}), S(DType::Int32, {B});
    interp::fillRandom(bins, 95);  // some outside [0, B): clamped to the first and last bin
    interp::fillRandom(H, 96);
    interp::fillRandom(S, 97);
    std::vector<double> h(B), s(B), count(B, 0.0);
    for (int64_t b = 0; b < B; ++b) h[b] = H.get(b), s[b] = S.get(b);
    for (int64_t k = 0; k < N; ++k) count[std::clamp<int64_t>(int64_t(bins.get(k)), 0, B - 1)] += 1;
    for (int64_t b = 0; b < B; ++b) {
      s[b] += h[b] * count[b] + count[b] * (count[b] - 1) / 2;  // the tickets h, h + 1, ..., h + c - 1
      h[b] += count[b];
    }
    run(c, {&bins, &H, &S}, 0);
    checkClose(H, h, 0, 0);
    checkClose(S, s, 0, 0);
  }
  {
    const int64_t N = 100;
    HostTensor A(DType::Float32, {N}), M(DType::Float32, {N}), P(DType::Float32, {N});
    interp::fillRandom(A, 98);
    interp::fillRandom(M, 99);
    std::vector<double> mx(N), p(N);
    for (int64_t k = 0; k < N; ++k) mx[k] = std::max(M.get(k), A.get(k)), p[k] = 2.0 * M.get(k);
    run(c, {&A, &M, &P}, 1);
    checkClose(M, mx, 0, 0);
    checkClose(P, p, 0, 0);
  }
}

TEST_CASE("`tl` without an import and TVM's DataType(dtype).bits size a gemv's vectors") {
  const int64_t N = 37, K = 300;
  for (const char* dtype : {"float16", "float32"}) {
    CAPTURE(dtype);
    Compiled c = compileStyle("gemv_vectorized.tl", {{"dtype", dtype}});
    // 16 bytes a thread and step: 8 float16 or 4 float32 elements.
    CHECK(binding(c.func(), "dtype") == dtype);
    DType dt = std::string(dtype) == "float16" ? DType::Float16 : DType::Float32;
    HostTensor W(dt, {N, K}), x(dt, {K}), y(dt, {N});
    interp::fillRandom(W, 41);
    interp::fillRandom(x, 42);
    run(c, {&W, &x, &y});
    std::vector<double> want(N, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) want[n] += W.get(n * K + k) * x.get(k);
    double tol = dt == DType::Float16 ? 2e-2 : 1e-4;
    checkClose(y, want, tol, tol);
  }
}

TEST_CASE("DataType's fields: bits and lanes; anything else is an error naming them") {
  Compiled ok = compileText(
      "def f[N](A: Tensor[(N,), float32]):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        for i in T.Parallel(N):\n"
      "            A[i] = DataType(\"float8_e4m3\").bits + DataType(\"bfloat16\").bits * 100 + T.int16.bits * 10000 + "
      "DataType(\"float32\").lanes + DataType(\"bool\").bits * 1000000\n",
      {{"N", "4"}});
  INFO(ok.rendered());
  REQUIRE(ok.module.has_value());
  HostTensor A(DType::Float32, {4});
  run(ok, {&A});
  checkClose(A, std::vector<double>(4, 8 + 1600 + 160000 + 1 + 1000000), 0, 0);
  Compiled bad = compileText(
      "def f(A: Tensor[(4,), float32]):\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        A[0] = DataType(\"float16\").itemsize\n");
  CHECK(bad.diags->hasErrors());
  CHECK(bad.rendered().find("a dtype has no attribute `itemsize` (it has `bits` and `lanes`") != std::string::npos);
}

TEST_CASE("TileLang's convolution factory with T.c2d_im2col against a naive convolution") {
  struct Case {
    int64_t N, C, H, W, F, K, S, D, P;
  };
  for (const Case& v : {Case{2, 32, 9, 11, 40, 3, 1, 1, 1}, Case{1, 24, 13, 10, 20, 3, 2, 2, 2},
                        Case{2, 40, 7, 9, 36, 1, 2, 1, 0}}) {
    CAPTURE(v.K);
    CAPTURE(v.S);
    auto d = [](int64_t x) { return std::to_string(x); };
    Compiled c = compileStyle("convolution.tl", {{"N", d(v.N)}, {"C", d(v.C)}, {"H", d(v.H)}, {"W", d(v.W)},
                                                 {"F", d(v.F)}, {"K", d(v.K)}, {"S", d(v.S)}, {"D", d(v.D)},
                                                 {"P", d(v.P)}});
    const int64_t OH = (v.H + 2 * v.P - v.D * (v.K - 1) - 1) / v.S + 1;
    const int64_t OW = (v.W + 2 * v.P - v.D * (v.K - 1) - 1) / v.S + 1;
    HostTensor X(DType::Float16, {v.N, v.H, v.W, v.C}), Wt(DType::Float16, {v.K * v.K * v.C, v.F}),
        Out(DType::Float16, {v.N * OH * OW, v.F});
    interp::fillRandom(X, 51);
    interp::fillRandom(Wt, 52);
    run(c, {&X, &Wt, &Out});
    std::vector<double> want(v.N * OH * OW * v.F, 0.0);
    for (int64_t n = 0; n < v.N; ++n)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t f = 0; f < v.F; ++f) {
            double s = 0;
            for (int64_t kh = 0; kh < v.K; ++kh)
              for (int64_t kw = 0; kw < v.K; ++kw) {
                int64_t ih = oh * v.S - v.P + kh * v.D, iw = ow * v.S - v.P + kw * v.D;
                if (ih < 0 || ih >= v.H || iw < 0 || iw >= v.W) continue;
                for (int64_t ch = 0; ch < v.C; ++ch)
                  s += X.get(((n * v.H + ih) * v.W + iw) * v.C + ch) * Wt.get(((kh * v.K + kw) * v.C + ch) * v.F + f);
              }
            want[((n * OH + oh) * OW + ow) * v.F + f] = s;
          }
    checkClose(Out, want, 2e-2, 2e-2);
  }
}
