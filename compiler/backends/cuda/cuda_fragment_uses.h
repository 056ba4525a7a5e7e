// The uses of a kernel's block-level fragments, as layout inference sees
// them (cuda_fragment_layout.h): for each candidate fragment its role and
// whether some use needs it in shared memory (and where), the Parallel nests
// that touch candidates, and the links between fragments that must share a
// layout (and where). Internal to the CUDA backend.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::cuda {

enum class Role { Unknown, Tile, Rows, Columns };

struct Candidate {
  const ir::BufferNode* buffer = nullptr;
  std::vector<int64_t> shape;
  Role role = Role::Unknown;
  std::string fallback;     // non-empty: a use that needs shared memory
  SourceLoc fallbackLoc;    // that use
  int64_t globalBytes = 0;  // narrowest element of a global/shared copy partner
  bool fixed = false;       // an accumulator: its layout is given
  bool reduced = false;     // the source of a row reduction
  bool columnReduced = false;  // the source of a column reduction (dim=0)
};

// A candidate read as the A operand of a gemm.
struct GemmOperandUse {
  const ir::BufferNode* buffer;
  const ir::GemmStmt* gemm;
};

// A Parallel nest that touches candidates.
struct NestUse {
  const ir::ForStmt* loop = nullptr;
  std::vector<int64_t> extents;
  std::vector<const ir::BufferNode*> buffers;  // the candidates it touches
  Role kind = Role::Unknown;                   // Tile for 2-D nests; 1-D: the members' role
};

// Two candidates that must share a group (`sameRole`: also the role),
// because of the statement at `loc`: a Parallel loop, a reduction or a copy.
struct FragmentLink {
  const ir::BufferNode *a, *b;
  bool sameRole;
  SourceLoc loc;
  const char* how;  // "Parallel loop", "reduction", "column reduction", "copy"
};

struct FragmentUses {
  std::unordered_map<const ir::BufferNode*, Candidate> cands;
  std::vector<NestUse> nests;
  std::vector<FragmentLink> links;
  std::vector<GemmOperandUse> gemmOperands;
  // Every block-level fragment in allocation order (candidates or not).
  std::vector<const ir::BufferNode*> fragments;

  // Marks `b` (if a candidate) as needing shared memory because of `why` at `loc`; the first reason stays.
  void reject(const ir::BufferNode* b, const std::string& why, SourceLoc loc);
};

// The uses of the block-level fragments of `kernel`; the fragments in
// `fixed` (mma accumulators) are candidates whose layout is given: tiles
// that tensor-core gemms accumulate into.
FragmentUses collectFragmentUses(const ir::KernelStmt& kernel, const std::unordered_set<const ir::BufferNode*>& fixed);

// The perfectly nested Parallel loops starting at `f`, and the innermost body (cuda_mma.cpp).
std::vector<const ir::ForStmt*> parallelNest(const ir::ForStmt* f, ir::Stmt* body);

}  // namespace tlc::cuda
