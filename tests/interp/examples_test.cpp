// Every example, compiled by the front end and run by the interpreter,
// against an independent reference written out here.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "compiler/driver/run_common.h"
#include "compiler/interp/float_convert.h"
#include "compiler/sema/frontend.h"

using namespace tlc;
using namespace tlc::driver;
using interp::HostTensor;

namespace {

struct Compiled {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::optional<ir::Module> module;

  Compiled(const std::string& relPath, const std::vector<Define>& defines) {
    std::string error;
    uint32_t file = sm.addFile(std::string(TLC_SOURCE_DIR) + "/" + relPath, error);
    REQUIRE_MESSAGE(file != 0, error);
    module = compileSource(sm, diags, file, defines);
    INFO(diags.renderAll());
    REQUIRE(module);
    REQUIRE(!module->funcs.empty());
  }
  const ir::PrimFunc& func() const { return *module->funcs.front(); }

  // Seeded arguments run through the interpreter.
  RunArgs run(const std::map<std::string, int64_t>& dims, uint64_t seed = 1) {
    std::optional<RunArgs> args = makeArguments(func(), dims, seed, diags);
    INFO(diags.renderAll());
    REQUIRE(args);
    bool ok = runOracle(func(), *args, diags);
    INFO(diags.renderAll());
    REQUIRE(ok);
    CHECK(diags.diagnostics().empty());  // no uninitialized reads either
    return std::move(*args);
  }
};

// Compares every element; `want` is in double.
void checkClose(const HostTensor& got, const std::vector<double>& want, double atol, double rtol) {
  REQUIRE(static_cast<size_t>(got.numel()) == want.size());
  HostTensor w(DType::Float64, got.shape);
  for (size_t i = 0; i < want.size(); ++i) w.set(static_cast<int64_t>(i), want[i]);
  interp::CompareResult r = interp::compare(got, w, atol, rtol);
  INFO("max abs err " << r.maxAbsErr << ", max rel err " << r.maxRelErr << ", mismatches " << r.mismatches
                      << ", first at " << r.firstMismatchIndex);
  CHECK(r.ok());
}

std::vector<double> naiveGemm(const HostTensor& A, const HostTensor& B, int64_t M, int64_t N, int64_t K) {
  std::vector<double> C(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A.get(i * K + k) * B.get(k * N + j);
      C[static_cast<size_t>(i * N + j)] = s;
    }
  return C;
}

}  // namespace

TEST_CASE("examples/gemm/gemm.tl with M=N=K=64 agrees with a naive triple loop") {
  Compiled c("examples/gemm/gemm.tl", {{"M", "64"}, {"N", "64"}, {"K", "64"}});
  CHECK(c.func().shapeVars.empty());
  RunArgs a = c.run({});
  // C is float16: one rounding of a float32-accumulated sum.
  checkClose(*a.tensors[2], naiveGemm(*a.tensors[0], *a.tensors[1], 64, 64, 64), 2e-3, 2e-3);
}

TEST_CASE("examples/gemm/gemm.tl with dynamic sizes the tiles do not divide, float32") {
  Compiled c("examples/gemm/gemm.tl", {{"dtype", "float32"}, {"block_M", "64"}, {"block_N", "32"}});
  CHECK(c.func().shapeVars.size() == 3);
  RunArgs a = c.run({{"M", 130}, {"N", 77}, {"K", 257}});
  checkClose(*a.tensors[2], naiveGemm(*a.tensors[0], *a.tensors[1], 130, 77, 257), 1e-4, 1e-4);
}

TEST_CASE("examples/elementwise_add/add.tl adds") {
  Compiled c("examples/elementwise_add/add.tl", {});
  RunArgs a = c.run({{"M", 70}, {"N", 100}});
  std::vector<double> want;
  for (int64_t i = 0; i < 70 * 100; ++i)
    want.push_back(interp::roundToFloatDType(a.tensors[0]->get(i) + a.tensors[1]->get(i), DType::Float16));
  checkClose(*a.tensors[2], want, 0, 0);  // exact: one rounding of an exact float32 sum
}

TEST_CASE("examples/row_reduce/row_sum.tl sums rows") {
  Compiled c("examples/row_reduce/row_sum.tl", {});
  const int64_t M = 100, N = 300;
  RunArgs a = c.run({{"M", M}, {"N", N}});
  std::vector<double> want;
  for (int64_t i = 0; i < M; ++i) {
    double s = 0;
    for (int64_t j = 0; j < N; ++j) s += a.tensors[0]->get(i * N + j);
    want.push_back(s);
  }
  checkClose(*a.tensors[1], want, 1e-4, 1e-4);
}

TEST_CASE("examples/rmsnorm/rmsnorm.tl normalises rows") {
  Compiled c("examples/rmsnorm/rmsnorm.tl", {{"N", "256"}});
  const int64_t M = 10, N = 256;
  RunArgs a = c.run({{"M", M}});
  const HostTensor &X = *a.tensors[0], &W = *a.tensors[1];
  std::vector<double> want;
  for (int64_t i = 0; i < M; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < N; ++j) ss += X.get(i * N + j) * X.get(i * N + j);
    double inv = 1.0 / std::sqrt(ss / N + 1e-6);
    for (int64_t j = 0; j < N; ++j) want.push_back(X.get(i * N + j) * inv * W.get(j));
  }
  checkClose(*a.tensors[2], want, 2e-3, 2e-3);
}

