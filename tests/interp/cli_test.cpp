// `tlc run --target=interp` as a user runs it: the printed summary of the
// gemm example agrees with a naive triple loop computed here from the same
// seeded inputs (re-created through the same front end and run plumbing).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "compiler/driver/run_common.h"
#include "compiler/interp/float_convert.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace {

std::string runCommand(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  *status = pclose(p);
  return out;
}

// The numbers of the summary row of `param`: checksum, mean, min, max.
std::vector<double> summaryRow(const std::string& text, const std::string& param) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string name, role;
    row >> name >> role;
    if (name != param || (role != "in" && role != "out")) continue;
    std::string rest;
    std::getline(row, rest);
    // Skip the shape "[a, b]" and the dtype.
    size_t close = rest.find(']');
    std::istringstream nums(rest.substr(close + 1));
    std::string dtype;
    nums >> dtype;
    std::vector<double> v(4);
    for (double& x : v) nums >> x;
    return v;
  }
  return {};
}

}  // namespace

TEST_CASE("tlc run examples/gemm/gemm.tl --target=interp -D M=64 -D N=64 -D K=64 agrees with a naive gemm") {
  std::string tlc = std::string(TLC_BINARY_DIR) + "/bin/tlc";
  REQUIRE_MESSAGE(std::filesystem::exists(tlc), "build the `tlc` executable first");
  std::string example = std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl";
  int status = 0;
  std::string out = runCommand(tlc + " run " + example + " --target=interp -D M=64 -D N=64 -D K=64 --seed 5", &status);
  INFO(out);
  REQUIRE(status == 0);
  std::vector<double> c = summaryRow(out, "C");
  REQUIRE(c.size() == 4);

  // The same inputs, made the way `tlc run` makes them.
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::string error;
  uint32_t file = sm.addFile(example, error);
  auto module = compileSource(sm, diags, file, {{"M", "64"}, {"N", "64"}, {"K", "64"}});
  REQUIRE(module);
  auto args = driver::makeArguments(*module->funcs[0], {}, 5, diags);
  REQUIRE(args);
  const interp::HostTensor &A = *args->tensors[0], &B = *args->tensors[1];
  double sum = 0, mn = INFINITY, mx = -INFINITY;
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      double s = 0;
      for (int64_t k = 0; k < 64; ++k) s += A.get(i * 64 + k) * B.get(k * 64 + j);
      s = interp::roundToFloatDType(s, DType::Float16);  // C is float16
      sum += s;
      mn = std::min(mn, s);
      mx = std::max(mx, s);
    }
  // float32 accumulation may round an element to the neighbouring float16.
  CHECK(c[0] == doctest::Approx(sum).epsilon(1e-3));
  CHECK(c[1] == doctest::Approx(sum / 4096).epsilon(1e-3));
  CHECK(c[2] == doctest::Approx(mn).epsilon(2e-3));
  CHECK(c[3] == doctest::Approx(mx).epsilon(2e-3));
  // And the input summary is the input made here.
  std::vector<double> a = summaryRow(out, "A");
  REQUIRE(a.size() == 4);
  double asum = 0;
  for (int64_t i = 0; i < A.numel(); ++i) asum += A.get(i);
  CHECK(a[0] == doctest::Approx(asum).epsilon(1e-5));
}
