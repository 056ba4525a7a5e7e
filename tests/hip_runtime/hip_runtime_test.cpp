// The host runtime's HIP loader (runtime/device_module.cpp over
// compiler/backends/gpu_driver_api.h) without an AMD GPU: $TLC_HIP_RUNTIME
// points this process at a stand-in libamdhip64 (fake_amdhip64.c) that
// checks what the real runtime would refuse and records every call, so the
// whole sequence runs for real: the code object handed to
// hipModuleLoadData, the function lookups, the argument values packed for
// hipModuleLaunchKernel, the grid, block and LDS of each launch.
#include <doctest/doctest.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/gpu_driver_api.h"
#include "compiler/backends/hip/hip_archs.h"
#include "compiler/driver/device_metadata.h"
#include "compiler/sema/frontend.h"
#include "tlc/runtime.h"

using namespace tlc;

namespace {

// Before main, so before the runtime binds the HIP runtime (once per process).
const bool fakeSelected = [] { return setenv("TLC_HIP_RUNTIME", TLC_FAKE_AMDHIP64, 1) == 0; }();

// The stand-in's test hooks and allocator (what a program gets from HIP).
struct Fake {
  void* handle = dlopen(TLC_FAKE_AMDHIP64, RTLD_NOW | RTLD_LOCAL);
  template <class F>
  F fn(const char* name) {
    REQUIRE(handle);
    F f = reinterpret_cast<F>(dlsym(handle, name));
    REQUIRE(bool(f));
    return f;
  }
  std::string log() { return fn<const char* (*)()>("fakeHipLog")(); }
  void reset() { fn<void (*)()>("fakeHipReset")(); }
  void recordArgs(int n) { fn<void (*)(int)>("fakeHipSetLaunchArgs")(n); }
  void failLaunches(bool fail) { fn<void (*)(int)>("fakeHipFailLaunches")(fail); }
  void* malloc(size_t bytes) {
    void* p = nullptr;
    REQUIRE(fn<int (*)(void**, size_t)>("hipMalloc")(&p, bytes) == 0);
    return p;
  }
};

std::string lastError() { return tlcGetLastError(); }

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", (unsigned long long)(uintptr_t)p);
  return buf;
}

// The elementwise-add example built for hip:gfx942 up to the code object:
// the emitter's HIP C and launch plan give the real metadata; the code
// object is an ELF header of EM_AMDGPU (gfx942) followed by `symbols`, the
// names hipModuleGetFunction may find (no compiler needed).
struct HipModule {
  std::string metadata;
  std::vector<std::string> kernelNames;
  std::string image(bool withSymbols = true, bool elf64 = true) const {
    std::string h(64, '\0');
    h[0] = 0x7f, h[1] = 'E', h[2] = 'L', h[3] = 'F', h[4] = elf64 ? 2 : 1, h[5] = 1, h[6] = 1;
    h[18] = char(224), h[19] = 0;
    h[48] = 0x4c;  // EF_AMDGPU_MACH_AMDGCN_GFX942
    if (withSymbols)
      for (const std::string& n : kernelNames) h += n + '\0';
    uint64_t end = h.size();  // e_shoff: no section headers, at the end
    std::memcpy(&h[40], &end, 8);
    return h;
  }
};

HipModule elementwiseAdd() {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::string error;
  uint32_t file = sources.addFile(std::string(TLC_SOURCE_DIR) + "/examples/elementwise_add/add.tl", error);
  REQUIRE(file != 0);
  auto module = compileSource(sources, diags, file, {Define{"dtype", "float32"}});
  INFO(diags.renderAll());
  REQUIRE(module);
  auto generated = cuda::generateCuda(*module, hip::hipOptions("gfx942"), diags);
  REQUIRE(generated);
  HipModule m;
  m.metadata = driver::cudaModuleMetadata(*module, *generated, "hip:gfx942", &sources, "hsaco");
  for (const cuda::FuncLaunch& f : generated->funcs)
    for (const cuda::KernelLaunch& k : f.kernels) m.kernelNames.push_back(k.name);
  REQUIRE(m.kernelNames.size() == 1);
  return m;
}

