// The host runtime on CPU modules: loading (file and memory), launching
// against a plain C++ reference, and one test per argument error, each
// checking the status and the message.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "compiler/support/module_image.h"
#include "tests/runtime/build_helpers.h"
#include "tlc/runtime.h"

using namespace tlc::test;

namespace {

struct Built {
  std::string gemm, scale;
};

// Built once per test process.
const Built& built() {
  static Built b = [] {
    auto dir = scratchDir("runtime");
    Built r{(dir / "gemm.so").string(), (dir / "scale.so").string()};
    buildCpuModule("examples/gemm/gemm.tl", {"K=64", "dtype=float32", "block_M=32", "block_N=32", "block_K=16"}, r.gemm);
    buildCpuModule("tests/runtime/data/scale.tl", {}, r.scale);
    return r;
  }();
  return b;
}

struct Gemm {
  tlc_module* module = nullptr;
  tlc_kernel* kernel = nullptr;
  int64_t M = 37, N = 45, K = 64;
  std::vector<float> A, B, C;
  Gemm() {
    REQUIRE(tlcLoadModule(built().gemm.c_str(), &module) == TLC_SUCCESS);
    REQUIRE(tlcGetKernel(module, "gemm", &kernel) == TLC_SUCCESS);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    A.resize(M * K);
    B.resize(K * N);
    C.assign(M * N, 0);
    for (auto& x : A) x = u(rng);
    for (auto& x : B) x = u(rng);
  }
  ~Gemm() { tlcUnloadModule(module); }
  std::vector<tlc_arg> args() {
    int64_t sa[] = {M, K}, sb[] = {K, N}, sc[] = {M, N};
    return {tlcTensorArg(A.data(), TLC_FLOAT32, 2, sa), tlcTensorArg(B.data(), TLC_FLOAT32, 2, sb),
            tlcTensorArg(C.data(), TLC_FLOAT32, 2, sc)};
  }
  tlc_status launch(const std::vector<tlc_arg>& a) { return tlcLaunch(kernel, a.data(), (int32_t)a.size(), nullptr); }
};

std::string lastError() { return tlcGetLastError(); }

}  // namespace

TEST_CASE("a CPU gemm module loads, reports its kernels and computes A @ B") {
  Gemm g;
  CHECK(tlcModuleBackend(g.module) == TLC_BACKEND_CPU);
  CHECK(std::string(tlcModuleTarget(g.module)) == "cpu");
  REQUIRE(tlcModuleNumKernels(g.module) == 1);
  CHECK(std::string(tlcModuleKernelName(g.module, 0)) == "gemm");
  CHECK(tlcKernelNumParams(g.kernel) == 3);
  CHECK(std::string(tlcKernelParamName(g.kernel, 1)) == "B");
  REQUIRE(g.launch(g.args()) == TLC_SUCCESS);
  CHECK(lastError().empty());
  double maxErr = 0;
  for (int64_t i = 0; i < g.M; ++i)
    for (int64_t j = 0; j < g.N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < g.K; ++k) ref += double(g.A[i * g.K + k]) * g.B[k * g.N + j];
      maxErr = std::max(maxErr, std::abs(ref - g.C[i * g.N + j]));
    }
  CHECK(maxErr < 1e-4);
}

TEST_CASE("the library reports the ABI version of its header") {
  CHECK(tlcRuntimeAbiVersion() == TLC_RUNTIME_ABI_VERSION);
}

TEST_CASE("a module loads from memory") {
  std::ifstream in(built().gemm, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  tlc_module* m = nullptr;
  REQUIRE(tlcLoadModuleFromMemory(bytes.data(), bytes.size(), nullptr, &m) == TLC_SUCCESS);
  tlc_kernel* k = nullptr;
  CHECK(tlcGetKernel(m, "gemm", &k) == TLC_SUCCESS);
  tlc_embedded_module e{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), nullptr, "gemm"};
  tlc_module *e1 = nullptr, *e2 = nullptr;
  REQUIRE(tlcLoadEmbeddedModule(&e, &e1) == TLC_SUCCESS);
  REQUIRE(tlcLoadEmbeddedModule(&e, &e2) == TLC_SUCCESS);
  CHECK(e1 == e2);
  tlcUnloadModule(m);
}

