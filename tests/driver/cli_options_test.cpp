// Option values on the `tlc` command line: --version, the list of targets
// with did-you-mean hints, --stage, the --check progress line, --warn-spills,
// --no-tma-staging and check --target.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/driver/run_tlc.h"

using driver_test::Result;
using driver_test::tlc;

namespace {

std::string example(const std::string& rel) { return std::string(TLC_SOURCE_DIR) + "/examples/" + rel; }

}  // namespace

TEST_CASE("--version prints the project version and the runtime ABI version") {
  Result r = tlc("--version");
  CHECK(r.code == 0);
  CHECK(r.out == std::string("tlc ") + TLC_TEST_VERSION + " (runtime ABI version 1)\n");
}

TEST_CASE("an unknown target lists the targets and suggests the closest") {
  Result typo = tlc("run " + example("elementwise_add/add.tl") + " --target=cpuu");
  INFO(typo.out);
  CHECK(typo.code == 2);
  CHECK(typo.out.find("unknown target `cpuu`; did you mean `cpu`?") != std::string::npos);
  CHECK(typo.out.find("the targets are: interp, cpu") != std::string::npos);
  Result huge = tlc("run " + example("elementwise_add/add.tl") + " --target=cuda:sm_99999999999999999999");
  CHECK(huge.code == 2);
  CHECK(huge.out.find("unknown target") != std::string::npos);
  std::string scratch = driver_test::scratchRoot().string();
  Result bare = tlc("build " + example("elementwise_add/add.tl") + " --target=sm_90 -o " + scratch + "/bare.cubin");
  CHECK(bare.code == 2);
  INFO(bare.out);
#ifdef TLC_TEST_HAVE_CUDA
  CHECK(bare.out.find("did you mean `cuda:sm_90`?") != std::string::npos);
  CHECK(bare.out.find("cuda:sm_90a") != std::string::npos);
  Result old = tlc("build " + example("elementwise_add/add.tl") + " --target=cuda:sm_75 -o " + scratch + "/old.cubin");
  INFO(old.out);
  CHECK(old.code == 2);
  CHECK(old.out.find("needs sm_80 or newer") != std::string::npos);
  CHECK(old.out.find("ptxas") == std::string::npos);
  Result newer = tlc("emit --stage=cuda --target=cuda:sm_100 " + example("elementwise_add/add.tl"));
  CHECK(newer.code == 2);
  CHECK(newer.out.find("does not generate code for sm_100 yet") != std::string::npos);
  Result misspelled = tlc("run " + example("elementwise_add/add.tl") + " --target=cuda:sm90 --emulate");
  CHECK(misspelled.code == 2);
  CHECK(misspelled.out.find("did you mean `cuda:sm_90`?") != std::string::npos);
#endif
}

TEST_CASE("the help lists every target") {
  Result r = tlc("run --help");
  CHECK(r.code == 0);
  CHECK(r.out.find("interp | cpu") != std::string::npos);
#ifdef TLC_TEST_HAVE_CUDA
  CHECK(r.out.find("cuda:sm_90a") != std::string::npos);
#endif
}

TEST_CASE("an unknown command suggests the closest") {
  Result r = tlc("chek " + example("elementwise_add/add.tl"));
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown command `chek`; did you mean `check`?") != std::string::npos);
  CHECK(r.out.find("the commands are: check, emit, run, build") != std::string::npos);
}

TEST_CASE("an unknown --stage suggests the closest") {
  Result r = tlc("emit --stage=tirr " + example("elementwise_add/add.tl"));
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown stage `tirr`; did you mean `tir`?") != std::string::npos);
  CHECK(r.out.find("the stages are: tokens, ast, tir") != std::string::npos);
}

