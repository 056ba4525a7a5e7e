#include <doctest/doctest.h>
#include "compiler/backends/cuda_emu/emulator.h"
using namespace tlc::cuda_emu;
TEST_CASE("smoke") {
  const char* src = R"(
extern "C" __global__ void add(const float* __restrict__ a, float* __restrict__ b, int n) {
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] : 0.f;
  __syncthreads();
  float v = s[(threadIdx.x + 1) % blockDim.x];
  v = v + __shfl_xor_sync(0xffffffffu, v, 1);
  if (i < n) b[i] = v;
}
)";
  std::string err;
  auto m = EmulatedModule::compile(src, &err);
  REQUIRE_MESSAGE(m, err);
  std::vector<float> a(100), b(100);
  for (int i = 0; i < 100; ++i) a[i] = i;
  std::vector<KernelArg> args = {KernelArg::buffer("a", a.data(), 400, false), KernelArg::buffer("b", b.data(), 400, true),
                                 KernelArg::value("n", 100)};
  LaunchConfig cfg; cfg.grid.x = 2; cfg.block.x = 64;
  auto r = m->launch("add", cfg, args);
  MESSAGE(r.render());
  CHECK(r.clean());
}
