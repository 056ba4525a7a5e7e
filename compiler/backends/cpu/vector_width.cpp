#include "compiler/backends/cpu/vector_width.h"

#include <algorithm>

#include "compiler/ir/functor.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// The value types of a loop body: loaded, stored, converted and float
// computed ones (index arithmetic stays scalar in a contiguous loop).
struct ValueTypes : IRVisitor {
  bool innermost = true;
  bool narrowFloatLoad = false;
  int widest = 0;

  void note(DType t) {
    if (t != DType::Bool) widest = std::max(widest, dtypeBytes(t));
  }
  void visitFor(const ForStmt* f) override {
    innermost = false;
    IRVisitor::visitFor(f);
  }
  void visitLoad(const Load* l) override {
    DType t = l->buffer->dtype;
    narrowFloatLoad |= t == DType::Float16 || t == DType::BFloat16;
    note(t);
    IRVisitor::visitLoad(l);
  }
  void visitStore(const StoreStmt* s) override {
    note(s->buffer->dtype);
    IRVisitor::visitStore(s);
  }
  void visitCast(const Cast* c) override {
    note(c->dtype);
    IRVisitor::visitCast(c);
  }
  void visitBinary(const Binary* b) override {
    if (isFloat(b->dtype)) note(b->dtype);
    IRVisitor::visitBinary(b);
  }
  void visitCall(const Call* c) override {
    if (isFloat(c->dtype)) note(c->dtype);
    IRVisitor::visitCall(c);
  }
};

}  // namespace

int forcedVectorWidth(const ForStmt& loop, int vectorBits) {
  if (loop.forKind != ForKind::Vectorized) return 0;
  ValueTypes types;
  types.visit(loop.body);
  if (!types.innermost || !types.narrowFloatLoad || types.widest <= 2) return 0;
  int width = vectorBits / (8 * types.widest);
  int64_t extent = 0;
  if (constInt(loop.extent, &extent))
    while (width > 1 && width > extent) width /= 2;
  return width >= 2 ? width : 0;
}

}  // namespace tlc::cpu
