// Register fragments whose shapes the block's threads do not divide
// (padded_fragments.tl): they stay in registers with a padded row-group
// layout, and every kernel is race-free and equal to the interpreter on
// sm_80, sm_90a and gfx942 at sizes the tiles do not divide.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

const char* kFile = "tests/cuda_emu_examples/padded_fragments.tl";

}  // namespace

TEST_CASE("fragments the threads do not divide live in registers, not in shared memory") {
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  options.lineDirectives = false;
  const std::string src = test::emittedSource(kFile, options);
  CHECK(src.find("shared memory") == std::string::npos);
  // Each thread's registers, padding slots included: the cost rule's G and V
  // for each tile, over its padded extents.
  for (const char* placed : {
           // scale: [4, 1000] float32, one row of 8 runs of 4 per thread
           "`X_f`: registers, tile of a row-group layout (32 threads per row, runs of 4, padded to 4 x 1024)\n"
           "  float X_f[32];",
           // stats: [7, 33], 8 row slots of 16 threads, 3 columns each
           "`X_f`: registers, tile of a row-group layout (16 threads per row, runs of 1, padded to 8 x 48)\n"
           "  float X_f[3];",
           "`c`: registers, column vector of a row-group layout (16 threads per row, runs of 1, padded to 8 x 48)\n"
           "  float c_1[3];",
           // softmax: [1, 1000] on the whole block
           "`X_f`: registers, tile of a row-group layout (128 threads per row, runs of 4, padded to 1 x 1024)\n"
           "  float X_f[8];",
           // vector: [1000], the rows of a [1000, 1] tile
           "`v`: registers, row vector of a row-group layout (1 threads per row, runs of 1, padded to 1024 x 1)\n"
           "  float v[8];",
           // half_rows: [100, 24] float16, a row per thread
           "`X_f`: registers, tile of a row-group layout (1 threads per row, runs of 8, padded to 128 x 24)\n"
           "  __half X_f[24];",
       })
    CHECK_MESSAGE(src.find(placed) != std::string::npos, placed);
  // The padding is skipped: the last runs of scale's rows, stats' last row slot.
  CHECK(src.find("* 4) < 1000))") != std::string::npos);
  CHECK(src.find(" < 7))") != std::string::npos);
}

TEST_CASE("padded register fragments agree with the interpreter") {
  struct Case {
    const char* func;
    std::map<std::string, int64_t> dims;
  };
  const std::vector<Case> cases = {
      {"scale", {{"M", 10}, {"N", 2100}}},      {"scale", {{"M", 3}, {"N", 999}}},
      {"stats", {{"M", 30}, {"N", 33}}},        {"stats", {{"M", 5}, {"N", 33}}},
      {"softmax", {{"M", 3}, {"N", 1000}}},     {"vector", {{"N", 2345}}},
      {"half_rows", {{"M", 230}, {"N", 24}}},   {"column_sums", {{"M", 45}, {"N", 70}}},
  };
  for (const char* arch : {"sm_80", "sm_90a", "gfx942"})
    for (const Case& c : cases) {
      CAPTURE(arch);
      CAPTURE(c.func);
      SourceManager sm;
      DiagnosticEngine diags{sm};
      ir::Module module = test::compileTreeFile(kFile, sm, diags);
      std::string log;
      int rc = test::runEmulatedCheck(module, diags, c.dims, 7, &log, c.func, arch);
      INFO(log);
      CHECK(rc == 0);
    }
}
