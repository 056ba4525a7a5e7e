// Row padding of shared buffers chosen from their bank conflicts.
//
// A shared buffer that the kernel reads or writes element by element in
// Parallel loops is sampled: for the first warp and the first iteration of
// each nest, each lane's element index is evaluated under the nest's thread
// mapping (the flat mapping of a plain nest, the register layout of a nest
// over register tiles). Each candidate padding of the rows (none, one 32-bit
// word, 16 bytes) gives the accesses' bank conflicts (the most distinct
// words that one bank serves); the padding with the fewest wins.
#pragma once

#include <functional>
#include <unordered_set>
#include <vector>

#include "compiler/backends/cuda/cuda_fragment_layout.h"
#include "compiler/ir/ir.h"

namespace tlc::cuda {

// One element access of a shared buffer by the 32 lanes of the first warp:
// each lane's index (empty when the lane does not reach the access).
struct LaneAccess {
  const ir::BufferNode* buffer = nullptr;
  std::vector<std::vector<int64_t>> lanes;
};

// The element accesses of `candidates` in the Parallel nests of `body` run
// by `threads` threads, sampled as above. Nests whose mapping is not known
// here (over mma accumulators, of non-constant extents) are skipped. A plain
// nest that takes vector accesses (cuda_vector_loops.h, with `vectorizable`
// as there) is sampled in its chunked mapping; its vector accesses, which a
// padding does not make conflict, are left out and their buffers added to
// `vectorBuffers`.
std::vector<LaneAccess> sampleSharedAccesses(const ir::Stmt& body, const FragmentLayoutPlan& tiles,
                                             const std::unordered_set<const ir::BufferNode*>& candidates,
                                             const std::unordered_set<const ir::BufferNode*>& mmaTiles,
                                             int64_t threads,
                                             const std::function<bool(const ir::BufferNode*)>& vectorizable,
                                             std::unordered_set<const ir::BufferNode*>* vectorBuffers);

// The most distinct 32-bit words one of the 32 banks serves for `a`, with the
// buffer's rows (last dimension `shape.back()`) padded by `pad` elements.
int64_t bankConflictDegree(const LaneAccess& a, const std::vector<int64_t>& shape, int64_t pad, int64_t elemBytes);

// The row padding in elements (0, one word, or 16 bytes) with the fewest
// conflicts over `accesses` of a buffer of `shape`; `wordPadOk` allows the
// one-word padding (which leaves rows aligned to 4 bytes only).
int64_t chooseRowPad(const std::vector<LaneAccess>& accesses, const std::vector<int64_t>& shape, int64_t elemBytes,
                     bool wordPadOk);

}  // namespace tlc::cuda