TEST_CASE("wrong shape: the message names the parameter and the expected shape") {
  Gemm g;
  auto a = g.args();
  a[1].tensor.shape[0] = 32;
  a[1].tensor.shape[1] = 64;
  CHECK(g.launch(a) == TLC_ERROR_SHAPE);
  CHECK(lastError() == "argument `B` (parameter 2 of kernel `gemm`): expected shape (K=64, N) but got (32, 64)");
}

TEST_CASE("a symbolic dimension bound inconsistently across parameters") {
  Gemm g;
  auto a = g.args();
  a[2].tensor.shape[0] = g.M + 1;
  CHECK(g.launch(a) == TLC_ERROR_SHAPE);
  CHECK(lastError() == "argument `C` (parameter 3 of kernel `gemm`): expected shape (M, N) with M = 37 (dimension 0 "
                       "of `A`) but got (38, 45)");
}

TEST_CASE("wrong dtype") {
  Gemm g;
  auto a = g.args();
  a[0].tensor.dtype = TLC_FLOAT16;
  CHECK(g.launch(a) == TLC_ERROR_DTYPE);
  CHECK(lastError() == "argument `A` (parameter 1 of kernel `gemm`): expected dtype float32 but got float16");
}

TEST_CASE("wrong rank") {
  Gemm g;
  auto a = g.args();
  a[0].tensor.rank = 3;
  a[0].tensor.shape[2] = 1;
  CHECK(g.launch(a) == TLC_ERROR_RANK);
  CHECK(lastError() == "argument `A` (parameter 1 of kernel `gemm`): expected a rank-2 tensor of shape (M, K=64) but "
                       "got rank 3 (37, 64, 1)");
}

TEST_CASE("negative dimension") {
  Gemm g;
  auto a = g.args();
  a[0].tensor.shape[0] = -1;
  CHECK(g.launch(a) == TLC_ERROR_SHAPE);
  CHECK(lastError().find("dimension 0 of shape (-1, 64) is negative") != std::string::npos);
}

TEST_CASE("wrong argument count") {
  Gemm g;
  auto a = g.args();
  a.pop_back();
  CHECK(g.launch(a) == TLC_ERROR_ARGUMENT_COUNT);
  CHECK(lastError() == "kernel `gemm` takes 3 arguments (A, B, C) but was given 2");
  CHECK(tlcLaunch(g.kernel, nullptr, 3, nullptr) == TLC_ERROR_ARGUMENT_COUNT);
}

TEST_CASE("a scalar where a tensor is expected") {
  Gemm g;
  auto a = g.args();
  a[2] = tlcFloatArg(TLC_FLOAT32, 1.0);
  CHECK(g.launch(a) == TLC_ERROR_ARGUMENT_KIND);
  CHECK(lastError() == "argument `C` (parameter 3 of kernel `gemm`): expected a tensor of shape (M, N) and dtype "
                       "float32 but got a scalar");
}

TEST_CASE("null data pointer") {
  Gemm g;
  auto a = g.args();
  a[1].tensor.data = nullptr;
  CHECK(g.launch(a) == TLC_ERROR_NULL_POINTER);
  CHECK(lastError() == "argument `B` (parameter 2 of kernel `gemm`): the data pointer is null");
}

TEST_CASE("misaligned data pointer") {
  Gemm g;
  auto a = g.args();
  a[0].tensor.data = reinterpret_cast<char*>(g.A.data()) + 1;
  CHECK(g.launch(a) == TLC_ERROR_ALIGNMENT);
  CHECK(lastError().find("argument `A` (parameter 1 of kernel `gemm`): the data pointer") == 0);
  CHECK(lastError().find("is not aligned to 4 bytes (the size of float32)") != std::string::npos);
}

TEST_CASE("tlcCheckArguments checks without launching") {
  Gemm g;
  auto a = g.args();
  CHECK(tlcCheckArguments(g.kernel, a.data(), 3) == TLC_SUCCESS);
  a[1].tensor.shape[0] = 1;
  CHECK(tlcCheckArguments(g.kernel, a.data(), 3) == TLC_ERROR_SHAPE);
  for (float c : g.C) REQUIRE(c == 0.0f);
}

