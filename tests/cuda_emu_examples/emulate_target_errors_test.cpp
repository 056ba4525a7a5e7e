// The driver-level errors of `tlc run --target=cuda:sm_XX --emulate`: each
// registered diagnostic kind of the emulator is produced here.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "compiler/driver/emulate_target.h"
#include "compiler/sema/frontend.h"

using namespace tlc;
using namespace tlc::driver;

namespace {

const char* kAdd = R"(def add[N, threads=128](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):
    with T.Kernel(T.ceildiv(N, 256), threads=threads) as bx:
        A_f = T.alloc_fragment((256,), float32)
        T.copy(A[bx * 256], A_f)
        for i in T.Parallel(256):
            A_f[i] = A_f[i] + 1.0
        T.copy(A_f, B[bx * 256])
)";

struct Env {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::optional<ir::Module> module;
  explicit Env(const std::vector<Define>& defines = {}) {
    uint32_t file = sm.addBuffer("add.tl", kAdd);
    module = compileSource(sm, diags, file, defines);
    INFO(diags.renderAll());
    REQUIRE(module);
  }
  int run(const EmulateOptions& options = {}) {
    std::ostringstream out;
    RunSettings settings;
    settings.dims = {{"N", 300}};
    settings.check = true;
    settings.out = &out;
    return runCudaEmulated(*module, settings, "sm_80", diags, options);
  }
};

}  // namespace

TEST_CASE("the same kernel runs clean when nothing is wrong") {
  Env env;
  int rc = env.run();
  INFO(env.diags.renderAll());
  CHECK(rc == 0);
}

TEST_CASE("a host compiler that fails is reported") {
  // expected-error: cuda-emulator-build-failed
  namespace fs = std::filesystem;
  fs::path cache = fs::temp_directory_path() / ("tlc-emu-test-" + std::to_string(::getpid()));
  setenv("TLC_EMU_CXX", "false", 1);
  setenv("TLC_EMU_CACHE", cache.c_str(), 1);
  Env env;
  int rc = env.run();
  unsetenv("TLC_EMU_CXX");
  unsetenv("TLC_EMU_CACHE");
  std::error_code ec;
  fs::remove_all(cache, ec);
  INFO(env.diags.renderAll());
  CHECK(rc == 1);
  CHECK(env.diags.hasKind(DiagKind::CudaEmuBuildFailed));
}

TEST_CASE("a launch the emulator cannot run is reported") {
  // expected-error: cuda-emulator-launch-failed
  // The grid divides by a run-time scalar that is zero.
  SourceManager sm;
  DiagnosticEngine diags{sm};
  uint32_t file = sm.addBuffer("zero_grid.tl", R"(def k[N](A: Tensor[(N,), float32], s: int32):
    with T.Kernel(N // (s - s), threads=128) as bx:
        A_f = T.alloc_fragment((128,), float32)
        T.copy(A[bx * 128], A_f)
        T.copy(A_f, A[bx * 128])
)");
  std::optional<ir::Module> module = compileSource(sm, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(module);
  std::ostringstream out;
  RunSettings settings;
  settings.dims = {{"N", 256}};
  settings.out = &out;
  int rc = runCudaEmulated(*module, settings, "sm_80", diags);
  INFO(diags.renderAll());
  CHECK(rc == 1);
  CHECK(diags.hasKind(DiagKind::CudaEmuLaunchFailed));
}

TEST_CASE("a finding of the emulator fails the run") {
  // expected-error: cuda-emulator-check-failed
  Env env;
  EmulateOptions options;
  options.timeoutSeconds = -1;  // every launch is over time: a Timeout finding
  int rc = env.run(options);
  INFO(env.diags.renderAll());
  CHECK(rc == 1);
  CHECK(env.diags.hasKind(DiagKind::CudaEmuCheckFailed));
}

TEST_CASE("findings name the .tl line through the emitted #line directives") {
  const char* race = R"(def race[N](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), float32)
        T.clear(S)
        for i in T.Parallel(128):
            S[0] = A[127 - i]
        T.copy(S, B[0])
)";
  SourceManager sm;
  DiagnosticEngine diags(sm);
  uint32_t file = sm.addBuffer("race.tl", race);
  std::optional<ir::Module> module = compileSource(sm, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(module);
  std::ostringstream out;
  RunSettings settings;
  settings.dims = {{"N", 128}};
  settings.out = &out;
  std::ostringstream err;  // the emulator's report goes to stderr
  std::streambuf* saved = std::cerr.rdbuf(err.rdbuf());
  int rc = runCudaEmulated(*module, settings, "sm_80", diags);
  std::cerr.rdbuf(saved);
  std::string report = err.str();
  INFO(report);
  CHECK(rc == 1);
  CHECK(report.find("race.tl:6: error: write to shared offset 0") != std::string::npos);
  CHECK(report.find("the other access: race.tl:6") != std::string::npos);
}

TEST_CASE("a grid a GPU could not launch is reported, not run") {
  // Known only at launch: a dynamic dimension makes the y extent 70000.
  const char* tall = R"(def tall[M, N=4](A: Tensor[(M, N), float32]):
    with T.Kernel(1, T.ceildiv(M, 1), threads=32) as (bx, by):
        for j in T.Parallel(4):
            A[by, j] = 1.0
)";
  SourceManager sm;
  DiagnosticEngine diags(sm);
  uint32_t file = sm.addBuffer("tall.tl", tall);
  std::optional<ir::Module> module = compileSource(sm, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(module);
  std::ostringstream out;
  RunSettings settings;
  settings.out = &out;
  settings.dims = {{"M", 100}};
  CHECK(runCudaEmulated(*module, settings, "sm_80", diags) == 0);
  settings.dims = {{"M", 70000}};
  CHECK(runCudaEmulated(*module, settings, "sm_80", diags) == 1);
  CHECK(diags.renderAll().find("grid extent 1 of `tall_kernel0` is 70000, more than a CUDA launch allows (65535)") !=
        std::string::npos);
}
