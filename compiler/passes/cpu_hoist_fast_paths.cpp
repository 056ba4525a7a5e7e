#include "compiler/passes/cpu_hoist_fast_paths.h"

#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/buffer_access.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/cpu_access_sets.h"

namespace tlc::cpu {

using namespace ir;

namespace {

// The block-local (non-global) buffers a statement reads or writes.
class LocalBuffers : public BufferAccessVisitor {
 public:
  std::unordered_set<const BufferNode*> buffers;

 protected:
  void read(const Buffer& b) override { note(b); }
  void write(const Buffer& b) override { note(b); }
  void note(const Buffer& b) {
    if (b->scope != MemScope::Global) buffers.insert(b.get());
  }
};

std::unordered_set<const BufferNode*> localBuffers(const Stmt& s) {
  LocalBuffers v;
  v.visit(s);
  return v.buffers;
}

// Whether a statement holds a likely test anywhere.
bool containsTest(const Stmt& s) {
  struct V : IRVisitor {
    bool found = false;
    void visitIf(const IfStmt* i) override {
      found = found || i->likely;
      IRVisitor::visitIf(i);
    }
  } v;
  v.visit(s);
  return v.found;
}

const IfStmt* hoistableTest(const Stmt& s) {
  auto* i = as<IfStmt>(s);
  if (!i || !i->likely || !i->elseBody) return nullptr;
  std::unordered_set<const VarNode*> none;
  UsesVars uses(none);
  uses.visit(i->cond);
  return uses.loads ? nullptr : i;
}

class FastPathHoisting : public IRMutator {
 protected:
  Stmt mutateSeq(const SeqStmt* node, const Stmt& self) override {
    Stmt inner = IRMutator::mutateSeq(node, self);
    auto* seq = as<SeqStmt>(inner);
    if (!seq) return inner;
    // Allocations stay in front, then the statements that need not wait for
    // any test before them (no test inside, no conflict with an earlier
    // statement that stays behind); the rest is versioned.
    std::vector<Stmt> front, body;
    std::vector<const IfStmt*> tests;
    std::vector<AccessSets> behind;
    std::unordered_map<const BufferNode*, int> users;
    bool anyTest = false;
    for (const Stmt& s : seq->stmts) {
      if (as<AllocStmt>(s)) {
        front.push_back(s);
        continue;
      }
      const IfStmt* test = hoistableTest(s);
      AccessSets acc = accessSetsOf(s);
      bool floats = !test && !containsTest(s);
      for (const AccessSets& b : behind) floats = floats && !acc.conflictsWith(b);
      if (floats && anyTest) {
        front.push_back(s);
        continue;
      }
      if (!anyTest && !test) {
        front.push_back(s);  // before the first test: stays in front
        continue;
      }
      anyTest = true;
      body.push_back(s);
      tests.push_back(test);
      behind.push_back(std::move(acc));
      for (const BufferNode* b : localBuffers(test ? test->thenBody : s)) ++users[b];
    }
    // Worth it when a fast branch shares a block-local buffer with another statement.
    bool shared = false;
    for (size_t i = 0; i < body.size() && !shared; ++i)
      if (tests[i])
        for (const BufferNode* b : localBuffers(tests[i]->thenBody)) shared = shared || users[b] > 1;
    if (!shared) return inner;
    Expr cond;
    std::vector<Stmt> fast;
    for (size_t i = 0; i < body.size(); ++i) {
      if (tests[i]) cond = cond ? logicalAnd(cond, tests[i]->cond) : tests[i]->cond;
      fast.push_back(tests[i] ? tests[i]->thenBody : body[i]);
    }
    front.push_back(std::make_shared<const IfStmt>(cond, makeSeq(fast, node->loc), makeSeq(body, node->loc),
                                                   node->loc, /*likely=*/true));
    return makeSeq(front, node->loc);
  }
};

}  // namespace

Module hoistFastPaths(const Module& m) { return mutateBodies<FastPathHoisting>(m); }

}  // namespace tlc::cpu
