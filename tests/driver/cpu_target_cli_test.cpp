// The CPU target's options on the command line: bounds checks under
// `run --check` and `--check-bounds` (run and build), large tiles, and bad
// `--cpu` / `--features`, which are command-line errors (exit code 2) for
// run, build and emit alike.
#include <doctest/doctest.h>

#include <dlfcn.h>

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

fs::path writeTemp(const std::string& name, const std::string& text) {
  fs::path dir = driver_test::scratchDir("cpu_cli");
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

std::string add() { return std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl"; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// An out-of-bounds store the front end cannot see (the index is a product).
const char* kOobStore =
    "def k[N=64](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):\n"
    "    with T.Kernel(1, threads=64) as bx:\n"
    "        for i in T.Parallel(N):\n"
    "            B[i * 1000] = A[i]\n";

}  // namespace

TEST_CASE("run --target=cpu --check-bounds stops an out-of-bounds store with a located error, exit code 1") {
  fs::path p = writeTemp("oob_store.tl", kOobStore);
  Result r = tlc("run --target=cpu --check-bounds " + p.string());
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(contains(r.out, p.string() + ":4:13: error: index 1000 is out of bounds for dimension 0 of `B` (size 64) "
                                     "[out-of-bounds-access]"));
  CHECK(contains(r.out, "B[i * 1000] = A[i]\n   |             ^~~~~~~~~~~~~~~~~~\n"));
  CHECK(contains(r.out, ":1:39: note: `B` is declared here"));
  CHECK(contains(r.out, "note: the store's index is (1000) and `B` has shape (64); in block (bx=0) of the grid of `k`"));
}

TEST_CASE("run --target=cpu --check fails an out-of-bounds store, exit code 1, naming the tensor and line") {
  fs::path p = writeTemp("oob_store.tl", kOobStore);
  Result r = tlc("run --target=cpu --check " + p.string());
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(contains(r.out, p.string() + ":4:13: error: index 1000 is out of bounds for dimension 0 of `B`"));
}

TEST_CASE("a negative index in a .tir kernel is reported, not a heap corruption") {
  // `b - 1` is -1 at run time; the verifier rejects constant indices itself.
  fs::path p = writeTemp("store_neg.tir",
                         "func @f(A: float32[4]) {\n"
                         "  kernel grid(1) threads(32) as (b) {\n"
                         "    A[b - 1] = 1.0\n"
                         "  }\n"
                         "}\n");
  Result r = tlc("run --target=cpu --check-bounds " + p.string());
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(contains(r.out, ":3:5: error: index -1 is out of bounds for dimension 0 of `A` (size 4) [out-of-bounds-access]"));
}

TEST_CASE("build --check-bounds makes a .so that exports its failure reports; without it, none") {
  fs::path p = writeTemp("oob_store.tl", kOobStore);
  for (bool checked : {true, false}) {
    fs::path so = p.parent_path() / (checked ? "oob_checked.so" : "oob_plain.so");
    Result r = tlc("build --target=cpu " + std::string(checked ? "--check-bounds " : "") + p.string() + " -o " +
                   so.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != nullptr);
    CHECK((dlsym(lib, "tlc_module_last_failure") != nullptr) == checked);
    dlclose(lib);
  }
}

TEST_CASE("tiles larger than a thread's stack run") {
  Result r = tlc("run --target=cpu --check " + add() + " -D block_M=32768 -D M=64 -D N=64");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(contains(r.out, "check: PASS"));
}

TEST_CASE("--cpu and --features that LLVM cannot generate code for are command-line errors for run, build and emit") {
  fs::path so = driver_test::scratchDir("cpu_cli") / "bad.so";
  for (const std::string& bad : {std::string("--features=-sse"), std::string("--features=-sse2"),
                                 std::string("--cpu=i386"), std::string("--cpu=znver9"),
                                 std::string("--features=+avx512ff")}) {
    for (const std::string& cmd : {"run " + add() + " --dim M=4 --dim N=4 " + bad,
                                   "build " + add() + " -o " + so.string() + " " + bad,
                                   "emit --stage=llvm " + add() + " " + bad}) {
      Result r = tlc(cmd);
      INFO(cmd, "\n", r.out);
      CHECK(r.code == 2);
      CHECK(r.out.rfind("tlc: error: ", 0) == 0);
      CHECK_FALSE(contains(r.out, "LLVM ERROR"));
    }
  }
  Result sse = tlc("run " + add() + " --dim M=4 --dim N=4 --features=-sse");
  CHECK(contains(sse.out, "x86-64 code needs SSE and SSE2"));
  Result typo = tlc("run " + add() + " --dim M=4 --dim N=4 --cpu=znver9");
  CHECK(contains(typo.out, "did you mean `znver"));
  CHECK(contains(typo.out, "x86-64-v3"));
}

TEST_CASE("--check-bounds with another target is a command-line error") {
  Result r = tlc("run --target=interp --check-bounds " + add() + " --dim M=4 --dim N=4");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(contains(r.out, "tlc: error: --check-bounds is an option of --target=cpu"));
}
