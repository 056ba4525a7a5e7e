// The launch grid of a persistent kernel (CudaOptions::persistent): its
// blocks loop over the `tiles` of its logical grid, so it is launched as a
// 1-D grid of at most `blocksPerSM` blocks per SM and at most one per tile.
// Shared by every launcher (the runtime, tlc run, the CUDA emulator).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tlc::cuda {

inline int64_t persistentGridSize(int64_t tiles, int64_t smCount, int64_t blocksPerSM) {
  if (tiles <= 0) return 0;
  if (smCount <= 0) return tiles;  // unknown: one block per tile (still correct)
  return std::min(tiles, smCount * std::max<int64_t>(1, blocksPerSM));
}

}  // namespace tlc::cuda
