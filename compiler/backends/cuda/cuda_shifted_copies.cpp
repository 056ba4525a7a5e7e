// Tile copies from global tensors whose rows are not whole vectors long
// (K = 4093 float16 elements): neither TMA nor a 16-byte cp.async can load
// them, so a whole tile inside the tensor loads each vector as the aligned
// words around it, shifted into place in registers (tlc::load_shifted, in
// cuda_tile_ops.cpp's emitCopy), and an edge tile does the same here for
// the vectors that lie inside the tensor.
#include <algorithm>
#include <utility>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_region_index.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;
using namespace regions;

// The condition that `n` more elements of the (row-major) global buffer `b`
// follow its element `index`: the reach of tlc::load_shifted past a run
// that ends there.
Expr KernelEmitter::elementsAfter(const Buffer& b, const std::vector<Expr>& index, int64_t n) {
  Expr size = makeInt(1, DType::Int64);
  for (const Expr& e : b->shape) size = mul(size, e->dtype == DType::Int64 ? e : makeCast(DType::Int64, e));
  Expr off = offsetExpr(b, index);
  if (off->dtype != DType::Int64) off = makeCast(DType::Int64, off);
  return passes::simplifyExpr(lt(add(off, makeInt(n, DType::Int64)), size));
}

// The condition, as C, that the rows of global region `r` start on
// V-element vectors: its buffer's last extent and the region's last origin
// are multiples of V, and the buffer is aligned to a vector.
std::string KernelEmitter::alignedRows(const Region& r, int64_t V) {
  return expr(passes::simplifyExpr(vectorRowStarts(r, V))) + " && tlc::aligned(" + bufs_[r.buffer.get()].name + ", " +
         std::to_string(V * dtypeBytes(r.buffer->dtype)) + ")";
}

// An edge tile of copy `c` (one that loadsShifted, V elements a vector, with
// per-thread offsets declared before its loop): straight-line, every vector
// of the thread's share is loaded into registers before the first is
// stored, so the tile costs one round trip to memory as a whole tile does
// (the checked loop takes one per vector). A vector inside the source with
// V elements after it is one tlc::load_shifted; any other is read element by
// element, zero outside the source. A vector inside the destination is one
// store, any other element by element where inside.
void KernelEmitter::emitShiftedEdgeTile(const CopyStmt* c, int64_t V) {
  const Region &src = c->src, &dst = c->dst;
  const std::vector<std::pair<std::string, std::string>>& offsets = hoistedCopyOffsets_.at(c);
  const DType t = src.buffer->dtype;
  const std::string T = typeName(t), vs = std::to_string(V), bytes = std::to_string(V * dtypeBytes(t));
  auto sd = nonUnitDims(src), dd = nonUnitDims(dst);
  auto es = extentsOf(src, sd);
  std::vector<Expr> mins;
  for (auto& rg : src.ranges) mins.push_back(rg.min);
  BufferInfo& di = bufs_[dst.buffer.get()];
  Expr version = di.versions > 1 && di.version ? mul(di.version, makeInt(di.elems)) : makeInt(0);
  std::string sb = fresh("src_base"), db = fresh("dst_base"), sv = fresh("edge_v");
  line("const " + T + "* " + sb + " = " + bufs_[src.buffer.get()].name + " + " + expr(offsetExpr(src.buffer, mins)) +
       ";");
  line(T + "* " + db + " = " + di.name + " + " + expr(version) + ";");
  line("__align__(16) " + T + " " + sv + "[" + std::to_string(offsets.size() * V) + "];");
  // Element v of the thread's vector j, in the source and the destination.
  auto indices = [&](size_t j, int64_t v) {
    auto locals = unflatten(mul(add(makeInt((int64_t)j * threads_), threadIdx()), makeInt(V)), es);
    auto sIdx = regionIndex(src, sd, locals), dIdx = regionIndex(dst, dd, locals);
    sIdx.back() = add(sIdx.back(), makeInt(v));
    dIdx.back() = add(dIdx.back(), makeInt(v));
    return std::make_pair(sIdx, dIdx);
  };
  auto simplified = [&](const Expr& e) { return expr(passes::simplifyExpr(e)); };
  // Whether `e`, a function of the thread index alone (a destination tile's
  // bounds), holds for every thread of the block.
  auto trueForEveryThread = [&](const Expr& e) {
    auto values = perThreadValues(e);
    return values && std::all_of(values->begin(), values->end(), [](int64_t v) { return v != 0; });
  };
  for (size_t j = 0; j < offsets.size(); ++j) {
    auto first = indices(j, 0).first, last = indices(j, V - 1).first;
    Expr inside = logicalAnd(logicalAnd(inBounds(src.buffer, first), inBounds(src.buffer, last)),
                             elementsAfter(src.buffer, last, V));
    std::string slot = "&" + sv + "[" + std::to_string(j * V) + "]";
    open("if (" + simplified(inside) + ")");
    line("tlc::load_shifted<" + bytes + ">(" + slot + ", " + sb + " + " + offsets[j].first + ");");
    close("} else {");
    ++indent_;
    for (int64_t v = 0; v < V; ++v)
      line(sv + "[" + std::to_string(j * V + v) + "] = " + maskedRead(src.buffer, indices(j, v).first, t) + ";");
    close();
  }
  for (size_t j = 0; j < offsets.size(); ++j) {
    auto dFirst = indices(j, 0).second, dLast = indices(j, V - 1).second;
    std::string slot = "&" + sv + "[" + std::to_string(j * V) + "]";
    Expr inside = passes::simplifyExpr(logicalAnd(inBounds(dst.buffer, dFirst), inBounds(dst.buffer, dLast)));
    if (isAlwaysTrue(inside) || trueForEveryThread(inside)) {
      line("tlc::copy_vec<" + T + ", " + vs + ">(" + db + " + " + offsets[j].second + ", " + slot + ");");
      continue;
    }
    open("if (" + expr(inside) + ")");
    line("tlc::copy_vec<" + T + ", " + vs + ">(" + db + " + " + offsets[j].second + ", " + slot + ");");
    close("} else {");
    ++indent_;
    for (int64_t v = 0; v < V; ++v)
      storeInside(dst.buffer, indices(j, v).second, sv + "[" + std::to_string(j * V + v) + "]");
    close();
  }
}

}  // namespace tlc::cuda
