// Pass cpu-split-block-rows (compiler/passes/cpu_split_block_rows.h): checked
// on textual tile IR, for the split and for what it must leave alone. The
// row recurrences of cpu_row_loops_test.cpp run split (128-row tiles), and
// the zoo's top-k (cpu_select_stores_test.cpp), against the interpreter.
#include <doctest/doctest.h>

#include "compiler/passes/cpu_split_block_rows.h"
#include "tests/support/pass_text.h"

using namespace tlc;

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
  std::string text = kRunningSum;
  auto replace = [&](const std::string& from, const std::string& to) { text.replace(text.find(from), from.size(), to); };
  replace("Y: float32[1000, 640])", "Y: float32[1000, 640], Q: float32[1000])");
  replace("    fill(acc, 0.0)\n", "    alloc m: fragment float32[128]\n    fill(acc, 0.0)\n");
  replace("k * 64 : +64], s)\n", "k * 64 : +64], s)\n      reduce_max(s, m, dim=1, clear=false)\n");
  replace("k * 64 : +64])\n    }\n", R"(k * 64 : +64])
    }
    for i in parallel(0 : +128) {
      if bx * 128 + i < 1000 {
        Q[bx * 128 + i] = m[i] + s[i, i % 64]
      }
    }
)");
  checkSplit(text + R"(
// CHECK: for row_group in serial(0 : +4) {
// CHECK: reduce_max(s, m, dim=1, clear=false)
// CHECK: for i_1 in parallel(0 : +32) {
// CHECK-NEXT: if bx * 128 + (i_1 + row_group * 32) < 1000 {
// CHECK-NEXT: Q[bx * 128 + (i_1 + row_group * 32)] = m[i_1] + s[i_1, (i_1 + row_group * 32) % 64]
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