TEST_CASE("examples/softmax/softmax.tl computes a row softmax online") {
  Compiled c("examples/softmax/softmax.tl", {});
  const int64_t M = 70, N = 300;
  RunArgs a = c.run({{"M", M}, {"N", N}});
  const HostTensor& X = *a.tensors[0];
  std::vector<double> want;
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j) mx = std::max(mx, X.get(i * N + j));
    for (int64_t j = 0; j < N; ++j) sum += std::exp(X.get(i * N + j) - mx);
    for (int64_t j = 0; j < N; ++j) want.push_back(std::exp(X.get(i * N + j) - mx) / sum);
  }
  checkClose(*a.tensors[1], want, 1e-4, 2e-3);
}

namespace {

// softmax(Q K^T / sqrt(D)) V in double for (B, S, H, D) tensors, K and V with
// H / groups heads; `causal` masks keys after the query.
std::vector<double> naiveAttention(const HostTensor& Q, const HostTensor& K, const HostTensor& V, int64_t B, int64_t S,
                                   int64_t H, int64_t D, int64_t groups, bool causal) {
  int64_t Hk = H / groups;
  std::vector<double> O(static_cast<size_t>(B * S * H * D), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < S; ++q) {
        std::vector<double> p(static_cast<size_t>(S), 0.0);
        double mx = -INFINITY, sum = 0;
        int64_t keys = causal ? q + 1 : S;
        for (int64_t k = 0; k < keys; ++k) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += Q.get(((b * S + q) * H + h) * D + d) * K.get(((b * S + k) * Hk + h / groups) * D + d);
          p[k] = s / std::sqrt(double(D));
          mx = std::max(mx, p[k]);
        }
        for (int64_t k = 0; k < keys; ++k) sum += p[k] = std::exp(p[k] - mx);
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t k = 0; k < keys; ++k) o += p[k] * V.get(((b * S + k) * Hk + h / groups) * D + d);
          O[static_cast<size_t>(((b * S + q) * H + h) * D + d)] = o / sum;
        }
      }
  return O;
}

}  // namespace

TEST_CASE("examples/flash_attention/mha_fwd_bshd.tl agrees with a naive softmax(Q K^T) V") {
  struct Case {
    std::vector<Define> defines;
    int64_t B, S, H, D, groups;
    bool causal;
  };
  for (const Case& k : std::vector<Case>{{{{"D", "64"}, {"block_M", "64"}, {"block_N", "32"}}, 2, 70, 2, 64, 1, false},
                                         {{{"D", "64"}, {"causal", "True"}, {"block_N", "32"}}, 1, 129, 2, 64, 1, true},
                                         {{{"D", "32"}, {"groups", "2"}, {"block_M", "32"}, {"block_N", "16"}}, 1, 40, 4, 32, 2, false}}) {
    CAPTURE(k.S);
    CAPTURE(k.causal);
    Compiled c("examples/flash_attention/mha_fwd_bshd.tl", k.defines);
    RunArgs a = c.run({{"B", k.B}, {"S", k.S}, {"H", k.H}});
    // P is rounded to float16 before the second product; O is float16.
    checkClose(*a.tensors[3], naiveAttention(*a.tensors[0], *a.tensors[1], *a.tensors[2], k.B, k.S, k.H, k.D, k.groups,
                                             k.causal),
               2e-3, 1e-2);
  }
}

TEST_CASE("examples/flash_attention/mha_fwd_bhsd.tl is the same attention on (B, H, S, D) tensors") {
  const int64_t B = 1, S = 90, H = 2, D = 32;
  Compiled c("examples/flash_attention/mha_fwd_bhsd.tl",
             {{"D", "32"}, {"causal", "True"}, {"block_M", "32"}, {"block_N", "16"}});
  RunArgs a = c.run({{"B", B}, {"S", S}, {"H", H}});
  // The reference in (B, S, H, D): transpose the inputs and the result.
  auto toBshd = [&](const HostTensor& t) {
    HostTensor out(t.dtype, {B, S, H, D});
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d) out.set(((s * H) + h) * D + d, t.get(((h * S) + s) * D + d));
    return out;
  };
  std::vector<double> want = naiveAttention(toBshd(*a.tensors[0]), toBshd(*a.tensors[1]), toBshd(*a.tensors[2]), B, S,
                                            H, D, 1, true);
  std::vector<double> bhsd(want.size());
  for (int64_t h = 0; h < H; ++h)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < D; ++d) bhsd[((h * S) + s) * D + d] = want[((s * H) + h) * D + d];
  checkClose(*a.tensors[3], bhsd, 2e-3, 1e-2);
}

TEST_CASE("tlc run on the gemm example prints the summary with a passing check") {
  Compiled c("examples/gemm/gemm.tl", {{"M", "64"}, {"N", "64"}, {"K", "64"}});
  std::ostringstream out;
  RunSettings s;
  s.out = &out;
  s.check = true;
  CHECK(runWithInterpreter(*c.module, s, c.diags) == 0);
  INFO(out.str());
  CHECK(out.str().find("check: PASS") != std::string::npos);
}
