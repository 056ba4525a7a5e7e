// Inputs that nest deeply: long straight-line code (every binding nests the
// rest of its block in the IR), long operator chains and deep expressions in
// .tir text. Each either compiles and runs on every target path or is a
// located error; none may overflow the stack (compiler/ir/limits.h).
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

fs::path writeTemp(const std::string& name, const std::string& text) {
  fs::path dir = driver_test::scratchDir("deep_inputs");
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// `lines` scalar bindings in one Parallel loop, each using the one before:
// x0 = A[i]; x1 = x0 * 1.5 + 1.0; ...; B[i] = x{lines-1}.
std::string straightLine(int lines) {
  std::string s =
      "def k[N=64](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):\n"
      "    with T.Kernel(1, threads=64) as bx:\n"
      "        for i in T.Parallel(N):\n"
      "            x0 = A[i]\n";
  for (int i = 1; i < lines; ++i)
    s += "            x" + std::to_string(i) + " = x" + std::to_string(i - 1) + " * 1.5 + 1.0\n";
  s += "            B[i] = x" + std::to_string(lines - 1) + "\n";
  return s;
}

void expectLocated(const Result& r, const std::string& kind, int line) {
  INFO(r.out.substr(0, 2000));
  CHECK(r.code == 1);
  CHECK(r.out.find(":" + std::to_string(line) + ":") != std::string::npos);
  CHECK(r.out.find("[" + kind + "]") != std::string::npos);
  CHECK(r.out.find('^') != std::string::npos);
}

}  // namespace

// The front end, the .tir text, the interpreter and every IR walker take
// 50000 lines. The backends' own compilers (LLVM for the CPU, NVRTC, the
// emulator's host compiler) take time that grows faster than the length of
// one basic block, so they get shorter inputs that still nest far deeper than
// a default-sized stack would hold in tlc's walkers.
TEST_CASE("50000 lines of straight-line code check, print, parse back and run on the interpreter") {
  fs::path tl = writeTemp("lets50000.tl", straightLine(50000));
  Result check = tlc("check " + tl.string());
  INFO(check.out.substr(0, 2000));
  CHECK(check.code == 0);
  Result interp = tlc("run --target=interp " + tl.string());
  INFO(interp.out.substr(0, 2000));
  CHECK(interp.code == 0);
  Result tir = tlc("emit --stage=tir " + tl.string());
  REQUIRE(tir.code == 0);
  fs::path printed = writeTemp("lets50000.tir", tir.out);
  Result again = tlc("emit --stage=tir " + printed.string());
  INFO(again.out.substr(0, 2000));
  CHECK(again.code == 0);
  CHECK(again.out == tir.out);
}

TEST_CASE("long straight-line code builds and runs on the CPU, CUDA and the CUDA emulator") {
  fs::path cpu = writeTemp("lets6000.tl", straightLine(6000));
  fs::path cuda = writeTemp("lets3000.tl", straightLine(3000));
  fs::path emulated = writeTemp("lets300.tl", straightLine(300));
  fs::path cubin = cuda.parent_path() / "lets3000.cubin";
  struct Step {
    const char* what;
    std::string args;
  };
  for (const Step& s : {Step{"cpu", "run --target=cpu " + cpu.string()},
                        Step{"cuda build", "build --target=cuda:sm_80 -o " + cubin.string() + " " + cuda.string()},
                        Step{"cuda emulator", "run --target=cuda:sm_80 --emulate " + emulated.string()}}) {
    Result r = tlc(s.args);
    INFO(s.what, ": ", r.out.substr(0, 2000));
    CHECK(r.code == 0);
  }
}

TEST_CASE("more scalar bindings in one kernel than the limit is a located error") {
  fs::path tl = writeTemp("lets100001.tl", straightLine(100001));
  expectLocated(tlc("check " + tl.string()), "nesting-too-deep", 100004);
}

TEST_CASE("a .tir chain of 20000 operands is a located error, not a stack overflow") {
  std::string chain = "A[0]";
  for (int i = 1; i < 20000; ++i) chain += " + A[0]";
  fs::path tir = writeTemp("chain20000.tir",
                           "func @f(A: float32[4]) {\n"
                           "  kernel grid(1) threads(32) as (b) {\n"
                           "    A[0] = " + chain + "\n"
                           "  }\n"
                           "}\n");
  expectLocated(tlc("emit --stage=tir " + tir.string()), "ir-nesting-too-deep", 3);
}

TEST_CASE("a .tir expression deeper than the limit is a located error even when its chains are short") {
  // 200 levels of brackets, each holding a chain of 10 operators: 2000 levels.
  std::string e = "A[0]";
  for (int level = 0; level < 200; ++level) e = "(" + e + ") + A[0] + A[0] + A[0] + A[0] + A[0] + A[0] + A[0] + A[0] + A[0] + A[0]";
  fs::path tir = writeTemp("deep.tir", "func @f(A: float32[4]) {\n  A[0] = " + e + "\n}\n");
  expectLocated(tlc("emit --stage=tir " + tir.string()), "ir-nesting-too-deep", 2);
}

TEST_CASE("20000 flat lets in a .tir file parse, verify and print") {
  std::string body = "  let x0 = A[0]\n";
  for (int i = 1; i < 20000; ++i) body += "  let x" + std::to_string(i) + " = x" + std::to_string(i - 1) + " * 1.5\n";
  body += "  A[1] = x19999\n";
  fs::path tir = writeTemp("flat_lets.tir", "func @f(A: float32[4]) {\n" + body + "}\n");
  Result r = tlc("emit --stage=tir " + tir.string());
  INFO(r.out.substr(0, 2000));
  CHECK(r.code == 0);
  CHECK(r.out.find("let x19999: float32 = x19998 * 1.5") != std::string::npos);
}
