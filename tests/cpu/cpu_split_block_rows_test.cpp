// Pass cpu-split-block-rows (compiler/passes/cpu_split_block_rows.h): checked
// on textual tile IR, for the split and for what it must leave alone, and
// numerically: blocks of independent rows whose tiles overflow L1 (128 rows
// of 64 float32) on the CPU against the interpreter and plain loops, at sizes
// the tiles do not divide.
#include <doctest/doctest.h>

#include <cmath>

#include "compiler/passes/cpu_split_block_rows.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/pass_text.h"

using namespace tlc;
using namespace tlc::test;

namespace {

// At most 12 KiB of tiles (a quarter of a 48 KiB L1): 32 rows of the tests'
// 260 bytes (s: 256 bytes a row, acc: 4).
void checkSplit(const std::string& text) {
  testing::checkPassText(text, [](const ir::Module& m) { return cpu::splitBlockRows(m, 12 << 10); });
}

// A running sum along rows, 128 rows per block, as TIR: the header's example.
const char* kRunningSum = R"(
func @f(X: float32[1000, 640], Y: float32[1000, 640]) {
  kernel grid(8) threads(128) as (bx) {
    alloc s: shared float32[128, 64]
    alloc acc: fragment float32[128]
    fill(acc, 0.0)
    for k in serial(0 : +10) {
      copy(X[bx * 128 : +128, k * 64 : +64], s)
      for i in parallel(0 : +128) {
        for j in serial(0 : +64) {
          acc[i] = acc[i] + s[i, j]
          s[i, j] = acc[i]
        }
      }
      copy(s, Y[bx * 128 : +128, k * 64 : +64])
    }
  }
}
)";

}  // namespace

TEST_CASE("a block of independent rows runs its body over groups of rows whose tiles fit") {
  checkSplit(std::string(kRunningSum) + R"(
// CHECK: alloc s: shared float32[32, 64]
// CHECK-NEXT: alloc acc: fragment float32[32]
// CHECK-NEXT: for row_group in serial(0 : +4) {
// CHECK-NEXT: fill(acc, 0.0)
// CHECK-NEXT: for k in serial(0 : +10) {
// CHECK-NEXT: copy(X[bx * 128 + row_group * 32 : +32, k * 64 : +64], s)
// CHECK-NEXT: for i in parallel(0 : +32) {
// CHECK-NEXT: for j in serial(0 : +64) {
// CHECK-NEXT: acc[i] = acc[i] + s[i, j]
// CHECK-NEXT: s[i, j] = acc[i]
// CHECK: copy(s, Y[bx * 128 + row_group * 32 : +32, k * 64 : +64])
)");
}

TEST_CASE("a row loop's variable is the row outside the tiles' first index; reductions along rows split") {
  checkSplit(R"(
func @f(X: float32[1000, 640], Q: float32[1000]) {
  kernel grid(8) threads(128) as (bx) {
    alloc x: fragment float32[128, 64]
    alloc m: fragment float32[128]
    fill(m, 0.0)
    for k in serial(0 : +10) {
      copy(X[bx * 128 : +128, k * 64 : +64], x)
      reduce_max(x, m, dim=1, clear=false)
    }
    for i in parallel(0 : +128) {
      if bx * 128 + i < 1000 {
        Q[bx * 128 + i] = m[i] + x[i, i % 64]
      }
    }
  }
}
// CHECK: for row_group in serial(0 : +4) {
// CHECK: reduce_max(x, m, dim=1, clear=false)
// CHECK: for i in parallel(0 : +32) {
// CHECK-NEXT: if bx * 128 + (i + row_group * 32) < 1000 {
// CHECK-NEXT: Q[bx * 128 + (i + row_group * 32)] = m[i] + x[i, (i + row_group * 32) % 64]
)");
}