TEST_CASE("run --check prints a progress line only when asked to on a pipe, and keeps stdout clean") {
  std::string run = "run " + example("elementwise_add/add.tl") + " -D M=64 -D N=64 --target=interp --check";
  Result quiet = tlc(run);
  CHECK(quiet.code == 0);
  CHECK(quiet.out.find("tlc: --check") == std::string::npos);
  Result forced = tlc(run, "TLC_PROGRESS=1 TLC_PROGRESS_DELAY_MS=0");
  INFO(forced.out);
  CHECK(forced.code == 0);
  CHECK(forced.out.rfind("tlc: --check: running the reference interpreter (0 s)\n", 0) == 0);
  CHECK(forced.out.find("check: PASS") != std::string::npos);
  Result off = tlc(run, "TLC_PROGRESS=0 TLC_PROGRESS_DELAY_MS=0");
  CHECK(off.out.find("tlc: --check") == std::string::npos);
}

#ifdef TLC_TEST_HAVE_CUDA
TEST_CASE("--warn-spills reports the kernels whose registers ptxas spills; builds do not by default") {
  // The row-sum example's sm_80 kernel spills (its shifted loads of tiles
  // whose rows are not aligned hold a whole tile share in registers); a build
  // with the flag is compiled even when the cache holds it.
  std::string scratch = driver_test::scratchRoot().string();
  std::string build = "build " + example("row_reduce/row_sum.tl") + " --target=cuda:sm_80 -o " + scratch + "/rs.cubin";
  Result plain = tlc(build);
  INFO(plain.out);
  REQUIRE(plain.code == 0);
  CHECK(plain.out.find("cuda-register-spills") == std::string::npos);
  for (int twice = 0; twice < 2; ++twice) {
    Result warned = tlc(build + " --warn-spills");
    INFO(warned.out);
    CHECK(warned.code == 0);
    CHECK(warned.out.find("row_sum.tl:10:5: warning: `row_sum_kernel0` spills registers to local memory (ptxas: ") !=
          std::string::npos);
    CHECK(warned.out.find("[cuda-register-spills]") != std::string::npos);
  }
}
#endif

#ifdef TLC_TEST_HAVE_CUDA
TEST_CASE("run stages a gemm operand TMA cannot address, or with --no-tma-staging runs the version without TMA") {
  // K = 41 float16 elements: rows of 82 bytes, which TMA cannot address.
  std::string run =
      "run " + example("gemm/gemm.tl") + " --target=cuda:sm_90a --emulate --check --dim M=64 --dim N=64 --dim K=41";
  Result staged = tlc(run);
  INFO(staged.out);
  CHECK(staged.code == 0);
  CHECK(staged.out.find("reads tensor `A` through a copy whose rows are padded from 82 to 96 bytes") !=
        std::string::npos);
  CHECK(staged.out.find("check: PASS") != std::string::npos);
  Result plain = tlc(run + " --no-tma-staging");
  INFO(plain.out);
  CHECK(plain.code == 0);
  CHECK(plain.out.find("runs its version without TMA: tensor `A`") != std::string::npos);
  CHECK(plain.out.find("padded") == std::string::npos);
  CHECK(plain.out.find("check: PASS") != std::string::npos);
}
#endif

TEST_CASE("tlc check --target checks the program for that target, as T.target sees it") {
  std::string file = (driver_test::scratchRoot() / "target_check.tl").string();
  std::ofstream(file) << "def k[N, block=0 if T.target(\"hip\") else 32](A: Tensor[(N,), float32]):\n"
                         "    with T.Kernel(T.ceildiv(N, block), threads=32) as bx:\n"
                         "        A[bx] = 1.0\n";
  Result none = tlc("check " + file + " -D N=64");
  INFO(none.out);
  CHECK(none.code == 0);
  Result hip = tlc("check " + file + " -D N=64 --target=hip:gfx942");
  INFO(hip.out);
  CHECK(hip.code == 1);
  CHECK(hip.out.find("[division-by-zero]") != std::string::npos);
  Result typo = tlc("check " + file + " --target=hip:gfx9999");
  CHECK(typo.code == 2);
}
