// A CPU module built with bounds checks, through the host runtime: a launch
// that reads out of bounds returns TLC_ERROR_LAUNCH naming the kernel, the
// source line, the index and the shape; the next good launch succeeds.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/runtime/build_helpers.h"
#include "tlc/runtime.h"

using namespace tlc::test;

namespace {

struct Shifted {
  tlc_module* module = nullptr;
  tlc_kernel* kernel = nullptr;
  std::vector<float> X = std::vector<float>(100, 1.0f), Y = std::vector<float>(100, 0.0f);
  explicit Shifted(const std::string& so) {
    REQUIRE(tlcLoadModule(so.c_str(), &module) == TLC_SUCCESS);
    REQUIRE(tlcGetKernel(module, "shifted_copy", &kernel) == TLC_SUCCESS);
  }
  ~Shifted() { tlcUnloadModule(module); }
  tlc_status launch(int32_t shift) {
    int64_t n[] = {100};
    std::vector<tlc_arg> args = {tlcTensorArg(X.data(), TLC_FLOAT32, 1, n), tlcTensorArg(Y.data(), TLC_FLOAT32, 1, n),
                                 tlcIntArg(TLC_INT32, shift)};
    return tlcLaunch(kernel, args.data(), (int32_t)args.size(), nullptr);
  }
};

}  // namespace

TEST_CASE("an out-of-bounds load in a module built with bounds checks fails its launch with a report") {
  std::string so = (scratchDir("bounds") / "shifted_copy.so").string();
  buildCpuModule("tests/runtime/data/shifted_copy.tl", {}, so, /*checkBounds=*/true);
  Shifted k(so);
  REQUIRE(k.launch(0) == TLC_SUCCESS);
  CHECK(k.Y[99] == 1.0f);
  CHECK(k.launch(3) == TLC_ERROR_LAUNCH);
  std::string error = tlcGetLastError();
  INFO(error);
  CHECK(error.find("kernel `shifted_copy`") != std::string::npos);
  CHECK(error.find("shifted_copy.tl:6:20: index 100 is out of bounds for dimension 0 of `X` (size 100)") !=
        std::string::npos);
  CHECK(error.find("the load's index is (100) and `X` has shape (100)") != std::string::npos);
  // The report belongs to that launch only.
  CHECK(k.launch(0) == TLC_SUCCESS);
  CHECK(std::string(tlcGetLastError()).empty());
}

TEST_CASE("a module built without bounds checks exports no failure accessor and launches as before") {
  std::string so = (scratchDir("no-bounds") / "shifted_copy.so").string();
  buildCpuModule("tests/runtime/data/shifted_copy.tl", {}, so);
  Shifted k(so);
  CHECK(k.launch(0) == TLC_SUCCESS);
  CHECK(k.Y[0] == 1.0f);
}
