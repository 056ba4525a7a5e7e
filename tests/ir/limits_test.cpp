// The depth limits of compiler/ir/limits.h on IR built directly (as a pass
// or a front end would): the verifier reports IR past them without
// recursing into it, the lowered-IR mode accepts target intrinsics and
// skips the constant-bounds check, and exprHeight measures without
// recursion.
#include "compiler/ir/limits.h"

#include "compiler/ir/verifier.h"
#include "compiler/support/large_stack.h"
#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;

namespace {

Buffer tensor() { return makeBuffer("A", DType::Float32, {makeInt(4)}, MemScope::Global); }

Module moduleWith(const Buffer& A, Stmt body) {
  auto f = std::make_shared<PrimFunc>();
  f->name = "f";
  f->params = {{"A", A, nullptr, {}}};
  f->body = std::move(body);
  return testing::moduleOf(f);
}

Stmt store(const Buffer& A, Expr index, Expr value) {
  return std::make_shared<const StoreStmt>(A, std::vector<Expr>{std::move(index)}, std::move(value), SourceLoc{});
}

// A left-deep chain A[0] + A[0] + ... of `levels` levels.
Expr chain(const Buffer& A, int levels) {
  Expr e = makeLoad(A, {makeInt(0)});
  for (int i = 1; i < levels; ++i) e = makeBinary(BinaryOp::Add, e, makeLoad(A, {makeInt(0)}));
  return e;
}

std::vector<std::string> kinds(const Module& m, const VerifyOptions& options = {}) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  verifyModule(m, diags, options);
  std::vector<std::string> out;
  for (const Diagnostic& d : diags.diagnostics()) out.push_back(diagKindInfo(d.kind).printed);
  return out;
}

}  // namespace

TEST_CASE("exprHeight measures a deep chain without recursing") {
  Buffer A = tensor();
  CHECK(exprHeight(makeLoad(A, {makeInt(0)})) == 2);
  CHECK(exprHeight(chain(A, 3)) == 4);
  // Deeper than any recursive walk on this thread's stack could go.
  Expr deep = chain(A, 200000);
  CHECK(exprHeight(deep) == 200001);
  // Freeing it recurses once per level, which needs the compiler's stack.
  runWithStack(kCompilerStackBytes, [&] {
    deep = nullptr;
    return 0;
  });
}

TEST_CASE("the verifier reports an expression deeper than kMaxExprDepth once, without descending") {
  Buffer A = tensor();
  CHECK(kinds(moduleWith(A, store(A, makeInt(0), chain(A, kMaxExprDepth - 1)))).empty());
  std::vector<std::string> got = kinds(moduleWith(A, store(A, makeInt(0), chain(A, kMaxExprDepth * 4))));
  CHECK(got == std::vector<std::string>{"ir-nesting-too-deep"});
}

TEST_CASE("the verifier reports statements nested deeper than kMaxStmtDepth") {
  Buffer A = tensor();
  // Straight-line code nests: let x0 = ... { A[0] = x0; let x1 = x0 { A[0] = x1; ... } },
  // two levels (the let and the Seq of its body) per binding.
  auto nestedLets = [&](int n) {
    std::vector<Var> vars;
    for (int i = 0; i < n; ++i) vars.push_back(makeVar("x" + std::to_string(i), DType::Float32));
    Stmt body = store(A, makeInt(0), makeVarRef(vars.back()));
    for (int i = n - 1; i >= 0; --i) {
      Expr value = i == 0 ? makeLoad(A, {makeInt(1)}) : makeVarRef(vars[i - 1]);
      body = std::make_shared<const LetStmt>(vars[i], value, makeSeq({store(A, makeInt(1), value), body}), SourceLoc{});
    }
    return body;
  };
  std::vector<std::string> shallow, deep;
  runWithStack(kCompilerStackBytes, [&] {
    shallow = kinds(moduleWith(A, nestedLets(kMaxKernelLets)));
    deep = kinds(moduleWith(A, nestedLets(kMaxStmtDepth / 2 + 10)));
    return 0;
  });
  CHECK(shallow.empty());
  INFO(deep.size() << " errors, the first " << (deep.empty() ? "" : deep[0]));
  CHECK(deep == std::vector<std::string>{"ir-nesting-too-deep"});
}

TEST_CASE("lowered IR may hold target intrinsics and constant indices past the shape; input IR may not") {
  Buffer A = tensor();
  Expr address = makeCall("cpu.address_of", {makeLoad(A, {makeInt(0)})}, DType::UInt64);
  Stmt atomic = std::make_shared<const EvaluateStmt>(makeCall("cpu.atomic_add", {address, makeFloat(1.0)}, DType::Float32),
                                                     SourceLoc{});
  Module m = moduleWith(A, makeSeq({atomic, store(A, makeInt(4), makeFloat(2.0))}));
  CHECK(kinds(m) == std::vector<std::string>{"ir-target-intrinsic", "ir-target-intrinsic", "ir-index-out-of-bounds"});
  CHECK(kinds(m, VerifyOptions{.lowered = true}).empty());
}
