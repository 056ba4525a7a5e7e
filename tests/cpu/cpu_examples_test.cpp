// Every example runs on the CPU backend and agrees with the reference
// interpreter on seeded random inputs, at sizes the tiles divide and at sizes
// they do not, in float32 and in 16-bit float types.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

static std::string example(const std::string& rel) { return std::string(TLC_SOURCE_DIR) + "/examples/" + rel; }

static void checkExample(const std::string& rel, const std::vector<Define>& defines,
                         const std::map<std::string, int64_t>& dims = {}) {
  CpuCompiled c = compileTlFile(example(rel), defines);
  std::string what = rel;
  for (const Define& d : defines) what += " -D " + d.name + "=" + d.value;
  for (const auto& [k, v] : dims) what += " --dim " + k + "=" + std::to_string(v);
  CAPTURE(what);
  OracleComparison r = runAgainstOracle(c, dims);
  INFO(r.log);
  CHECK(r.compiled);
  CHECK(r.ran);
  CHECK(r.pass);
}

TEST_CASE("gemm example: float32, divisible and non-divisible sizes") {
  checkExample("gemm/gemm.tl", {{"M", "256"}, {"N", "256"}, {"K", "128"}, {"dtype", "float32"}});
  checkExample("gemm/gemm.tl", {{"M", "257"}, {"N", "257"}, {"K", "257"}, {"dtype", "float32"}});
  checkExample("gemm/gemm.tl", {{"M", "33"}, {"N", "70"}, {"K", "45"}, {"dtype", "float32"}, {"block_M", "32"},
                                {"block_N", "64"}, {"block_K", "16"}});
}

TEST_CASE("gemm example: float16 and bfloat16 inputs with float32 accumulation") {
  checkExample("gemm/gemm.tl", {{"M", "257"}, {"N", "129"}, {"K", "100"}, {"dtype", "float16"}});
  checkExample("gemm/gemm.tl", {{"M", "130"}, {"N", "257"}, {"K", "96"}, {"dtype", "bfloat16"}});
}

TEST_CASE("gemm example: dynamic dimensions") {
  checkExample("gemm/gemm.tl", {{"dtype", "float32"}}, {{"M", 200}, {"N", 150}, {"K", 77}});
}

TEST_CASE("elementwise add example") {
  checkExample("elementwise_add/add.tl", {{"M", "257"}, {"N", "257"}});
  checkExample("elementwise_add/add.tl", {{"M", "256"}, {"N", "512"}, {"dtype", "float32"}});
  checkExample("elementwise_add/add.tl", {{"M", "100"}, {"N", "300"}, {"dtype", "bfloat16"}});
}

TEST_CASE("softmax, rmsnorm and row reduction examples") {
  checkExample("softmax/softmax.tl", {{"M", "257"}, {"N", "300"}});
  checkExample("softmax/softmax.tl", {{"M", "128"}, {"N", "256"}, {"dtype", "float32"}});
  checkExample("rmsnorm/rmsnorm.tl", {{"M", "257"}});
  checkExample("rmsnorm/rmsnorm.tl", {{"M", "64"}, {"N", "512"}, {"dtype", "bfloat16"}});
  checkExample("row_reduce/row_sum.tl", {{"M", "257"}, {"N", "300"}});
}

TEST_CASE("every example runs on the CPU at a size its tiles do not divide") {
  for (auto& e : std::filesystem::recursive_directory_iterator(std::string(TLC_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".tl") continue;
    std::string rel = std::filesystem::relative(e.path(), std::string(TLC_SOURCE_DIR) + "/examples").string();
    CpuCompiled probe = compileTlFile(e.path().string());
    if (!probe.module) continue;  // reported by the front end's own tests
    // Examples with more dimensions (attention's batch, sequence and heads)
    // would give the interpreter hours of work at these sizes: their own
    // test cases below pick sizes the tiles do not divide.
    if (probe.module->funcs[0]->shapeVars.size() > 2) continue;
    // Every dynamic dimension gets 257 (or 129 for the second one), via -D.
    std::vector<Define> defines;
    int k = 0;
    for (const ir::Var& v : probe.module->funcs[0]->shapeVars) defines.push_back({v->name, k++ == 0 ? "257" : "129"});
    checkExample(rel, defines);
  }
}

TEST_CASE("flash attention example: causal and not, grouped heads, sizes the tiles do not divide") {
  checkExample("flash_attention/mha_fwd_bshd.tl", {{"D", "64"}}, {{"B", 1}, {"S", 200}, {"H", 2}});
  checkExample("flash_attention/mha_fwd_bshd.tl", {{"causal", "True"}, {"dtype", "bfloat16"}}, {{"B", 2}, {"S", 129}, {"H", 1}});
  checkExample("flash_attention/mha_fwd_bshd.tl", {{"groups", "2"}, {"D", "64"}}, {{"B", 1}, {"S", 1}, {"H", 4}});
  checkExample("flash_attention/mha_fwd_bhsd.tl", {{"causal", "True"}, {"D", "64"}}, {{"B", 2}, {"S", 130}, {"H", 1}});
}