TEST_CASE("scalar parameters: conversion, a tensor where a scalar is expected, range and kind errors") {
  tlc_module* m = nullptr;
  REQUIRE(tlcLoadModule(built().scale.c_str(), &m) == TLC_SUCCESS);
  tlc_kernel* k = nullptr;
  REQUIRE(tlcGetKernel(m, "scale", &k) == TLC_SUCCESS);
  std::vector<float> x(100), y(100, 0);
  for (int i = 0; i < 100; ++i) x[i] = float(i);
  int64_t n[] = {100};
  std::vector<tlc_arg> a = {tlcTensorArg(x.data(), TLC_FLOAT32, 1, n), tlcTensorArg(y.data(), TLC_FLOAT32, 1, n),
                            tlcFloatArg(TLC_FLOAT64, 0.5), tlcIntArg(TLC_INT64, -3)};
  REQUIRE(tlcLaunch(k, a.data(), 4, nullptr) == TLC_SUCCESS);
  for (int i = 0; i < 100; ++i) CHECK(y[i] == doctest::Approx(i * 0.5 - 3));

  auto bad = a;
  bad[3] = tlcIntArg(TLC_INT64, 40000);
  CHECK(tlcLaunch(k, bad.data(), 4, nullptr) == TLC_ERROR_DTYPE);
  CHECK(lastError() == "argument `offset` (parameter 4 of kernel `scale`): the value 40000 does not fit in int16");

  bad = a;
  bad[3] = tlcFloatArg(TLC_FLOAT32, 1.5);
  CHECK(tlcLaunch(k, bad.data(), 4, nullptr) == TLC_ERROR_DTYPE);
  CHECK(lastError() == "argument `offset` (parameter 4 of kernel `scale`): expected an integer scalar of dtype int16 "
                       "but got a float32 value");

  bad = a;
  bad[2] = a[0];
  CHECK(tlcLaunch(k, bad.data(), 4, nullptr) == TLC_ERROR_ARGUMENT_KIND);
  CHECK(lastError() == "argument `alpha` (parameter 3 of kernel `scale`): expected a scalar of dtype float32 but got "
                       "a tensor");
  tlcUnloadModule(m);
}

TEST_CASE("unknown kernel, unreadable file, not a module, a .so without metadata") {
  Gemm g;
  tlc_kernel* k = nullptr;
  CHECK(tlcGetKernel(g.module, "softmax", &k) == TLC_ERROR_KERNEL_NOT_FOUND);
  CHECK(lastError().find("has no kernel `softmax`; it has `gemm`") != std::string::npos);

  tlc_module* m = nullptr;
  CHECK(tlcLoadModule("/nonexistent/k.so", &m) == TLC_ERROR_FILE);
  CHECK(m == nullptr);
  CHECK(lastError().find("cannot read module /nonexistent/k.so") == 0);

  auto dir = scratchDir("not-modules");
  std::string text = (dir / "text.so").string();
  std::ofstream(text) << "hello";
  CHECK(tlcLoadModule(text.c_str(), &m) == TLC_ERROR_INVALID_MODULE);
  CHECK(lastError().find("is not a tlc module") != std::string::npos);

  std::string src = (dir / "plain.c").string(), so = (dir / "plain.so").string();
  std::ofstream(src) << "int plain(void) { return 1; }\n";
  REQUIRE(std::system(("cc -shared -fPIC -o " + so + " " + src).c_str()) == 0);
  CHECK(tlcLoadModule(so.c_str(), &m) == TLC_ERROR_INVALID_MODULE);
  CHECK(lastError().find("no tlc integrity trailer") != std::string::npos);
  std::string why;
  REQUIRE(tlc::appendModuleTrailer(so, &why));  // intact now, but still not a tlc module
  CHECK(tlcLoadModule(so.c_str(), &m) == TLC_ERROR_INVALID_MODULE);
  CHECK(lastError().find("without `tlc_module_metadata`") != std::string::npos);

  CHECK(tlcLoadModule(nullptr, &m) == TLC_ERROR_INVALID_VALUE);
  CHECK(tlcGetKernel(nullptr, "gemm", &k) == TLC_ERROR_INVALID_VALUE);
  CHECK(tlcLaunch(nullptr, nullptr, 0, nullptr) == TLC_ERROR_INVALID_VALUE);
}

