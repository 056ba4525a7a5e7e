// The `tlc` command line as a user meets it: exit codes, located errors with
// a caret, and the tile-IR text round trip through `tlc emit --stage=tir`.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/driver/run_tlc.h"

namespace fs = std::filesystem;
using driver_test::Result;
using driver_test::tlc;

namespace {

std::string example(const std::string& rel) { return std::string(TLC_SOURCE_DIR) + "/examples/" + rel; }

fs::path writeTemp(const std::string& name, const std::string& text) {
  fs::path dir = driver_test::scratchDir("cli");
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// A located error: "file:line:col: error: ... [kind]", the source line and a caret.
void expectLocatedError(const Result& r, const std::string& kind, int line) {
  CHECK(r.code == 1);
  INFO(r.out);
  CHECK(r.out.find(":" + std::to_string(line) + ":") != std::string::npos);
  CHECK(r.out.find("error:") != std::string::npos);
  CHECK(r.out.find("[" + kind + "]") != std::string::npos);
  CHECK(r.out.find('^') != std::string::npos);
}

}  // namespace

TEST_CASE("check accepts every example") {
  for (const char* f : {"gemm/gemm.tl", "elementwise_add/add.tl", "softmax/softmax.tl", "rmsnorm/rmsnorm.tl",
                        "row_reduce/row_sum.tl"}) {
    Result r = tlc("check " + example(f));
    INFO(f, r.out);
    CHECK(r.code == 0);
    CHECK(r.out.empty());
  }
}

TEST_CASE("an undefined name is a located error with exit code 1") {
  fs::path p = writeTemp("undefined.tl",
                         "def f(A: Tensor[(4,), float32]):\n"
                         "    with T.Kernel(1) as bx:\n"
                         "        B[0] = 1.0\n");
  expectLocatedError(tlc("check " + p.string()), "undefined-name", 3);
}

TEST_CASE("a gemm shape mismatch is a located error with exit code 1") {
  fs::path p = writeTemp("gemm_shape.tl",
                         "def f(A: Tensor[(64, 64), float16]):\n"
                         "    with T.Kernel(1, threads=128) as bx:\n"
                         "        A_s = T.alloc_shared((64, 32), float16)\n"
                         "        B_s = T.alloc_shared((16, 64), float16)\n"
                         "        C_f = T.alloc_fragment((64, 64), float32)\n"
                         "        T.gemm(A_s, B_s, C_f)\n");
  Result r = tlc("check " + p.string());
  expectLocatedError(r, "gemm-shape-mismatch", 6);
}

TEST_CASE("check runs the pipeline-plan checks of run and build") {
  std::string kernel =
      "def f[K](A: Tensor[(64, K), float16], C: Tensor[(64, 64), float32]):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 32), float16)\n"
      "        C_f = T.alloc_fragment((64, 64), float32)\n"
      "        T.clear(C_f)\n"
      "        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2, PLAN):\n"
      "            T.copy(A[0, k * 32], A_s)\n"
      "            T.gemm(A_s, A_s, C_f, transpose_B=True)\n"
      "        T.copy(C_f, C)\n";
  auto with = [&](const std::string& plan) {
    std::string text = kernel;
    text.replace(text.find("PLAN"), 4, plan);
    return text;
  };
  // Three order entries or one stage entry for two statements: the errors `tlc run` gives on a GPU target.
  fs::path bad = writeTemp("plan_len.tl", with("order=[0, 1, 2]"));
  expectLocatedError(tlc("check " + bad.string()), "pipeline-plan-invalid", 6);
  fs::path len = writeTemp("plan_stage_len.tl", with("stage=[1]"));
  expectLocatedError(tlc("check " + len.string()), "pipeline-plan-invalid", 6);
  // TileLang's plan for three statements: a note, exit code 0.
  fs::path note = writeTemp("plan_note.tl", with("order=[-1, 0, 1], stage=[-1, 0, 1]"));
  Result r = tlc("check " + note.string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("plan_note.tl:6:") != std::string::npos);
  CHECK(r.out.find("note: this loop's TileLang pipeline plan does not fit") != std::string::npos);
  Result ok = tlc("check " + writeTemp("plan_ok.tl", with("order=[-1, 0], stage=[-1, 1]")).string());
  CHECK(ok.code == 0);
  CHECK(ok.out.empty());
  // TileLang's flash-attention plan maps onto the 14 statements, but its stage 0 holds the first gemm and the
  // softmax: tlc's own plan, with a note.
  Result fa = tlc("check " + std::string(TLC_SOURCE_DIR) + "/tests/tilelang/flash_attention.tl -D dim=64");
  INFO(fa.out);
  CHECK(fa.code == 0);
  CHECK(fa.out.find("statement 1 (stage 0) is not a tile tlc can load ahead") != std::string::npos);
  CHECK(fa.out.find("[pipeline-plan-ignored]") != std::string::npos);
}

TEST_CASE("inconsistent indentation is a located error with exit code 1") {
  fs::path p = writeTemp("indent.tl",
                         "def f(A: Tensor[(4,), float32]):\n"
                         "    with T.Kernel(1) as bx:\n"
                         "            A[0] = 1.0\n"
                         "        A[1] = 2.0\n");
  Result r = tlc("check " + p.string());
  CHECK(r.code == 1);
  INFO(r.out);
  CHECK(r.out.find(":4:") != std::string::npos);
  CHECK(r.out.find('^') != std::string::npos);
}

TEST_CASE("emit --stage=tir output parses back to identical text for every example") {
  for (const char* f : {"gemm/gemm.tl", "elementwise_add/add.tl", "softmax/softmax.tl", "rmsnorm/rmsnorm.tl",
                        "row_reduce/row_sum.tl"}) {
    for (const char* defines : {"", "-D M=257 -D N=257 -D K=257"}) {
      INFO(f, " ", defines);
      Result first = tlc(std::string("emit --stage=tir ") + example(f) + " " + defines);
      if (std::string(defines).size() && first.code != 0) continue;  // an example without M/N/K
      REQUIRE(first.code == 0);
      fs::path tir = writeTemp("roundtrip.tir", first.out);
      Result second = tlc("emit --stage=tir " + tir.string());
      REQUIRE(second.code == 0);
      CHECK(second.out == first.out);
    }
  }
}

TEST_CASE("emit --stage=tokens and --stage=ast print the front end's stages") {
  Result tokens = tlc("emit --stage=tokens " + example("gemm/gemm.tl"));
  CHECK(tokens.code == 0);
  CHECK(tokens.out.find("INDENT") != std::string::npos);
  Result ast = tlc("emit --stage=ast " + example("gemm/gemm.tl"));
  CHECK(ast.code == 0);
  CHECK(ast.out.find("gemm") != std::string::npos);
}

TEST_CASE("emit --passes prints the tile IR after the registered passes named") {
  Result r = tlc("emit --passes=pipeline-planning,expand-pipelines " + example("gemm/gemm.tl"));
  CHECK(r.code == 0);
  INFO(r.out);
  CHECK(r.out.find("versions(") != std::string::npos);
  CHECK(r.out.find("copy_async(") != std::string::npos);
  CHECK(r.out.find("wait_group(") != std::string::npos);
  Result unknown = tlc("emit --passes=pipeline-planing " + example("gemm/gemm.tl"));
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("unknown pass `pipeline-planing` (known passes: simplify,") != std::string::npos);
  Result stage = tlc("emit --stage=cuda --passes=simplify " + example("gemm/gemm.tl"));
  CHECK(stage.code == 2);
  CHECK(stage.out.find("--passes applies to --stage=tir") != std::string::npos);
}

