#include "compiler/passes/cpu_block_local_storage.h"

#include <unordered_map>

#include "compiler/ir/functor.h"
#include "compiler/support/diagnostics.h"
#include "compiler/ir/module_rewrite.h"

namespace tlc::cpu {

using namespace ir;

namespace {

class BlockLocalStorage : public IRMutator {
 public:
  Stmt run(const Stmt& body) { return hoistInto(body); }

 protected:
  Stmt mutateAlloc(const AllocStmt* node, const Stmt&) override {
    const Buffer& b = node->buffer;
    for (const Expr& e : b->shape)
      TLC_CHECK(as<IntImm>(e) != nullptr, "block-local buffer `" + b->name + "` needs a constant shape");
    Buffer local = b->scope == MemScope::Local ? b : makeBuffer(b->name, b->dtype, b->shape, MemScope::Local, b->loc);
    renamed_[b.get()] = local;
    hoisted_.push_back(std::make_shared<const AllocStmt>(local, node->loc));
    return makeSeq({}, node->loc);
  }

  Stmt mutateKernel(const KernelStmt* node, const Stmt&) override {
    Stmt body = hoistInto(node->body);
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

  std::unordered_map<const BufferNode*, Buffer> renamed_;
  std::vector<Stmt> hoisted_;
};

}  // namespace

Module makeBlockLocalStorage(const Module& m) {
  return rewriteBodies(m, [](const PrimFunc& f) { return BlockLocalStorage().run(f.body); });
}

}  // namespace tlc::cpu
