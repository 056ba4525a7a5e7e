// The Hopper (sm_90a) gemm mainloop: a Pipelined loop of two global->shared
// copies followed by one float16 / bfloat16 gemm on the copied tiles becomes
// a warp-specialized loop. One extra warpgroup (the producer, threads
// [threads, threads + 128)) issues tensor copies (TMA) into a ring of
// `num_stages` shared-memory stages, each guarded by a `full` and an `empty`
// mbarrier; the kernel's own threads (the consumers, whole warpgroups) wait
// for a stage, multiply it with wgmma from shared-memory descriptors, and
// release it once the next stage's wgmmas are issued (wgmma.wait_group 1).
//
// The shared tiles are stored as TMA writes them: rows of the tile's
// contiguous dimension cut into panels of `span` bytes (128, 64 or 32, the
// swizzle span), each panel `rows` rows of `span` bytes with the swizzle of
// that span; wgmma reads them through descriptors with the same swizzle.
// The accumulator keeps the mma.sync layout of a warp grid of threads / 32
// warps by 1: each warp owns `slices` consecutive 16-row slices, each of
// which is the wgmma m64nN layout of the warp within one m64 instruction of
// its warpgroup (see HopperMainloop::slices).
#pragma once

#include <optional>
#include <string>

#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/backends/cuda/cuda_options.h"
#include "compiler/ir/ir.h"

namespace tlc::cuda {

// One operand tile fed by TMA.
struct HopperOperand {
  const ir::CopyStmt* copy = nullptr;  // the producer copy global -> shared
  const ir::BufferNode* tile = nullptr;
  int64_t rows = 0, cols = 0;  // the shared tile [rows, cols], cols contiguous
  bool mnMajor = false;        // contiguous along M (A) or N (B): a transposed wgmma operand
  int64_t span = 0;            // swizzle span in bytes (128, 64, 32)
  int64_t panels = 0;          // cols * element bytes / span
  int64_t stageBytes = 0;      // rows * cols * element bytes
  int rowDim = -1, colDim = -1;  // the tensor dimensions the tile's rows and columns run along
};

struct HopperMainloop {
  const ir::ForStmt* loop = nullptr;
  const ir::GemmStmt* gemm = nullptr;
  HopperOperand a, b;
  MmaShape shape;  // warpsM = threads / 32, warpsN = 1
  int64_t stages = 0;
  // 16-row slices of the accumulator per warp (block_M / (16 * warps)). Warp
  // w owns rows [w * 16 * slices, + 16 * slices); slice a of the warps of
  // warpgroup g is one m64 wgmma, whose 64 A rows the producer stores
  // together: logical 16-row chunk q of A lands at chunk
  // ((g * slices + a) * 4 + w % 4) of the tile, w = q / slices, a = q % slices.
  int64_t slices = 1;
  // Set by chooseHopperOccupancy once the kernel's shared memory is known.
  int64_t consumerRegs = 0, producerRegs = 0;  // setmaxnreg targets
  int64_t blocksPerSM = 1;                     // __launch_bounds__ minimum blocks per SM
};

// The warp-specialized mainloop of `kernel` run by `threads` threads, or
// nullopt with *whyNot (empty when the kernel has no candidate loop).
std::optional<HopperMainloop> planHopperMainloop(const ir::KernelStmt& kernel, int64_t threads,
                                                 const CudaOptions& options, std::string* whyNot = nullptr);

// Sets the blocks per SM the kernel is compiled for and the register
// targets that follow: two blocks when one consumer warpgroup would leave
// the tensor cores idle half the time and two blocks' shared memory fits.
void chooseHopperOccupancy(HopperMainloop* plan, int64_t threads, int64_t sharedBytes, int64_t maxSharedBytes);

// Whether `options` targets the Hopper path at all (sm_90a, tensor cores, TMA).
bool hopperTarget(const CudaOptions& options);

}  // namespace tlc::cuda