TEST_CASE("command-line mistakes exit with code 2 and say what to do") {
  CHECK(tlc("frobnicate").code == 2);
  CHECK(tlc("check").code == 2);
  Result target = tlc("run " + example("gemm/gemm.tl") + " --target=tpu");
  CHECK(target.code == 2);
  CHECK(target.out.find("unknown target") != std::string::npos);
  Result dim = tlc("run " + example("gemm/gemm.tl") + " --target=interp --dim M");
  CHECK(dim.code == 2);
}

TEST_CASE("a missing file and a malformed -D are errors of the user's, exit code 1") {
  Result missing = tlc("check /nonexistent/k.tl");
  CHECK(missing.code == 1);
  CHECK(missing.out.find("file-not-readable") != std::string::npos);
  Result define = tlc("check " + example("gemm/gemm.tl") + " -D block_M");
  CHECK(define.code == 1);
  CHECK(define.out.find("bad-define") != std::string::npos);
}

TEST_CASE("run --target=interp prints a summary of every tensor") {
  Result r = tlc("run " + example("gemm/gemm.tl") + " --target=interp -D M=64 -D N=64 -D K=64 --seed 3");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("C ") != std::string::npos);
  CHECK(r.out.find("out") != std::string::npos);
}

TEST_CASE("emit --stage=cuda|ptx prints the CUDA backend's output for the requested arch") {
  Result cuda = tlc("emit --stage=cuda --target=cuda:sm_90 " + example("gemm/gemm.tl"));
  REQUIRE(cuda.code == 0);
  CHECK(cuda.out.find("__global__") != std::string::npos);
  Result ptx = tlc("emit --stage=ptx --target=cuda:sm_80 " + example("gemm/gemm.tl"));
  REQUIRE(ptx.code == 0);
  CHECK(ptx.out.find("mma.sync") != std::string::npos);
  CHECK(ptx.out.find("ldmatrix") != std::string::npos);
  CHECK(ptx.out.find("cp.async") != std::string::npos);
}

