// A kernel's block indices: from blockIdx, or from the tile number of a
// persistent kernel's tile loop, in the row order or in rasterization panels
// (groups of grid rows walked column by column, so that the blocks running
// together share operand panels in L2).
#include <algorithm>
#include <cstdint>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

// The rows of a rasterization panel: the kernel's `T.use_swizzle` (1: the
// row order); where it gives none, kGemmPanel rows for a gemm mainloop on a
// 2-D grid (a pipelined loop of tile copies and one gemm: the blocks running
// together then share the A row panels and B column panels of a few grid
// rows in L2, as `T.use_swizzle(8)` in examples/gemm/gemm.tl; H100, 4096³:
// NT 0.97 -> 1.00x cuBLAS, TN 0.96 -> 0.97x, int8 0.88 -> 0.95x), else the
// row order: it keeps the blocks of one (batch, head) together in
// attention-shaped kernels, and a batched gemm's planes of about a wave ran
// 5% slower in panels (bench/RESULTS.md, 2026-12-07).
int64_t KernelEmitter::rasterPanel() const {
  constexpr int64_t kGemmPanel = 8;
  if (kernel_.swizzle > 0 || kernel_.blockVars.size() != 2) return kernel_.swizzle;
  struct GemmMainloop : IRVisitor {
    bool found = false;
    void visitFor(const ForStmt* f) override {
      if (f->forKind == ForKind::Pipelined) {
        int gemms = 0, others = 0;
        for (const Stmt& s : seqStmts(f->body)) {
          gemms += s->kind == StmtKind::Gemm;
          others += s->kind != StmtKind::Gemm && s->kind != StmtKind::Copy;
        }
        found |= gemms == 1 && others == 0;
      }
      IRVisitor::visitFor(f);
    }
  } scan;
  scan.visit(kernel_.body);
  return scan.found ? kGemmPanel : 1;
}

void KernelEmitter::emitBlockIndices(const std::string& tile) {
  const char* dims[] = {"x", "y", "z"};
  // The grid extents: gridDim, or the logical grid of a persistent kernel.
  auto extent = [&](int d) { return (tile.empty() ? "gridDim." : "tlc_grid_") + std::string(dims[d]); };
  const int64_t swizzle = rasterPanel();
  if (swizzle > 1) {
    // Block rasterization: the launch order walks groups of `swizzle` grid
    // rows, column by column within a group (the last group may be shorter).
    // A panel taller than the grid is one group of all its rows; block
    // numbers are 64-bit (gridDim.x * gridDim.y blocks need not fit in 32).
    // rasterPanel gives a panel only to a grid of two or three dimensions
    // (the verifier holds `swizzle` to those). A third grid dimension is not
    // reordered: each of its (x, y) planes is rasterized alone.
    std::string panel = std::to_string(std::min<int64_t>(swizzle, UINT32_MAX)) + "u";
    std::string block = tile.empty() ? "(unsigned long long)blockIdx.y * gridDim.x + blockIdx.x" : tile;
    if (kernel_.blockVars.size() == 3) {
      const ir::Var& z = kernel_.blockVars[2];
      std::string decl = "const " + typeName(z->dtype) + " " + varName(z) + " = ";
      if (tile.empty()) {
        line(decl + "blockIdx.z;");
      } else {
        line("const unsigned long long tlc_plane = (unsigned long long)" + extent(0) + " * " + extent(1) + ";");
        line(decl + "(" + typeName(z->dtype) + ")((unsigned long long)(" + tile + ") / tlc_plane);");
        block = "(unsigned long long)(" + tile + ") % tlc_plane";
      }
    }
    line("const unsigned tlc_rows = min(" + extent(1) + ", " + panel + ");");
    line("const unsigned long long tlc_block = " + block + ";");
    line("const unsigned long long tlc_group_blocks = (unsigned long long)tlc_rows * " + extent(0) + ";");
    line("const unsigned long long tlc_group = tlc_block / tlc_group_blocks;");
    line("const unsigned long long tlc_in_group = tlc_block - tlc_group * tlc_group_blocks;");
    line("const unsigned tlc_first_row = (unsigned)(tlc_group * tlc_rows);");
    line("const unsigned tlc_group_rows = min(" + extent(1) + " - tlc_first_row, tlc_rows);");
    line("const int " + varName(kernel_.blockVars[1]) + " = (int)(tlc_first_row + tlc_in_group % tlc_group_rows);");
    line("const int " + varName(kernel_.blockVars[0]) + " = (int)(tlc_in_group / tlc_group_rows);");
    return;
  }
  std::string rest = tile;
  for (size_t d = 0; d < kernel_.blockVars.size(); ++d) {
    const std::string decl = "const " + typeName(kernel_.blockVars[d]->dtype) + " " + varName(kernel_.blockVars[d]);
    if (tile.empty()) {
      line(decl + " = blockIdx." + dims[d] + ";");
      continue;
    }
    // x fastest: tile = x + gx * (y + gy * z).
    bool last = d + 1 == kernel_.blockVars.size();
    line(decl + " = (" + typeName(kernel_.blockVars[d]->dtype) + ")(" + (last ? rest : rest + " % " + extent((int)d)) +
         ");");
    rest = "(" + rest + " / " + extent((int)d) + ")";
  }
}

}  // namespace tlc::cuda
