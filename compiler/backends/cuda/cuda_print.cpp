// T.print on CUDA: device printf, one call per line in the format of
// compiler/ir/print_format.h, with the block and the thread (threadIdx.x).
//
// Who prints: a print inside a Parallel loop runs in the thread that runs
// the iteration (every iteration prints). A block-level print of a value, or
// of a whole buffer in global, shared or thread-local memory, is printed by
// thread 0 (a barrier before it, placed as for any read of shared or global
// memory, makes the block's earlier writes visible). A whole fragment held in
// registers is printed by the threads that hold it, each its own elements
// with their logical indices, one replica of a replicated vector only: the
// lines are those of the other targets, in another order.
#include "compiler/backends/c_names.h"
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/backends/cuda/cuda_region_index.h"
#include "compiler/ir/print_format.h"

namespace tlc::cuda {

using namespace ir;
using namespace regions;

void KernelEmitter::emitPrintLine(const PrintStmt* p, const std::string& element, const std::vector<Expr>& index,
                                  const Expr& value) {
  DType t = value->dtype;
  PrintLine l = printLine(*p, kernel_.blockVars.size(), true, element, index.size(), t);
  std::string args = backend::cStringLiteral(l.format());
  auto integer = [&](const Expr& e) { args += ", " + cast(DType::Int64, e->dtype, expr(e)); };
  for (const Var& v : kernel_.blockVars) integer(makeVarRef(v));
  args += ", (long long)tid";
  for (const PrintTag& tag : p->iteration) integer(tag.value);
  for (const Expr& i : index) integer(i);
  std::string v = expr(value);
  switch (printArgKind(t)) {
    case PrintArgKind::Int64: args += ", " + cast(DType::Int64, t, v); break;
    case PrintArgKind::UInt64: args += ", " + cast(DType::UInt64, t, v); break;
    case PrintArgKind::Double: args += ", tlc::print_float(" + cast(DType::Float64, t, v) + ")"; break;
    case PrintArgKind::Bool: args += ", (" + v + ") ? \"True\" : \"False\""; break;
  }
  line("printf(" + args + ");");
}

void KernelEmitter::emitBlockPrint(const PrintStmt* p) {
  if (p->value) {
    open("if (tid == 0)");
    emitPrintLine(p, p->element, p->index, p->value);
    close();
    return;
  }
  const Buffer& b = p->buffer;
  const BufferInfo& info = bufs_[b.get()];
  auto load = [&](const std::vector<Expr>& idx) { return makeLoad(b, idx, p->loc); };
  open("");
  if (info.fragment) {
    // The mma accumulator layout: register r of this thread is element (i, j).
    int64_t m, n;
    constInt(b->shape[0], &m);
    constInt(b->shape[1], &n);
    Var r = makeVar("r");
    markNonNegative(r);
    open("for (int " + varName(r) + " = 0; " + varName(r) + " < " + std::to_string(info.elems) + "; ++" + varName(r) + ")");
    auto [i, j] =
        mmaAccumulatorIndex(m, n, info.warpsM, info.warpsN, threadIdx(), makeVarRef(r), info.mfma, info.colMajor, info.mmaVector);
    fragmentRegister_[b.get()] = makeVarRef(r);
    emitPrintLine(p, b->name, {i, j}, load({i, j}));
    fragmentRegister_.erase(b.get());
    close();
  } else if (info.tile) {
    const RegisterTile& tile = *info.tile;
    const RegisterLayout& l = tile.layout;
    TileLoops loops = openTileLoops(l, tile.role, true);
    Expr owner = tile.role == FragmentRole::Tile    ? makeBool(true)
                 : tile.role == FragmentRole::Rows ? l.rowVectorOwner(threadIdx())
                                                   : l.columnVectorOwner(threadIdx());
    bool guarded = !isAlwaysTrue(owner);
    if (guarded) open("if (" + expr(owner) + ")");
    std::vector<Expr> idx = tile.role == FragmentRole::Tile   ? std::vector<Expr>{loops.row, loops.col}
                            : tile.role == FragmentRole::Rows ? std::vector<Expr>{loops.row}
                                                              : std::vector<Expr>{loops.col};
    fragmentRegister_[b.get()] = loops.reg[(int)tile.role];
    emitPrintLine(p, b->name, idx, load(idx));
    fragmentRegister_.erase(b.get());
    if (guarded) close();
    closeTileLoops(loops);
  } else {
    // Global, shared and thread-local memory: thread 0, element by element in row-major order.
    open("if (tid == 0)");
    Expr total = makeInt(1, DType::Int64);
    std::vector<Expr> extents;
    for (const Expr& d : b->shape) {
      extents.push_back(makeCast(DType::Int64, d));
      total = mul(total, extents.back());
    }
    Var e = openLoop(total, false, "e");
    std::vector<Expr> idx = unflatten(makeVarRef(e), extents);
    for (size_t d = 0; d < idx.size(); ++d)
      if (idx[d]->dtype != b->shape[d]->dtype) idx[d] = makeCast(b->shape[d]->dtype, idx[d]);
    emitPrintLine(p, b->name, idx, load(idx));
    close();
    close();
  }
  close();
}

}  // namespace tlc::cuda
