// Layout and Fragment values, checked by enumerating every index.
#include <doctest/doctest.h>

#include <set>

#include "compiler/passes/layout.h"

using namespace tlc;
using namespace tlc::layout;

TEST_CASE("row-major layout is the flat offset and inverts to itself") {
  Layout l = Layout::rowMajor({4, 6});
  CHECK(l.apply({0, 0}) == std::vector<int64_t>{0});
  CHECK(l.apply({2, 5}) == std::vector<int64_t>{17});
  CHECK(l.outputShape() == std::vector<int64_t>{24});
  CHECK(l.isBijective());
  auto inv = l.inverse();
  REQUIRE(inv);
  CHECK(inv->apply({17}) == std::vector<int64_t>{2, 5});
  CHECK(l.str() == "Layout[4, 6] (i0, i1) -> (((i0 * 6) + i1))");
}

TEST_CASE("run-swizzled layouts give the rows of one LDS phase distinct banks at any column") {
  // {rows, cols, element bytes, run bytes, rows per phase}: MFMA operand reads
  // of 8 bytes (16 rows a phase) and of 4 bytes (32 rows, or 16 rows reading
  // two columns: 8-byte runs), over rows of 16 to 256 bytes.
  for (auto [rows, cols, bytes, run, phase] : std::vector<std::tuple<int64_t, int64_t, int, int64_t, int64_t>>{
           {64, 32, 2, 8, 16}, {64, 64, 1, 8, 16}, {32, 128, 1, 8, 16}, {64, 16, 4, 8, 16}, {64, 32, 4, 4, 32},
           {48, 8, 4, 8, 16}, {64, 16, 1, 4, 32}, {64, 128, 2, 8, 16}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    CAPTURE(bytes);
    REQUIRE(Layout::runSwizzleFits(cols, bytes, run, phase));
    Layout l = Layout::runSwizzled(rows, cols, bytes, run, phase);
    CHECK(l.isBijective());
    CHECK(l.outputShape() == std::vector<int64_t>{rows * cols});
    const int64_t runElems = run / bytes;
    for (int64_t c = 0; c < cols; c += runElems) {
      // `phase` consecutive rows read at column c: distinct runs of the 128
      // bytes of banks.
      for (int64_t r0 = 0; r0 + phase <= rows; r0 += phase) {
        std::set<int64_t> slots;
        for (int64_t r = r0; r < r0 + phase; ++r) slots.insert(l.apply({r, c})[0] * bytes % 128 / run);
        CHECK(slots.size() == (size_t)phase);
      }
      // A run stays contiguous.
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 1; k < runElems; ++k) CHECK(l.apply({r, c + k})[0] == l.apply({r, c})[0] + k);
    }
  }
  CHECK_FALSE(Layout::runSwizzleFits(24, 2, 8, 16));  // 48-byte rows
  CHECK_FALSE(Layout::runSwizzleFits(8, 1, 8, 16));   // 16 rows a line: a phase is conflict free already
}

TEST_CASE("layouts for tiles read across their rows move whole runs or 128-byte-aligned chunks") {
  // Rotated and XORed runs: permutations of the tile that move a row's runs
  // of S columns by the row's group of E rows, so that the groups a phase
  // reads at one column (rows r and r + E) land on different runs.
  for (auto [rows, cols, runElems, group] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {64, 32, 16, 8}, {16, 48, 16, 4}, {32, 64, 32, 4}, {8, 16, 16, 1}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    const int64_t runs = cols / runElems;
    std::vector<Layout> layouts{Layout::runRotated(rows, cols, runElems, group)};
    if (runs % 2 == 0) layouts.push_back(Layout::runXored(rows, cols, runElems, group, 2));
    for (const Layout& l : layouts) {
      CHECK(l.isBijective());
      CHECK(l.outputShape() == std::vector<int64_t>{rows * cols});
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; c += runElems) {
          const int64_t base = l.apply({r, c})[0];
          CHECK(base / cols == r);  // the run stays in its row
          for (int64_t k = 1; k < runElems; ++k) CHECK(l.apply({r, c + k})[0] == base + k);
          if (runs > 1 && r + group < rows) CHECK(l.apply({r + group, c})[0] % cols != base % cols);
        }
    }
  }
  // XORed chunks: each aligned 128 bytes keep their chunks (row-wise copies
  // of any row length stay conflict free), and every other group of E rows
  // moves its chunks by the mask.
  for (auto [rows, cols, bytes, group, mask] : std::vector<std::tuple<int64_t, int64_t, int, int64_t, int64_t>>{
           {16, 48, 2, 4, 2}, {32, 32, 1, 8, 1}, {16, 24, 4, 4, 4}}) {
    CAPTURE(cols);
    CAPTURE(mask);
    Layout l = Layout::chunksXored(rows, cols, bytes, group, mask);
    CHECK(l.isBijective());
    const int64_t chunkElems = 16 / bytes;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; c += chunkElems) {
        const int64_t flat = r * cols + c, phys = l.apply({r, c})[0];
        CHECK(phys / (8 * chunkElems) == flat / (8 * chunkElems));
        CHECK(phys / chunkElems == (flat / chunkElems ^ (r / group % 2 ? mask : 0)));
        for (int64_t k = 1; k < chunkElems; ++k) CHECK(l.apply({r, c + k})[0] == phys + k);
      }
  }
  // Groups that cut a run of 8 chunks would not give a permutation.
  CHECK_FALSE(Layout::chunksXorFits(16, 24, 4, 1));
  CHECK(Layout::chunksXorFits(16, 24, 4, 4));
}

