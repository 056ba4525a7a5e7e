#include "compiler/backends/cpu/streaming_stores.h"

#include "compiler/backends/cpu/contiguous_access.h"
#include "compiler/ir/functor.h"

namespace tlc::cpu {

using namespace ir;

BufferSet writeOnlyTensors(const PrimFunc& f) {
  struct LoadedBuffers : IRVisitor {
    BufferSet loaded;
    void visitLoad(const Load* l) override {
      loaded.insert(l->buffer.get());
      IRVisitor::visitLoad(l);
    }
  } scan;
  scan.visit(f.body);
  BufferSet out;
  for (const Param& p : f.params)
    if (p.buffer && !scan.loaded.count(p.buffer.get())) out.insert(p.buffer.get());
  return out;
}

const StoreStmt* streamableStore(const ForStmt& loop, const BufferSet& writeOnly) {
  if (loop.forKind != ForKind::Vectorized) return nullptr;
  auto* store = as<StoreStmt>(loop.body);
  if (!store || store->buffer->scope != MemScope::Global || !writeOnly.count(store->buffer.get())) return nullptr;
  int bytes = dtypeBytes(store->buffer->dtype);
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return nullptr;
  int64_t extent = 0;
  if (!constInt(loop.extent, &extent) || extent * bytes < 64) return nullptr;
  return contiguousIn(store->indices, loop.var.get()) ? store : nullptr;
}

}  // namespace tlc::cpu