TEST_CASE("emit --stage=llvm|asm prints the CPU backend's output") {
  Result llvm = tlc("emit --stage=llvm " + example("elementwise_add/add.tl") + " -D M=64 -D N=64");
  REQUIRE(llvm.code == 0);
  CHECK(llvm.out.find("define") != std::string::npos);
  Result asmText = tlc("emit --stage=asm " + example("elementwise_add/add.tl") + " -D M=64 -D N=64");
  REQUIRE(asmText.code == 0);
  CHECK(asmText.out.find("ret") != std::string::npos);
}

TEST_CASE("run --target=cpu --check ignores layout annotations: results equal the interpreter's") {
  std::string dir = std::string(TLC_SOURCE_DIR) + "/tests/cuda_emu_examples/annotated_layouts/";
  for (const char* run : {"gemm_operands.tl --kernel gemm_operands --dim M=100 --dim N=70 --dim K=96",
                          "gemm_operands.tl --kernel gemm_shared_accumulator --dim M=100 --dim N=70 --dim K=96",
                          "row_groups.tl --kernel row_groups --dim M=77 --dim N=300",
                          "shared_fallback.tl --dim M=77"}) {
    Result r = tlc("run " + dir + run + " --target=cpu --check");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("check: PASS") != std::string::npos);
  }
}

TEST_CASE("run --kernel lowers that kernel alone: the others' parameters need no -D") {
  fs::path p = writeTemp("two_kernels.tl",
                         "def first[M, N, blk_a](A: Tensor[(M, N), float32], B: Tensor[(M, N), float32]):\n"
                         "    with T.Kernel(T.ceildiv(M, blk_a), threads=128) as bx:\n"
                         "        for i, j in T.Parallel(blk_a, N):\n"
                         "            if bx * blk_a + i < M:\n"
                         "                B[bx * blk_a + i, j] = A[bx * blk_a + i, j] * 2.0\n"
                         "\n"
                         "def second[M, N, blk_b](A: Tensor[(M, N), float32], B: Tensor[(M, N), float32]):\n"
                         "    with T.Kernel(T.ceildiv(M, blk_b), threads=128) as bx:\n"
                         "        for i, j in T.Parallel(blk_b, N):\n"
                         "            if bx * blk_b + i < M:\n"
                         "                B[bx * blk_b + i, j] = A[bx * blk_b + i, j] + 1.0\n");
  std::string file = p.string();
  Result first = tlc("run " + file + " --kernel first --target=interp -D blk_a=4 -D N=64 --dim M=10");
  CHECK(first.code == 0);
  CHECK(first.out.find("blk_b") == std::string::npos);
  // A define for the kernel not run is no error either.
  Result second = tlc("run " + file + " --kernel second --target=interp -D blk_a=4 -D blk_b=2 -D N=64 --dim M=10");
  CHECK(second.code == 0);
  // Without --kernel every kernel is lowered, and `second` lacks its tile.
  expectLocatedError(tlc("run " + file + " --target=interp -D blk_a=4 -D N=64 --dim M=10"), "unbound-compile-param", 7);
  // An unknown kernel still lists the file's kernels.
  Result unknown = tlc("run " + file + " --kernel third --target=interp -D blk_a=4 -D blk_b=2 -D N=64 --dim M=10");
  CHECK(unknown.code != 0);
  CHECK(unknown.out.find("`first`, `second`") != std::string::npos);
}
