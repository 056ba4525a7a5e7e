// stage-accumulator-stores: routes the stores of gemm accumulators to global
// memory through shared memory.
//
// Assumes: a verified module.
//
// Guarantees: a `copy(F, G[...])` that is a statement of a kernel's body
// (not nested in a loop or a branch; the body of a let is the kernel's),
// whose source is a whole 2-D fragment F that a gemm of the kernel
// accumulates into (or that statements store element by element from such a
// fragment's element at the same indices, as the sum of a block-scaled gemm's
// partial products is), and whose destination is a
// global region of F's shape, becomes
//     alloc F_stage: shared <G's dtype>[<F's shape>]
//     copy(F, F_stage)
//     copy(F_stage, G[...])
// when no shared buffer of the kernel is used after it and the staging
// buffer takes at most kMaxStageBytes and at most the target's shared memory
// per block (the pass option `max-shared-bytes`, which the CUDA and HIP
// backends set: 64 KB of LDS on CDNA). The values stored are the same: the
// first copy converts to G's element type as the original copy did, the
// second one moves the converted elements.
//
// Why: an mma.sync accumulator gives each thread pairs of adjacent columns on
// rows eight apart, so storing it directly writes 4- to 8-byte pieces
// scattered over many rows of G. Through shared memory the threads write
// whole 16-byte vectors of consecutive columns, and each row of G is written
// by consecutive threads. Since nothing in shared memory is used afterwards,
// the staging buffer's lifetime is disjoint from every other shared buffer's
// and the CUDA backend places it over their bytes (see docs/cuda-backend.md,
// shared memory); the size bound keeps the kernel within the shared memory
// of every supported GPU even when the other buffers are smaller.
#pragma once

#include <cstdint>

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

// The largest staging buffer, in bytes (including one 16-byte pad per row),
// below the 99 KB per block of the smallest supported GPU (sm_86/sm_89).
constexpr int64_t kMaxStageBytes = 96 * 1024;

ir::Module stageAccumulatorStores(const ir::Module& m, PassContext& ctx);

}  // namespace tlc::passes
