#include "compiler/passes/cpu_block_local_storage.h"

#include <unordered_map>

#include "compiler/ir/functor.h"
#include "compiler/support/diagnostics.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// The largest block-local storage of one kernel: each thread that runs its
// blocks holds this much.
constexpr int64_t kMaxBlockLocalBytes = int64_t(1) << 30;
constexpr int64_t kSaturated = int64_t(1) << 62;  // byte counts stop growing here

std::string formatBytes(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30) && bytes % (int64_t(1) << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (int64_t(1) << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

class BlockLocalStorage : public IRMutator {
 public:
  explicit BlockLocalStorage(DiagnosticEngine& diags) : diags_(diags) {}
  Stmt run(const Stmt& body, SourceLoc funcLoc) {
    Stmt out = hoistInto(body);
    checkSize(funcLoc);
    return out;
  }

 protected:
  Stmt mutateAlloc(const AllocStmt* node, const Stmt&) override {
    const Buffer& b = node->buffer;
    for (const Expr& e : b->shape)
      TLC_CHECK(as<IntImm>(e) != nullptr, "block-local buffer `" + b->name + "` needs a constant shape");
    addBytes(node);
    Buffer local = b->scope == MemScope::Local ? b : makeBuffer(b->name, b->dtype, b->shape, MemScope::Local, b->loc);
    renamed_[b.get()] = local;
    hoisted_.push_back(std::make_shared<const AllocStmt>(local, node->loc));
    return makeSeq({}, node->loc);
  }

  Stmt mutateKernel(const KernelStmt* node, const Stmt&) override {
    int64_t outerBytes = bytes_;
    const AllocStmt* outerLargest = largest_;
    bytes_ = 0;
    largest_ = nullptr;
    Stmt body = hoistInto(node->body);
    checkSize(node->loc);
    bytes_ = outerBytes;
    largest_ = outerLargest;
    return std::make_shared<const KernelStmt>(node->grid, node->blockVars, node->threads, body, node->loc,
                                              node->swizzle);
  }

  Expr mutateLoad(const Load* node, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(node->indices, idx);
    Buffer b = remap(node->buffer);
    if (!changed && b == node->buffer) return self;
    return makeLoad(b, changed ? idx : node->indices, node->loc);
  }

  Stmt mutateStore(const StoreStmt* node, const Stmt& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(node->indices, idx);
    Expr v = mutate(node->value);
    Buffer b = remap(node->buffer);
    if (!changed && v == node->value && b == node->buffer) return self;
    return std::make_shared<const StoreStmt>(b, changed ? idx : node->indices, v, node->loc);
  }

 private:
  // Rewrites `body`, collecting its allocations at its top.
  Stmt hoistInto(const Stmt& body) {
    std::vector<Stmt> saved = std::move(hoisted_);
    hoisted_.clear();
    Stmt rewritten = mutate(body);
    std::vector<Stmt> stmts = std::move(hoisted_);
    hoisted_ = std::move(saved);
    if (stmts.empty()) return rewritten;
    stmts.push_back(rewritten);
    return makeSeq(std::move(stmts), body ? body->loc : SourceLoc{});
  }

  Buffer remap(const Buffer& b) {
    auto it = renamed_.find(b.get());
    return it == renamed_.end() ? b : it->second;
  }

  // Adds the bytes of `a` (saturating, so no shape overflows the count).
  void addBytes(const AllocStmt* a) {
    int64_t bytes = dtypeBytes(a->buffer->dtype);
    for (const Expr& e : a->buffer->shape) {
      int64_t v = as<IntImm>(e)->value;
      bytes = v <= 0 ? 0 : (bytes > kSaturated / v ? kSaturated : bytes * v);
    }
    if (!largest_ || bytes > largestBytes_) {
      largest_ = a;
      largestBytes_ = bytes;
    }
    bytes_ = std::min(bytes_ + bytes, kSaturated);
  }

  void checkSize(SourceLoc loc) {
    if (bytes_ <= kMaxBlockLocalBytes) return;
    Diagnostic& d = diags_.report(DiagKind::CpuBlockLocalTooLarge, loc,
                                  "the shared and fragment buffers of this kernel need more than " +
                                      formatBytes(kMaxBlockLocalBytes) +
                                      " per block, the CPU target's limit; use smaller tiles");
    if (largest_ && largest_->buffer->loc.known())
      d.note(largest_->buffer->loc, "`" + largest_->buffer->name + "` alone needs " +
                                        (largestBytes_ == kSaturated ? "more than " + formatBytes(kSaturated)
                                                                     : formatBytes(largestBytes_)));
  }

  DiagnosticEngine& diags_;
  int64_t bytes_ = 0;
  const AllocStmt* largest_ = nullptr;
  int64_t largestBytes_ = 0;
  std::unordered_map<const BufferNode*, Buffer> renamed_;
  std::vector<Stmt> hoisted_;
};

}  // namespace

Module makeBlockLocalStorage(const Module& m, passes::PassContext& ctx) {
  return rewriteBodies(m, [&](const PrimFunc& f) { return BlockLocalStorage(ctx.diags).run(f.body, f.loc); });
}

}  // namespace tlc::cpu
