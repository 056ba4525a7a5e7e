// Staging for TMA (cuda/tensor_map.h, StagedTensor): the module's kernel
// tlc_stage_rows, run in the CUDA emulator, copies rows of every element
// size, at source addresses aligned only to their elements, into rows padded
// to 16 bytes with zero tails, reading nothing outside the tensor; compared
// byte for byte with a plain loop.
#include <doctest/doctest.h>

#include <cstring>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/cuda_emu/emulator.h"

using namespace tlc;
using namespace tlc::cuda_emu;

namespace {

unsigned char* alignUp(unsigned char* p, uintptr_t to) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(p) + to - 1) / to * to);
}

}  // namespace

TEST_CASE("tlc_stage_rows pads rows of every element size to 16 bytes, reading only the tensor") {
  std::string err;
  auto m = EmulatedModule::compile("#include \"tlc_cuda.h\"\n" + cuda::stageRowsKernel(), &err);
  REQUIRE_MESSAGE(m, err);
  for (int elem : {1, 2, 4, 8})
    for (int64_t cols : {1, 3, 8, 9, 100})
      for (int64_t rows : {1, 5, 33})
        for (int offset : {0, 1, 3}) {  // elements between a 256-byte boundary and the tensor
          CAPTURE(elem);
          CAPTURE(cols);
          CAPTURE(rows);
          CAPTURE(offset);
          cuda::StagedTensor st;
          st.elemBytes = elem;
          st.rows = rows;
          st.rowBytes = cols * elem;
          st.pitch = cuda::stagedPitch(st.rowBytes);
          const size_t bytes = (size_t)(rows * st.rowBytes);
          std::vector<unsigned char> srcStore(bytes + 512), dstStore((size_t)(rows * st.pitch) + 512, 0xab);
          unsigned char* src = alignUp(srcStore.data(), 256) + offset * elem;
          unsigned char* dst = alignUp(dstStore.data(), 256);
          for (size_t i = 0; i < bytes; ++i) src[i] = (unsigned char)(i * 37 + 11 + (i >> 8));
          cuda::StageLaunch sl = cuda::stageLaunch(st);
          CHECK(sl.rowThreads >= 1);
          CHECK(sl.threads % sl.rowThreads == 0);
          LaunchConfig cfg;
          cfg.grid = {sl.grid[0], sl.grid[1], sl.grid[2]};
          cfg.block.x = sl.threads;
          std::vector<KernelArg> args = {KernelArg::buffer("src", src, bytes, false),
                                         KernelArg::buffer("dst", dst, (size_t)(rows * st.pitch), true),
                                         KernelArg::value<long long>("rows", st.rows),
                                         KernelArg::value<long long>("row_bytes", st.rowBytes),
                                         KernelArg::value<long long>("pitch", st.pitch),
                                         KernelArg::value<int>("elem_bytes", elem),
                                         KernelArg::value<int>("row_threads", sl.rowThreads)};
          LaunchResult r = m->launch(cuda::kStageRowsEntry, cfg, args);
          INFO(r.render());
          REQUIRE(r.error.empty());
          CHECK(r.clean());
          size_t wrong = 0;
          for (int64_t row = 0; row < rows; ++row)
            for (int64_t b = 0; b < st.pitch; ++b) {
              unsigned char want = b < st.rowBytes ? src[row * st.rowBytes + b] : 0;
              wrong += dst[row * st.pitch + b] != want;
            }
          CHECK(wrong == 0);
        }
}

