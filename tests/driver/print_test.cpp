// T.print on every target: the interpreter's lines against an expectation
// computed here from the kernels' formulas, then the CPU's and the CUDA
// emulator's (sm_80, sm_90a) against the interpreter's. Targets that run
// blocks or threads concurrently write the same lines in another order, and
// the CUDA targets name the thread, so those are compared sorted and without
// `, thread N`. The kernels are tests/driver/print/*.tl.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/driver/run_tlc.h"

using driver_test::Result;
using driver_test::tlc;

namespace {

std::string kernel(const std::string& name) { return std::string(TLC_SOURCE_DIR) + "/tests/driver/print/" + name; }

// The line number of the first line of `file` that contains `text`.
int lineOf(const std::string& file, const std::string& text) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  FAIL("no line of " << file << " contains " << text);
  return 0;
}

// The lines of a run's output that T.print wrote: `<file>:<line>: block ...`
// (diagnostics name the file too, but not a block there).
std::vector<std::string> printed(const std::string& out, const std::string& file) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  const std::regex printLine("[0-9]+: block .*");
  while (std::getline(in, line))
    if (line.rfind(file + ":", 0) == 0 && std::regex_match(line.substr(file.size() + 1), printLine)) lines.push_back(line);
  return lines;
}

std::vector<std::string> sortedWithoutThread(std::vector<std::string> lines) {
  static const std::regex thread(", thread [0-9]+");
  for (std::string& l : lines) l = std::regex_replace(l, thread, "");
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string g(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// R[i] of tiles.tl: the sum of row i of F.
double rowSum(int bx, int i) {
  double sum = 0;
  for (int j = 0; j < 16; ++j) sum += (i * 16 + j + bx * 1000) * 0.5;
  return sum;
}

// What the interpreter prints for tiles.tl, in its order (blocks one after
// the other, buffers row-major), except the input element's value.
std::vector<std::string> expectedTiles(const std::string& file) {
  auto at = [&](const std::string& call) { return file + ":" + std::to_string(lineOf(file, call)) + ": block "; };
  std::vector<std::string> out;
  for (int bx = 0; bx < 2; ++bx) {
    std::string b = std::to_string(bx);
    out.push_back(at("msg=\"scalar\"") + b + ": scalar: " + std::to_string(bx * 7 - 3));
    out.push_back(at("T.print(bx == 1)") + b + ": " + (bx == 1 ? "True" : "False"));
    out.push_back(at("msg=\"log\"") + b + ": log: " + (bx == 0 ? "nan" : "-inf"));
    out.push_back(at("msg=\"tenth\"") + b + ": tenth: " + g("%.9g", static_cast<float>(bx + 1) * 0.1f));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        out.push_back(at("T.print(S)") + b + ": S[" + std::to_string(i) + ", " + std::to_string(j) +
                      "] = " + std::to_string(i * 10 + j + bx * 100));
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 16; ++j)
        out.push_back(at("msg=\"tile\"") + b + ": tile: F[" + std::to_string(i) + ", " + std::to_string(j) +
                      "] = " + g("%.9g", (i * 16 + j + bx * 1000) * 0.5));
    for (int i = 0; i < 8; ++i)
      out.push_back(at("msg=\"rows\"") + b + ": rows: R[" + std::to_string(i) + "] = " + g("%.9g", rowSum(bx, i)));
    for (int i = 0; i < 3; ++i) {
      _Float16 h = static_cast<_Float16>(0.1f) * static_cast<_Float16>(i + bx + 1);
      out.push_back(at("msg=\"half\"") + b + ", i=" + std::to_string(i) + ": half: " + g("%.5g", h));
    }
    for (int i = 0; i < 8; ++i)
      out.push_back(at("msg=\"row\"") + b + ", i=" + std::to_string(i) + ": row: " + g("%.9g", rowSum(bx, i)));
    out.push_back(at("msg=\"input\"") + b + ": input: ");
  }
  return out;
}

// What the interpreter prints for gemm.tl: C = A @ B of the small integers it sets.
std::vector<std::string> expectedGemm(const std::string& file) {
  std::string at = file + ":" + std::to_string(lineOf(file, "T.print(C_f")) + ": block 0: acc: C_f[";
  std::vector<std::string> out;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      int c = 0;
      for (int k = 0; k < 16; ++k) c += ((i + k) % 4) * ((k * j) % 3);
      out.push_back(at + std::to_string(i) + ", " + std::to_string(j) + "] = " + std::to_string(c));
    }
  return out;
}