tlc_module* load(const HipModule& hm, const std::string& image) {
  tlc_module* m = nullptr;
  tlc_status st = tlcLoadModuleFromMemory(image.data(), image.size(), hm.metadata.c_str(), &m);
  INFO(lastError());
  REQUIRE(st == TLC_SUCCESS);
  return m;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("tlc_runtime loads a HIP code object through libamdhip64 and launches its kernel") {
  REQUIRE(fakeSelected);
  Fake fake;
  HipModule hm = elementwiseAdd();
  fake.reset();
  tlc_module* m = load(hm, hm.image());
  std::string log = fake.log();
  INFO(log);
  CHECK(contains(log, "hipInit 0"));
  CHECK(contains(log, "hipModuleLoadData machine=224 mach=0x4c"));
  CHECK(tlcModuleBackend(m) == TLC_BACKEND_HIP);
  CHECK(std::string(tlcModuleTarget(m)) == "hip:gfx942");

  tlc_kernel* k = nullptr;
  REQUIRE(tlcGetKernel(m, "elementwise_add", &k) == TLC_SUCCESS);
  const int64_t M = 37, N = 100;
  void* a = fake.malloc(M * N * 4);
  void* b = fake.malloc(M * N * 4);
  void* c = fake.malloc(M * N * 4);
  int64_t shape[] = {M, N};
  tlc_arg args[] = {tlcTensorArg(a, TLC_FLOAT32, 2, shape), tlcTensorArg(b, TLC_FLOAT32, 2, shape),
                    tlcTensorArg(c, TLC_FLOAT32, 2, shape)};
  fake.reset();
  fake.recordArgs(5);  // A, B, C, then the shape symbols M and N
  tlc_status st = tlcLaunch(k, args, 3, nullptr);
  INFO(lastError());
  REQUIRE(st == TLC_SUCCESS);
  log = fake.log();
  INFO(log);
  // Looked up once, then launched over ceildiv(N, 64) x ceildiv(M, 32) blocks of 128 threads.
  CHECK(contains(log, "hipModuleGetFunction " + hm.kernelNames[0] + "\n"));
  std::string launch = "hipModuleLaunchKernel " + hm.kernelNames[0] + " grid=2,2,1 block=128,1,1 shared=0";
  CHECK(contains(log, launch + " stream=null extra=null args=" + hex(a) + "," + hex(b) + "," + hex(c) + ",25,64\n"));

  // The stream is passed through; the function is not looked up again.
  fake.reset();
  int stream = 0;
  REQUIRE(tlcLaunch(k, args, 3, &stream) == TLC_SUCCESS);
  log = fake.log();
  CHECK(!contains(log, "hipModuleGetFunction"));
  CHECK(contains(log, launch + " stream=set"));

  // Empty tensors: nothing to launch.
  fake.reset();
  int64_t empty[] = {0, N};
  tlc_arg none[] = {tlcTensorArg(a, TLC_FLOAT32, 2, empty), tlcTensorArg(b, TLC_FLOAT32, 2, empty),
                    tlcTensorArg(c, TLC_FLOAT32, 2, empty)};
  CHECK(tlcLaunch(k, none, 3, nullptr) == TLC_SUCCESS);
  CHECK(!contains(fake.log(), "hipModuleLaunchKernel"));

  fake.reset();
  CHECK(tlcUnloadModule(m) == TLC_SUCCESS);
  CHECK(contains(fake.log(), "hipModuleUnload"));
}

TEST_CASE("a HIP launch refuses host memory, and reports what the HIP runtime refuses") {
  Fake fake;
  HipModule hm = elementwiseAdd();
  const int64_t M = 8, N = 8;
  int64_t shape[] = {M, N};
  void* a = fake.malloc(M * N * 4);
  void* c = fake.malloc(M * N * 4);
  std::vector<float> host(M * N);

  tlc_module* m = load(hm, hm.image());
  tlc_kernel* k = nullptr;
  REQUIRE(tlcGetKernel(m, "elementwise_add", &k) == TLC_SUCCESS);
  fake.reset();
  tlc_arg mixed[] = {tlcTensorArg(a, TLC_FLOAT32, 2, shape), tlcTensorArg(host.data(), TLC_FLOAT32, 2, shape),
                     tlcTensorArg(c, TLC_FLOAT32, 2, shape)};
  CHECK(tlcLaunch(k, mixed, 3, nullptr) == TLC_ERROR_DEVICE_MEMORY);
  CHECK(contains(lastError(), "argument `B`"));
  CHECK(contains(lastError(), "is not memory the GPU can access (allocate it with hipMalloc"));
  CHECK(!contains(fake.log(), "hipModuleLaunchKernel"));

  tlc_arg good[] = {tlcTensorArg(a, TLC_FLOAT32, 2, shape), tlcTensorArg(a, TLC_FLOAT32, 2, shape),
                    tlcTensorArg(c, TLC_FLOAT32, 2, shape)};
  fake.failLaunches(true);
  CHECK(tlcLaunch(k, good, 3, nullptr) == TLC_ERROR_LAUNCH);
  CHECK(contains(lastError(), "launching `" + hm.kernelNames[0] + "` failed: hipErrorLaunchFailure (719)"));
  fake.failLaunches(false);
  tlcUnloadModule(m);

  // A code object without the kernel's symbol: found missing at the first launch.
  m = load(hm, hm.image(/*withSymbols=*/false));
  REQUIRE(tlcGetKernel(m, "elementwise_add", &k) == TLC_SUCCESS);
  CHECK(tlcLaunch(k, good, 3, nullptr) == TLC_ERROR_INVALID_MODULE);
  CHECK(contains(lastError(), "has no device function `" + hm.kernelNames[0] + "`: hipErrorNotFound (500)"));
  tlcUnloadModule(m);

  // An image the HIP runtime rejects (a 32-bit ELF file).
  std::string bad = hm.image(true, /*elf64=*/false);
  tlc_module* rejected = nullptr;
  CHECK(tlcLoadModuleFromMemory(bad.data(), bad.size(), hm.metadata.c_str(), &rejected) == TLC_ERROR_INVALID_MODULE);
  CHECK(contains(lastError(), "the HIP runtime rejected module <memory>: hipErrorInvalidImage (200)"));
  CHECK(rejected == nullptr);
}

TEST_CASE("binding the HIP runtime: which library, and why it cannot be used") {
  using namespace tlc::backend;
  CHECK(gpuDriverCandidates(GpuRuntime::Hip) == std::vector<std::string>{TLC_FAKE_AMDHIP64});
  GpuDriverApi api;
  std::string error;
  CHECK(!bindGpuDriverApi(GpuRuntime::Hip, {"/nonexistent/libamdhip64.so"}, &api, &error));
  CHECK(contains(error, "the HIP runtime (libamdhip64.so) was not found: looked for /nonexistent/libamdhip64.so"));
  CHECK(contains(error, "install ROCm's HIP runtime"));
  CHECK(contains(error, "set TLC_HIP_RUNTIME to the path of libamdhip64.so"));

  CHECK(!bindGpuDriverApi(GpuRuntime::Hip, {"libm.so.6"}, &api, &error));
  CHECK(contains(error, "the HIP runtime library libm.so.6 lacks `hipInit`"));

  setenv("TLC_FAKE_HIP_DEVICES", "0", 1);
  CHECK(!bindGpuDriverApi(GpuRuntime::Hip, {TLC_FAKE_AMDHIP64}, &api, &error));
  unsetenv("TLC_FAKE_HIP_DEVICES");
  CHECK(contains(error, std::string("the HIP runtime (") + TLC_FAKE_AMDHIP64 +
                            ") found no usable AMD GPU: hipInit / device count failed: hipErrorNoDevice (100)"));

  REQUIRE(bindGpuDriverApi(GpuRuntime::Hip, {TLC_FAKE_AMDHIP64}, &api, &error));
  CHECK(api.version == 50221153);
  CHECK(bool(api.launchKernel));
  CHECK(!api.ctxSetCurrent);  // HIP has no contexts
  CHECK(api.describe(500) == "hipErrorNotFound (500)");

  unsetenv("TLC_HIP_RUNTIME");
  std::vector<std::string> defaults = gpuDriverCandidates(GpuRuntime::Hip);
  setenv("TLC_HIP_RUNTIME", TLC_FAKE_AMDHIP64, 1);
  CHECK(defaults == std::vector<std::string>{"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5",
                                             "/opt/rocm/lib/libamdhip64.so"});
}

namespace {
unsigned reportedType = 0;
int reportedResult = 0;
int pointerAttribute(void* data, int attribute, backend::DevicePtr) {
  CHECK(attribute == 2);  // the memory type
  *static_cast<unsigned*>(data) = reportedType;
  return reportedResult;
}
}  // namespace

TEST_CASE("which memory a HIP kernel can read, by ROCm version") {
  backend::GpuDriverApi api;
  api.runtime = backend::GpuRuntime::Hip;
  api.pointerGetAttribute = pointerAttribute;
  std::string why;
  int x = 0;
  // ROCm 5: memory unknown to HIP is an error; type 0 is page-locked host memory.
  api.version = 50221153;
  reportedResult = 1;
  CHECK(!api.deviceAccessible(&x, &why));
  CHECK(contains(why, "allocate it with hipMalloc, hipMallocManaged or hipHostMalloc"));
  reportedResult = 0, reportedType = 0;
  CHECK(api.deviceAccessible(&x, &why));
  // ROCm 6: unknown memory is hipMemoryTypeUnregistered (0); host is 1, device 2.
  api.version = 60032830;
  CHECK(!api.deviceAccessible(&x, &why));
  for (unsigned type : {1u, 2u, 3u}) {
    reportedType = type;
    CHECK(api.deviceAccessible(&x, &why));
  }
  // Without the entry point nothing can be told: accepted.
  api.pointerGetAttribute = nullptr;
  CHECK(api.deviceAccessible(&x, &why));
}