TEST_CASE("a launch stages a tensor TMA cannot address when its map allows it, else falls back or fails") {
  // A [100, 203] float16 tensor: rows of 406 bytes.
  auto tensorOf = [](int) { return cuda::LaunchTensor{"float16", 4096, {100, 203}, "A"}; };
  cuda::TensorMapArg map;
  map.paramIndex = 0;
  map.box = {64, 64};
  map.swizzle = 128;
  map.stage = true;
  // Two maps over the same tensor share one staged copy.
  cuda::LaunchMaps staged = cuda::planLaunchMaps("k", {map, map}, tensorOf, true, true);
  CHECK(staged.error.empty());
  CHECK_FALSE(staged.fallback);
  REQUIRE(staged.staged.size() == 1);
  CHECK(staged.stagedOf == std::vector<int>{0, 0});
  CHECK(staged.staged[0].rows == 100);
  CHECK(staged.staged[0].rowBytes == 406);
  CHECK(staged.staged[0].pitch == 416);
  CHECK(staged.staged[0].source == 4096);
  CHECK(staged.workspaceBytes >= 100 * 416);
  CHECK(staged.workspaceBytes % 256 == 0);
  cuda::placeStagedMaps(&staged, 1 << 20);
  CHECK(staged.specs[0].address == (1u << 20));
  CHECK(staged.specs[0].dims[0] == 203);  // the tensor's own columns: the padding reads as out of bounds
  CHECK(staged.specs[0].strides[1] == 416);
  // Not stageable (written by the kernel, or no workspace): the version without TMA, else an error.
  map.stage = false;
  cuda::LaunchMaps fallback = cuda::planLaunchMaps("k", {map}, tensorOf, true, true);
  CHECK(fallback.fallback);
  CHECK(fallback.note.find("version without TMA") != std::string::npos);
  CHECK(fallback.specs.empty());
  map.stage = true;
  CHECK(cuda::planLaunchMaps("k", {map}, tensorOf, true, false).fallback);
  map.stage = false;
  cuda::LaunchMaps error = cuda::planLaunchMaps("k", {map}, tensorOf, false, true);
  CHECK(error.error.find("not a multiple of 16") != std::string::npos);
  // Wide rows are padded to whole 128-byte lines.
  map.stage = true;
  auto wide = [](int) { return cuda::LaunchTensor{"float16", 4096, {4093, 4097}, "B"}; };
  cuda::LaunchMaps lines = cuda::planLaunchMaps("k", {map}, wide, true, true);
  REQUIRE(lines.staged.size() == 1);
  CHECK(lines.staged[0].rowBytes == 8194);
  CHECK(lines.staged[0].pitch == 8320);
  CHECK(cuda::stagedPitch(2046) == 2048);
  CHECK(cuda::stagedPitch(2050) == 2176);
  // A tensor TMA addresses in place is never staged.
  auto aligned = [](int) { return cuda::LaunchTensor{"float16", 4096, {100, 200}, "A"}; };
  cuda::LaunchMaps direct = cuda::planLaunchMaps("k", {map}, aligned, true, true);
  CHECK(direct.staged.empty());
  CHECK(direct.specs.size() == 1);
  CHECK(direct.specs[0].address == 4096);
}

TEST_CASE("a store map over a tensor TMA cannot address is passed as zeros: the kernel stores it without TMA") {
  auto unaligned = [](int) { return cuda::LaunchTensor{"float16", 4096, {100, 203}, "C"}; };
  auto aligned = [](int) { return cuda::LaunchTensor{"float16", 4096, {100, 200}, "C"}; };
  cuda::TensorMapArg store;
  store.paramIndex = 0;
  store.box = {128, 64};
  store.swizzle = 128;
  store.store = true;
  // Neither staged nor a fallback nor an error: a map of rank 0.
  cuda::LaunchMaps plan = cuda::planLaunchMaps("k", {store}, unaligned, false, true);
  CHECK(plan.error.empty());
  CHECK_FALSE(plan.fallback);
  CHECK(plan.staged.empty());
  REQUIRE(plan.specs.size() == 1);
  CHECK(plan.specs[0].rank == 0);
  // Encoded (by the emulator as by the driver's launchers) as 128 zero bytes.
  unsigned char bytes[128];
  std::memset(bytes, 0xab, sizeof bytes);
  std::string why;
  REQUIRE(cuda_emu::encodeTensorMap(plan.specs[0], bytes, &why));
  bool zero = true;
  for (unsigned char b : bytes) zero = zero && b == 0;
  CHECK(zero);
  // A tensor TMA addresses gets its map.
  cuda::LaunchMaps direct = cuda::planLaunchMaps("k", {store}, aligned, false, true);
  REQUIRE(direct.specs.size() == 1);
  CHECK(direct.specs[0].rank == 2);
  CHECK(direct.specs[0].address == 4096);
}