TEST_CASE("blocks whose rows meet, or whose tiles fit, keep their rows together") {
  auto unchanged = R"(
// CHECK: alloc s: shared float32[128, 64]
// CHECK-NOT: row_group
)";
  // Tiles that fit already.
  testing::checkPassText(kRunningSum + std::string(unchanged),
                         [](const ir::Module& m) { return cpu::splitBlockRows(m, 64 << 10); });
  std::string sum = kRunningSum;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = sum;
    t.replace(t.find(from), from.size(), to);
    return t + unchanged;
  };
  // A row reads another row.
  checkSplit(with("acc[i] + s[i, j]", "acc[i] + s[127 - i, j]"));
  // The tile is read down its columns (a transpose).
  checkSplit(with("acc[i] + s[i, j]", "acc[i] + s[j, i]"));
  // The kernel reads the tensor it writes.
  checkSplit(with("copy(X[bx * 128", "copy(Y[bx * 128"));
  // The rows written move with the steps: row i of step k writes where row
  // i + 1 of step k + 1 does.
  checkSplit(with("copy(s, Y[bx * 128 : +128, k * 64 : +64])", "copy(s, Y[bx * 128 + k : +128, k * 64 : +64])"));
  // No steps: the block moves its tile once.
  checkSplit(R"(
func @f(X: float32[1000, 64], Y: float32[1000, 64]) {
  kernel grid(8) threads(128) as (bx) {
    alloc s: shared float32[128, 64]
    copy(X[bx * 128 : +128, 0 : +64], s)
    copy(s, Y[bx * 128 : +128, 0 : +64])
  }
}
)" + std::string(unchanged));
  // A reduction across the rows.
  checkSplit(R"(
func @f(X: float32[1000, 640], Q: float32[64]) {
  kernel grid(8) threads(128) as (bx) {
    alloc s: shared float32[128, 64]
    alloc c: fragment float32[64]
    for k in serial(0 : +10) {
      copy(X[bx * 128 : +128, k * 64 : +64], s)
      reduce_sum(s, c, dim=0)
    }
    copy(c, Q[0 : +64])
  }
}
// CHECK: alloc s: shared float32[128, 64]
// CHECK-NOT: row_group
)");
}

namespace {

// A running sum and a running maximum along rows, with 128-row tiles of 64
// float32 (32 KiB: more than a quarter of any L1), and a guarded store of
// each row's maximum.
const char* kWideRows = R"(
def wide[M, N, block_M=128, block_N=64](X: Tensor[(M, N), float32], S: Tensor[(M, N), float32],
                                       Q: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, block_M), threads=block_M) as bx:
        s = T.alloc_shared((block_M, block_N), float32)
        acc = T.alloc_fragment((block_M,), float32)
        big = T.alloc_fragment((block_M,), float32)
        T.clear(acc)
        T.fill(big, -T.infinity(float32))
        for k in T.serial(T.ceildiv(N, block_N)):
            T.copy(X[bx * block_M, k * block_N], s)
            T.reduce_max(s, big, dim=1, clear=False)
            for i in T.Parallel(block_M):
                for j in T.serial(block_N):
                    acc[i] += s[i, j]
                    s[i, j] = acc[i]
            T.copy(s, S[bx * block_M, k * block_N])
        for i in T.Parallel(block_M):
            if bx * block_M + i < M:
                Q[bx * block_M + i] = big[i]
)";

}  // namespace

TEST_CASE("blocks of wide independent rows on the CPU agree with the interpreter and with plain loops") {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 128}, {300, 100}, {37, 200}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    CpuCompiled c = compileTl(kWideRows);
    REQUIRE_MESSAGE(c.module, c.rendered());
    auto r = runAgainstOracle(c, {{"M", rows}, {"N", cols}}, 5, {}, [&](driver::RunArgs& args) {
      const auto& X = *args.tensors[0];
      const auto& S = *args.tensors[1];
      const auto& Q = *args.tensors[2];
      int64_t tiles = (cols + 63) / 64;
      for (int64_t i = 0; i < rows; ++i) {
        double sum = 0, best = -INFINITY;
        // The tile's columns past N read as zeros (the copy's fill).
        for (int64_t j = 0; j < tiles * 64; ++j) {
          double x = j < cols ? X.get(i * cols + j) : 0.0;
          sum += x;
          best = std::max(best, x);
          if (j < cols) CHECK(std::fabs(S.get(i * cols + j) - sum) <= 1e-4 * (1 + std::fabs(sum)));
        }
        CHECK(Q.get(i) == float(best));
      }
    });
    CHECK_MESSAGE(r.pass, r.log);
  }
}
