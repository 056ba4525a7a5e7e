// The kernels written in TileLang's spelling (tests/tilelang/) on the CPU
// backend, compared with the reference interpreter (which
// tests/sema/tilelang_style_test.cpp compares with naive references) at
// sizes the tiles do not divide.
#include <doctest/doctest.h>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

static void checkStyle(const std::string& name, const std::vector<Define>& defines,
                       const std::map<std::string, int64_t>& dims = {}) {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/tests/tilelang/" + name, defines);
  CAPTURE(name);
  OracleComparison r = runAgainstOracle(c, dims);
  INFO(r.log);
  CHECK(r.compiled);
  CHECK(r.ran);
  CHECK(r.pass);
}

TEST_CASE("TileLang-style gemm factory on the CPU") {
  checkStyle("matmul.tl", {{"M", "130"}, {"N", "70"}, {"K", "100"}});
  checkStyle("matmul.tl", {{"dtype", "bfloat16"}, {"block_M", "32"}, {"block_N", "32"}}, {{"M", 45}, {"N", 77}, {"K", 33}});
}

TEST_CASE("TileLang-style softmax factory on the CPU") {
  checkStyle("softmax.tl", {{"M", "37"}, {"N", "300"}});
  checkStyle("softmax.tl", {{"N", "100"}, {"dtype", "float32"}, {"block_N", "32"}}, {{"M", 21}});
  // N dynamic too: the factory's `num_tiles = T.ceildiv(N, block_N)` is computed at run time.
  checkStyle("softmax.tl", {}, {{"M", 13}, {"N", 150}});
}

TEST_CASE("TileLang-style top-level prim_func on the CPU") {
  checkStyle("bias_relu.tl", {{"M", "45"}, {"N", "100"}, {"block_M", "16"}, {"block_N", "32"}});
}