namespace {
// A minimal 64-bit little-endian ELF header for machine `machine`.
std::string fakeElf(uint16_t machine) {
  std::string h(64, '\0');
  h[0] = 0x7f, h[1] = 'E', h[2] = 'L', h[3] = 'F', h[4] = 2, h[5] = 1, h[6] = 1;
  h[18] = char(machine & 0xff), h[19] = char(machine >> 8);
  return h;
}
}  // namespace

TEST_CASE("device modules: missing metadata, missing HIP runtime, a CUDA image without a driver") {
  auto dir = scratchDir("device");
  std::string cubin = (dir / "k.cubin").string();
  std::ofstream(cubin, std::ios::binary) << fakeElf(190);
  tlc_module* m = nullptr;
  CHECK(tlcLoadModule(cubin.c_str(), &m) == TLC_ERROR_INVALID_MODULE);
  CHECK(lastError().find("has no kernel metadata: expected " + cubin + ".json") != std::string::npos);

  std::string meta = R"({"format":"tlc-module-metadata","format_version":1,"tlc_version":"0.1.0","target":"cuda:sm_90",
    "binary":"cubin","kernels":[]})";
  std::ofstream(cubin + ".json") << meta;
  tlc_status st = tlcLoadModule(cubin.c_str(), &m);
  // With no driver: unavailable; with one, the fake image is rejected.
  CHECK((st == TLC_ERROR_BACKEND_UNAVAILABLE || st == TLC_ERROR_INVALID_MODULE));
  CHECK(!lastError().empty());

  std::string hsaco = fakeElf(224);
  st = tlcLoadModuleFromMemory(hsaco.data(), hsaco.size(), meta.c_str(), &m);
  CHECK((st == TLC_ERROR_BACKEND_UNAVAILABLE || st == TLC_ERROR_INVALID_MODULE));
  // Unavailable: no HIP runtime library, or one that finds no device.
  if (st == TLC_ERROR_BACKEND_UNAVAILABLE) {
    INFO(lastError());
    CHECK((lastError().find("the HIP runtime (libamdhip64.so) was not found: looked for") != std::string::npos ||
           lastError().find("found no usable AMD GPU") != std::string::npos));
  }

  CHECK(tlcLoadModuleFromMemory(hsaco.data(), hsaco.size(), "{", &m) == TLC_ERROR_INVALID_MODULE);
  CHECK(lastError().find("not valid JSON") != std::string::npos);
  std::string newer = R"({"format":"tlc-module-metadata","format_version":9})";
  CHECK(tlcLoadModuleFromMemory(hsaco.data(), hsaco.size(), newer.c_str(), &m) == TLC_ERROR_INVALID_MODULE);
  CHECK(lastError().find("format version 9") != std::string::npos);
}

TEST_CASE("errors are per thread") {
  Gemm g;
  auto a = g.args();
  a[1].tensor.data = nullptr;
  CHECK(g.launch(a) == TLC_ERROR_NULL_POINTER);
  std::string other = "unset";
  std::thread t([&] { other = tlcGetLastError(); });
  t.join();
  CHECK(other.empty());
  CHECK(!lastError().empty());
}

TEST_CASE("one kernel launched from several threads at once") {
  Gemm shared;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<float> C(shared.M * shared.N, 0.0f);
      int64_t sa[] = {shared.M, shared.K}, sb[] = {shared.K, shared.N}, sc[] = {shared.M, shared.N};
      tlc_arg a[] = {tlcTensorArg(shared.A.data(), TLC_FLOAT32, 2, sa), tlcTensorArg(shared.B.data(), TLC_FLOAT32, 2, sb),
                     tlcTensorArg(C.data(), TLC_FLOAT32, 2, sc)};
      for (int rep = 0; rep < 5; ++rep) {
        if (tlcLaunch(shared.kernel, a, 3, nullptr) != TLC_SUCCESS) failures++;
        double ref = 0;
        for (int64_t k = 0; k < shared.K; ++k) ref += double(shared.A[k]) * shared.B[k * shared.N + t];
        if (std::abs(ref - C[t]) > 1e-4) failures++;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}