// What the interpreter prints for pipelined.tl: the k offset of each iteration.
std::vector<std::string> expectedPipelined(const std::string& file) {
  std::string at = file + ":" + std::to_string(lineOf(file, "T.print(k")) + ": block 0: k offset: ";
  std::vector<std::string> out;
  for (int k = 0; k < 4; ++k) out.push_back(at + std::to_string(k * 32));
  return out;
}

std::vector<std::string> run(const std::string& file, const std::string& target) {
  Result r = tlc("run " + file + " --seed 3 " + target);
  INFO(target << ":\n" << r.out);
  CHECK(r.code == 0);
  return printed(r.out, file);
}

void checkAgainstInterpreter(const std::string& file, const std::vector<std::string>& expected) {
  std::vector<std::string> interp = run(file, "--target=interp");
  REQUIRE(interp.size() == expected.size());
  for (size_t k = 0; k < interp.size(); ++k) {
    INFO("line " << k);
    // The input element is random: only its text before the value is known here.
    if (expected[k].back() == ' ') CHECK(interp[k].rfind(expected[k], 0) == 0);
    else CHECK(interp[k] == expected[k]);
  }
  // The --check reference run prints nothing: the lines are the target's.
  CHECK(run(file, "--target=interp --check").size() == interp.size());
  std::vector<std::string> want = sortedWithoutThread(interp);
  CHECK(sortedWithoutThread(run(file, "--target=cpu --check")) == want);
#ifdef TLC_TEST_HAVE_CUDA
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    std::vector<std::string> emulated = run(file, std::string("--target=cuda:") + arch + " --emulate --check");
    CHECK(sortedWithoutThread(emulated) == want);
    for (const std::string& l : emulated) CHECK(l.find(", thread ") != std::string::npos);
  }
#endif
}

}  // namespace

TEST_CASE("T.print writes the same lines on the interpreter, the CPU and the CUDA emulator") {
  SUBCASE("scalars, iterations, shared memory and register fragments") {
    std::string file = kernel("tiles.tl");
    checkAgainstInterpreter(file, expectedTiles(file));
  }
  SUBCASE("a tensor-core accumulator") {
    std::string file = kernel("gemm.tl");
    checkAgainstInterpreter(file, expectedGemm(file));
  }
  SUBCASE("inside a pipelined gemm loop") {
    std::string file = kernel("pipelined.tl");
    checkAgainstInterpreter(file, expectedPipelined(file));
  }
}

#ifdef TLC_TEST_HAVE_CUDA
TEST_CASE("T.print compiles to device printf for NVRTC, and a kernel without prints has none") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    Result ptx = tlc("emit --stage=ptx --target=cuda:" + std::string(arch) + " " + kernel("tiles.tl"));
    INFO(ptx.out);
    CHECK(ptx.code == 0);
    CHECK(ptx.out.find("vprintf") != std::string::npos);
    Result cuda = tlc("emit --stage=cuda --target=cuda:" + std::string(arch) + " " + kernel("tiles.tl"));
    CHECK(cuda.out.find("printf(\"") != std::string::npos);
    Result plain = tlc("emit --stage=cuda --target=cuda:" + std::string(arch) + " " + std::string(TLC_SOURCE_DIR) +
                       "/examples/gemm/gemm.tl");
    CHECK(plain.code == 0);
    CHECK(plain.out.find("printf") == std::string::npos);
  }
  // The print keeps the loop of pipelined.tl warp-specialized on sm_90a (the
  // form whose consumers run the loop's other statements).
  Result hopper = tlc("emit --stage=cuda --target=cuda:sm_90a " + kernel("pipelined.tl"));
  CHECK(hopper.code == 0);
  CHECK(hopper.out.find("tlc::mbar_wait") != std::string::npos);
  CHECK(hopper.out.find("printf(\"") != std::string::npos);
}
#endif
