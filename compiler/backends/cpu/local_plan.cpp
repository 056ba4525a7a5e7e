#include "compiler/backends/cpu/local_plan.h"

#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/support/diagnostics.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// Block-local buffers up to this many bytes in all live in the frame of the
// function that runs the blocks; the rest share one heap allocation made once
// per call of that function (a chunk of blocks on one thread).
constexpr int64_t kStackLocalBytes = int64_t(512) << 10;

// The Allocs at the top of a kernel's (or function's) body, where
// cpu-block-local-storage puts them all.
void leadingAllocs(const Stmt& s, std::vector<const AllocStmt*>& out) {
  if (!s) return;
  if (s->kind == StmtKind::Alloc) out.push_back(as<AllocStmt>(s));
  if (s->kind == StmtKind::Seq)
    for (const Stmt& c : as<SeqStmt>(s)->stmts) leadingAllocs(c, out);
}

}  // namespace

LocalPlan planLocals(const Stmt& body, const llvm::DataLayout& layout, llvm::LLVMContext& ctx) {
  std::vector<const AllocStmt*> allocs;
  leadingAllocs(body, allocs);
  LocalPlan plan;
  int64_t stack = 0;
  for (const AllocStmt* a : allocs) {
    int64_t n = 1;
    for (const Expr& e : a->buffer->shape) {
      int64_t v = 0;
      TLC_CHECK(constInt(e, &v), "local buffer `" + a->buffer->name + "` needs a constant shape");
      n *= v;
    }
    int64_t bytes = (std::max<int64_t>(n, 1) * int64_t(layout.getTypeAllocSize(storageType(ctx, a->buffer->dtype))) + 63) / 64 * 64;
    if (stack + bytes <= kStackLocalBytes) {
      stack += bytes;
      continue;
    }
    plan.heap.push_back({a, plan.heapBytes});
    plan.heapBytes += bytes;
  }
  return plan;
}

// Whether some part of `s` (the function itself or one of its kernels) keeps
// block-local buffers on the heap.
bool usesHeapLocals(const Stmt& s, const llvm::DataLayout& layout, llvm::LLVMContext& ctx) {
  if (!s) return false;
  switch (s->kind) {
    case StmtKind::Seq:
      for (const Stmt& c : as<SeqStmt>(s)->stmts)
        if (usesHeapLocals(c, layout, ctx)) return true;
      return false;
    case StmtKind::Kernel: return planLocals(as<KernelStmt>(s)->body, layout, ctx).heapBytes > 0;
    case StmtKind::For: return usesHeapLocals(as<ForStmt>(s)->body, layout, ctx);
    case StmtKind::Let: return usesHeapLocals(as<LetStmt>(s)->body, layout, ctx);
    case StmtKind::If:
      return usesHeapLocals(as<IfStmt>(s)->thenBody, layout, ctx) || usesHeapLocals(as<IfStmt>(s)->elseBody, layout, ctx);
    default: return false;
  }
}

}  // namespace tlc::cpu
