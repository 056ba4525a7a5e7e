// The kernels written in TileLang's spelling (tests/tilelang/) on the CPU
// backend, compared with the reference interpreter (which
// tests/sema/tilelang_style_test.cpp compares with naive references) at
// sizes the tiles do not divide.
#include <doctest/doctest.h>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

static void checkStyle(const std::string& name, const std::vector<Define>& defines,
                       const std::map<std::string, int64_t>& dims = {},
                       const std::map<std::string, std::pair<double, double>>& fills = {}) {
  CpuCompiled c = compileTlFile(std::string(TLC_SOURCE_DIR) + "/tests/tilelang/" + name, defines);
  CAPTURE(name);
  OracleComparison r = runAgainstOracle(c, dims, 1, {}, {}, fills);
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

TEST_CASE("TileLang-style gemv sized by DataType(dtype).bits, with `tl` and no import, on the CPU") {
  checkStyle("gemv_vectorized.tl", {{"N", "37"}, {"K", "300"}});
  checkStyle("gemv_vectorized.tl", {{"dtype", "float32"}, {"block_N", "8"}}, {{"N", 45}, {"K", 130}});
}

TEST_CASE("TileLang-style top-level prim_func on the CPU") {
  checkStyle("bias_relu.tl", {{"M", "45"}, {"N", "100"}, {"block_M", "16"}, {"block_N", "32"}});
}

TEST_CASE("TileLang-style flash attention with a grouped pipeline plan on the CPU") {
  checkStyle("flash_attention.tl", {{"dim", "64"}}, {{"batch", 2}, {"heads", 3}, {"seq_len", 100}});
  checkStyle("flash_attention.tl", {{"dim", "32"}, {"seq_len", "70"}, {"block_N", "32"}}, {{"batch", 1}, {"heads", 2}});
}

TEST_CASE("TVM spellings of operators, T.cumsum and ignored hints on the CPU") {
  checkStyle("tvm_spellings.tl", {}, {{"M", 21}});
  checkStyle("tvm_spellings.tl", {{"M", "8"}, {"N", "5"}});
  checkStyle("python_helper.tl", {}, {{"N", 37}});
}

TEST_CASE("TileLang-style batched gemm: T.dynamic, T.use_swizzle on a 3-D grid, T.Cast") {
  checkStyle("batched_gemm.tl", {{"N", "70"}, {"K", "50"}}, {{"batch", 3}, {"M", 150}});
  // -D binds the `T.dynamic` dimension as it binds a factory parameter.
  checkStyle("batched_gemm.tl", {{"M", "45"}, {"N", "33"}, {"K", "100"}, {"batch", "2"}});
}

TEST_CASE("TileLang-style split-K gemm with a tile-level T.atomic_add, and while loops, on the CPU") {
  checkStyle("splitk_atomic.tl", {{"M", "70"}, {"N", "45"}, {"K", "96"}});
  checkStyle("splitk_atomic.tl", {{"dtype", "bfloat16"}, {"split_k", "2"}, {"K", "128"}}, {{"M", 33}, {"N", 100}});
  checkStyle("splitk_atomic_x2.tl", {{"M", "70"}, {"N", "46"}, {"K", "96"}});
  checkStyle("while_loops.tl", {}, {{"M", 11}}, {{"V", {1, 1000}}});
  checkStyle("while_loops.tl", {{"per_block", "4"}, {"N", "32"}}, {{"M", 9}}, {{"V", {1, 100000}}});
}

TEST_CASE("TileLang-style thread-level code after T.get_thread_binding on the CPU") {
  checkStyle("thread_binding.tl", {{"N", "45"}, {"K", "37"}});
  checkStyle("thread_binding.tl", {{"N", "8"}, {"K", "300"}});
  checkStyle("if_frames.tl", {{"M", "70"}});
}

TEST_CASE("TileLang-style atomics returning the previous value on the CPU") {
  checkStyle("atomic_prev.tl", {}, {{"N", 300}, {"B", 7}});
  checkStyle("atomic_prev.tl", {{"N", "1000"}}, {{"B", 3}});  // many blocks updating three bins at once
}

TEST_CASE("TileLang-style reducers on the CPU") {
  checkStyle("reducers.tl", {}, {{"M", 37}, {"N", 300}});
  checkStyle("reducers.tl", {{"M", "70"}, {"N", "100"}});
}

TEST_CASE("TileLang-style convolution with T.c2d_im2col on the CPU") {
  checkStyle("convolution.tl", {{"N", "2"}, {"C", "32"}, {"H", "9"}, {"W", "11"}, {"F", "40"}, {"K", "3"}, {"S", "1"},
                                {"D", "1"}, {"P", "1"}});
  checkStyle("convolution.tl", {{"N", "1"}, {"C", "24"}, {"H", "13"}, {"W", "10"}, {"F", "20"}, {"K", "3"}, {"S", "2"},
                                {"D", "2"}, {"P", "2"}, {"block_K", "64"}});
}
