// Statements of a kernel that every block runs alike, which the CPU backend
// runs once per chunk of blocks instead of once per block.
//
// Kernels load per-column parameters into tiles in every block (the gamma
// and beta of a layernorm, the weight of an RMSNorm: `T.copy(gamma, g)`), so
// each block converts and copies the same vectors again. A block function
// runs a chunk of consecutive blocks on one thread, with the same tiles, so a
// statement of the kernel's body (at its top level, after the allocations)
// runs once before the chunk's first block when:
//   - it writes only block-local buffers, which no other statement of the
//     kernel writes and no statement before it reads;
//   - it reads only tensors that the kernel never writes (no store, atomic or
//     gemm operand names them) and no block-local buffer;
//   - it does not use the block indices, and has no intrinsic (atomic, gemm),
//     print or jump.
// Every block then finds the tile as it would have made it.
#pragma once

#include <unordered_set>

#include "compiler/ir/ir.h"

namespace tlc::cpu {

// The top-level statements of `k`'s body that the rule above hoists.
std::unordered_set<const ir::StmtNode*> blockInvariantStatements(const ir::KernelStmt& k);

}  // namespace tlc::cpu