TEST_CASE("swizzled shared layouts are permutations that spread 8 rows over 8 bank groups") {
  for (auto [rows, cols, bytes] : std::vector<std::tuple<int64_t, int64_t, int>>{
           {64, 64, 2}, {32, 32, 2}, {128, 16, 2}, {16, 128, 2}, {32, 32, 4}, {64, 8, 4}}) {
    Layout l = Layout::swizzled(rows, cols, bytes);
    CHECK(l.isBijective());
    CHECK(l.outputShape() == std::vector<int64_t>{rows * cols});
    // The 16-byte chunk at column 0 of 8 consecutive rows lands in distinct
    // 16-byte bank groups (ldmatrix reads 8 rows of 16 bytes at once).
    int64_t chunkElems = 16 / bytes;
    if (cols * bytes >= 128 / 4) {
      std::set<int64_t> groups;
      int64_t rowsPerLine = std::max<int64_t>(1, 128 / (cols * bytes));
      for (int64_t r = 0; r < 8; ++r) {
        int64_t off = l.apply({r, 0})[0];
        groups.insert((off / chunkElems) % 8);
      }
      if (cols * bytes * rowsPerLine >= 128) CHECK(groups.size() == 8);
    }
    // Elements of one 16-byte chunk stay contiguous (vector accesses remain legal).
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; c += chunkElems)
        for (int64_t k = 1; k < chunkElems; ++k) CHECK(l.apply({r, c + k})[0] == l.apply({r, c})[0] + k);
  }
}

TEST_CASE("composition substitutes the inner map") {
  // A transpose view of a row-major [4, 8] tile.
  auto vars = std::vector<ir::Var>{ir::makeVar("a"), ir::makeVar("b")};
  Layout transpose({8, 4}, vars, {ir::makeVarRef(vars[1]), ir::makeVarRef(vars[0])});
  Layout rm = Layout::rowMajor({4, 8});
  Layout composed = rm.compose(transpose);
  forEachIndex({8, 4}, [&](const std::vector<int64_t>& idx) {
    CHECK(composed.apply(idx)[0] == idx[1] * 8 + idx[0]);
  });
  // Composing with an inverse gives the identity.
  auto inv = composed.inverse();
  REQUIRE(inv);
  Layout back = inv->compose(composed);
  forEachIndex({8, 4}, [&](const std::vector<int64_t>& idx) { CHECK(back.apply(idx) == idx); });
}

TEST_CASE("a non-injective layout has no inverse") {
  auto vars = std::vector<ir::Var>{ir::makeVar("a")};
  Layout l({8}, vars, {ir::floorDiv(ir::makeVarRef(vars[0]), ir::makeInt(2))});
  CHECK_FALSE(l.isInjective());
  CHECK_FALSE(l.inverse());
}

TEST_CASE("mma.sync m16n8 accumulator fragment matches the PTX register map") {
  Fragment f = Fragment::mmaAccumulator(16, 8, 1, 1);
  std::string why;
  CHECK(f.isValid(&why));
  CHECK(f.threadCount() == 32);
  CHECK(f.registersPerThread() == 4);
  // PTX ISA: c0,c1 at row groupID, columns 2*threadInGroup + {0,1}; c2,c3 at row groupID+8.
  for (int64_t lane = 0; lane < 32; ++lane) {
    int64_t g = lane / 4, t = lane % 4;
    CHECK(f.threadOf({g, 2 * t}) == lane);
    CHECK(f.registerOf({g, 2 * t}) == 0);
    CHECK(f.registerOf({g, 2 * t + 1}) == 1);
    CHECK(f.threadOf({g + 8, 2 * t + 1}) == lane);
    CHECK(f.registerOf({g + 8, 2 * t + 1}) == 3);
  }
}

