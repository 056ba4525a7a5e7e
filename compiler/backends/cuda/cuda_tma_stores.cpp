// Epilogue stores by TMA (sm_90a). A kernel with a Hopper mainloop stores
// its gemm accumulator through a shared staging tile (stage-accumulator-
// stores: `copy(F, F_stage); copy(F_stage, G[...])`). Here the staging tile
// takes the panel layout TMA reads (layout::Layout::panels, as the ring's
// tiles) and the second copy becomes tensor stores issued by one thread:
// each thread's writes of the tile are fenced for the async proxy before
// the barrier that precedes the copy (syncThreads), thread 0 issues one
// `cp.async.bulk.tensor` store per panel and waits until they have read the
// tile (the barrier after the copy then frees it), and the elements outside
// the tensor are not written. The consumers thus leave the tile's global
// writes to TMA instead of moving every chunk through their registers.
//
// The tensor's map is an extra kernel parameter (TensorMapArg::store). Where
// TMA cannot address the tensor (rows not a multiple of 16 bytes, an
// unaligned address), the launch passes a map of zeros and the kernel,
// which tests it, runs the plain copy instead.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/ir/buffer_access.h"

namespace tlc::cuda {

using namespace ir;

namespace {

// How many statements read each buffer.
class ReadCounts : public BufferAccessVisitor {
 public:
  std::unordered_map<const BufferNode*, int> reads;

 protected:
  void read(const Buffer& b) override { ++reads[b.get()]; }
};

// The copies of staging tiles to global tensors.
class StagingCopies : public IRVisitor {
 public:
  explicit StagingCopies(const std::unordered_set<const BufferNode*>& tiles) : tiles_(tiles) {}
  std::vector<const CopyStmt*> copies;
  void visitCopy(const CopyStmt* c) override {
    if (tiles_.count(c->src.buffer.get()) && c->dst.buffer->scope == MemScope::Global) copies.push_back(c);
  }

 private:
  const std::unordered_set<const BufferNode*>& tiles_;
};

}  // namespace

void KernelEmitter::planTmaStores(const std::unordered_set<const BufferNode*>& stagingTiles) {
  tmaStores_.clear();
  if (!hopper_ || !options_.tma) return;
  ReadCounts counts;
  counts.visit(kernel_.body);
  StagingCopies scan(stagingTiles);
  scan.visit(kernel_.body);
  for (const CopyStmt* c : scan.copies) {
    const Buffer &s = c->src.buffer, &g = c->dst.buffer;
    int64_t rows, cols;
    TmaDType type;
    int elemBytes = 0;
    // A whole 2-D tile, read by this copy only, of the tensor's element type.
    if (s->shape.size() != 2 || !constInt(s->shape[0], &rows) || !constInt(s->shape[1], &cols) ||
        counts.reads[s.get()] != 1 || s->dtype != g->dtype ||
        !tmaDTypeOf(std::string(dtypeName(g->dtype)), &type, &elemBytes) || rows > 256 || !isFullRegion(c->src))
      continue;
    // Each panel starts where its swizzle pattern does (8 rows of the span,
    // from the tile's 1024-byte aligned base), as Layout::panels assumes.
    int64_t span = panelSpan(cols, elemBytes);
    if (!span || rows % 8) continue;
    // A tensor parameter, the tile's columns along its contiguous dimension,
    // its rows along another one; every other extent 1.
    const int param = paramIndexOf(g.get());
    const size_t rank = g->shape.size();
    if (param < 0 || rank < 2 || rank > 5 || c->dst.ranges.size() != rank) continue;
    int rowDim = -1;
    bool ok = true;
    for (size_t d = 0; d < rank && ok; ++d) {
      int64_t e;
      if (!constInt(c->dst.ranges[d].extent, &e)) ok = false;
      else if (d + 1 == rank) ok = e == cols;
      else if (e == rows && rowDim < 0 && rows > 1) rowDim = (int)d;
      else ok = e == 1;
    }
    if (!ok || rowDim < 0) continue;
    TmaStore ts;
    ts.tile = s.get();
    ts.copy = c;
    ts.rows = rows;
    ts.cols = cols;
    ts.span = span;
    ts.arg.paramIndex = param;
    ts.arg.box.assign(rank, 1);
    ts.arg.box[rowDim] = rows;
    ts.arg.box[rank - 1] = span / elemBytes;
    ts.arg.swizzle = (int)span;
    ts.arg.store = true;
    tmaStores_.push_back(ts);
  }
}

const KernelEmitter::TmaStore* KernelEmitter::tmaStoreOf(const BufferNode* tile) const {
  for (const TmaStore& ts : tmaStores_)
    if (ts.tile == tile) return &ts;
  return nullptr;
}

std::string KernelEmitter::tmaStoreParams() {
  std::string params;
  for (TmaStore& ts : tmaStores_) {
    tensorMaps_.push_back(ts.arg);
    ts.mapName = fresh(bufs_[ts.copy->dst.buffer.get()].name + "_store_tmap");
    params += ", const __grid_constant__ tlc::TensorMap " + ts.mapName;
  }
  return params;
}

void KernelEmitter::emitTmaStore(const CopyStmt* c, const TmaStore& ts, const std::function<void()>& plain) {
  const Region& dst = c->dst;
  const int64_t elemBytes = dtypeBytes(ts.tile->dtype), panelElems = ts.span / elemBytes;
  const std::string& tile = bufs_[ts.tile].name;  // the tile's pointer, declared at its allocation
  open("if (tlc::tensor_map_valid(&" + ts.mapName + "))");
  open("if (tid == 0)");
  const size_t rank = dst.ranges.size();
  for (int64_t p = 0; p < ts.cols / panelElems; ++p) {
    std::string coords;
    for (size_t d = rank; d-- > 0;) {
      Expr x = dst.ranges[d].min;
      if (d + 1 == rank && p) x = add(x, makeInt(p * panelElems, x->dtype));
      coords += ", (int)(" + expr(x) + ")";
    }
    line("tlc::tma_store_" + std::to_string(rank) + "d(&" + ts.mapName + ", " + tile + " + " +
         std::to_string(p * ts.rows * panelElems) + coords + ");");
  }
  line("tlc::tma_store_commit_wait_read();");
  close();
  close("} else {");
  ++indent_;
  plain();
  close();
}

}  // namespace tlc::cuda