TEST_CASE("mma accumulator over a 2x2 warp grid covers the tile exactly once") {
  Fragment f = Fragment::mmaAccumulator(128, 128, 2, 2);
  CHECK(f.isValid());
  CHECK(f.threadCount() == 128);
  CHECK(f.registersPerThread() == 128 * 128 / 128);
  auto table = f.inverseTable();
  std::set<int64_t> seen(table.begin(), table.end());
  CHECK(seen.size() == 128 * 128);
  CHECK(!seen.count(-1));
}

TEST_CASE("strided fragment, replication and composition") {
  Fragment f = Fragment::rowMajorStrided({8, 16}, 32, 4);
  CHECK(f.isValid());
  CHECK(f.registersPerThread() == 4);
  CHECK(f.threadOf({0, 5}) == 1);
  CHECK(f.registerOf({0, 5}) == 1);
  Fragment r = f.replicateOver(4);
  CHECK(r.threadCount() == 128);
  CHECK(r.replicate() == 4);
  CHECK(r.isValid());
  CHECK(r.threadOf({0, 5}, 3) == 97);
  CHECK_FALSE(r == f);
  // A transposed view of the fragment places (j, i) where f places (i, j).
  auto vars = std::vector<ir::Var>{ir::makeVar("a"), ir::makeVar("b")};
  Layout transpose({16, 8}, vars, {ir::makeVarRef(vars[1]), ir::makeVarRef(vars[0])});
  Fragment t = f.compose(transpose);
  forEachIndex({16, 8}, [&](const std::vector<int64_t>& idx) {
    CHECK(t.threadOf(idx) == f.threadOf({idx[1], idx[0]}));
    CHECK(t.registerOf(idx) == f.registerOf({idx[1], idx[0]}));
  });
  CHECK(f.str().find("Fragment[8, 16] threads=32") == 0);
}

TEST_CASE("an invalid fragment is reported") {
  auto vars = std::vector<ir::Var>{ir::makeVar("a")};
  Fragment f({8}, vars, ir::makeInt(0), {ir::makeInt(0)}, 32);
  std::string why;
  CHECK_FALSE(f.isValid(&why));
  CHECK(why.find("holds two elements") != std::string::npos);
}

TEST_CASE("the panel layout of a tile whose warps own two 16-row slices stores the chunks in wgmma order") {
  // 4 warps, 128 rows: warp w owns rows [32 w, 32 w + 32); the first wgmma
  // reads slice 0 of every warp (rows 0-15, 32-47, 64-79, 96-111) as its 64
  // consecutive stored rows, the second one slice 1.
  layout::Layout l = layout::Layout::panels(128, 64, 2, 128, 2);
  CHECK(l.isBijective());
  for (int64_t r = 0; r < 128; ++r) {
    int64_t w = r / 32, a = r / 16 % 2;
    int64_t stored = (a * 4 + w) * 16 + r % 16;
    for (int64_t c = 0; c < 64; ++c) {
      int64_t off = l.apply({r, c})[0];
      CHECK(off / 64 == stored);
      CHECK(off % 64 / 8 == ((c / 8) ^ (r % 8)));
      CHECK(off % 8 == c % 8);
    }
  }
}

TEST_CASE("the wgmma panel layout is a bijection that keeps 16-byte chunks whole and swizzles them by the row") {
  for (auto [rows, cols, span] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {128, 128, 128}, {64, 64, 128}, {32, 256, 128}, {16, 32, 64}, {8, 16, 32}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    layout::Layout l = layout::Layout::panels(rows, cols, 2, span);
    CHECK(l.isBijective());
    int64_t panel = span / 2;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t off = l.apply({r, c})[0];
        // Panel c / panel holds all rows of its columns, span bytes per row.
        CHECK(off / (rows * panel) == c / panel);
        CHECK(off % (rows * panel) / panel == r);
        // Chunks of 8 elements stay contiguous; their order within the row is
        // the span's swizzle of the row.
        CHECK(off % 8 == c % 8);
        int64_t chunks = span / 16;
        CHECK(off % panel / 8 == ((c % panel / 8) ^ (r / (8 / chunks) % chunks)));
      }
  }
}
