// The verifier on modules built directly with the node constructors (as a
// buggy pass would), each breaking one invariant.
#include "compiler/ir/verifier.h"

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;
using namespace tlc::ir::testing;

namespace {

Expr vref(const Var& v) { return makeVarRef(v); }
Stmt store(Buffer b, std::vector<Expr> idx, Expr v) {
  return std::make_shared<const StoreStmt>(std::move(b), std::move(idx), std::move(v), SourceLoc{});
}
Stmt kernel(Var bx, Stmt body, int64_t threads = 32) {
  return std::make_shared<const KernelStmt>(std::vector<Expr>{makeInt(1)}, std::vector<Var>{bx}, threads, std::move(body),
                                            SourceLoc{});
}

struct Fixture {
  Buffer A = makeBuffer("A", DType::Float32, {makeInt(4), makeInt(8)}, MemScope::Global);
  Var n = makeVar("n");
  Var bx = makeVar("bx");

  Module module(Stmt body) {
    auto f = std::make_shared<PrimFunc>();
    f->name = "f";
    f->params = {{"A", A, nullptr, {}}, {"n", nullptr, n, {}}};
    f->body = std::move(body);
    return moduleOf(f);
  }
};

// Verifies and returns the printed kinds of the errors.
std::vector<std::string> verifyKinds(const Module& m) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  bool ok = verifyModule(m, diags);
  std::vector<std::string> kinds;
  for (const Diagnostic& d : diags.diagnostics()) kinds.push_back(diagKindInfo(d.kind).printed);
  CHECK(ok == kinds.empty());
  return kinds;
}

using Kinds = std::vector<std::string>;

}  // namespace

TEST_CASE("a well-formed module verifies") {
  Fixture fx;
  Var i = makeVar("i");
  Buffer S = makeBuffer("S", DType::Float32, {makeInt(4), makeInt(8)}, MemScope::Shared);
  Stmt body = kernel(fx.bx, makeSeq({std::make_shared<const AllocStmt>(S, SourceLoc{}),
                                     std::make_shared<const CopyStmt>(fullRegion(fx.A), fullRegion(S), SourceLoc{}),
                                     std::make_shared<ForStmt>(i, makeInt(0), makeInt(4), ForKind::Parallel,
                                                               store(S, {vref(i), vref(fx.n)}, makeFloat(1.0)),
                                                               SourceLoc{})}));
  CHECK(verifyKinds(fx.module(body)).empty());
}

TEST_CASE("uses outside their scope are unbound") {
  Fixture fx;
  Var i = makeVar("i"), stray = makeVar("stray");
  Buffer S = makeBuffer("S", DType::Float32, {makeInt(4)}, MemScope::Shared);
  Buffer T = makeBuffer("T", DType::Float32, {makeInt(4)}, MemScope::Shared);
  // A loop variable used after its loop, a variable never bound, a buffer
  // used after the Seq holding its allocation ended, one never allocated.
  Stmt loopThenUse = makeSeq({std::make_shared<ForStmt>(i, makeInt(0), makeInt(4), ForKind::Serial, makeSeq({}),
                                                        SourceLoc{}),
                              store(fx.A, {vref(i), makeInt(0)}, makeFloat(0.0))});
  CHECK(verifyKinds(fx.module(loopThenUse)) == Kinds{"ir-unbound-name"});
  CHECK(verifyKinds(fx.module(store(fx.A, {vref(stray), makeInt(0)}, makeFloat(0.0)))) == Kinds{"ir-unbound-name"});
  Stmt inner = std::make_shared<const SeqStmt>(
      std::vector<Stmt>{std::make_shared<const AllocStmt>(S, SourceLoc{}), store(S, {makeInt(0)}, makeFloat(0.0))},
      SourceLoc{});
  Stmt afterScope = kernel(fx.bx, std::make_shared<const SeqStmt>(
                                      std::vector<Stmt>{inner, store(S, {makeInt(1)}, makeFloat(0.0))}, SourceLoc{}));
  CHECK(verifyKinds(fx.module(afterScope)) == Kinds{"ir-unbound-name"});
  CHECK(verifyKinds(fx.module(kernel(fx.bx, store(T, {makeInt(0)}, makeFloat(0.0))))) == Kinds{"ir-unbound-name"});
}

TEST_CASE("index and range counts must match the rank") {
  Fixture fx;
  CHECK(verifyKinds(fx.module(store(fx.A, {makeInt(0)}, makeFloat(0.0)))) == Kinds{"ir-rank-mismatch"});
  Region bad{fx.A, {{makeInt(0), makeInt(4)}}, SourceLoc{}};
  CHECK(verifyKinds(fx.module(kernel(fx.bx, std::make_shared<const FillStmt>(bad, makeFloat(0.0), SourceLoc{})))) ==
        Kinds{"ir-rank-mismatch"});
  Stmt atomic = std::make_shared<const AtomicStmt>(AtomicKind::Add, fx.A, std::vector<Expr>{makeInt(0)}, makeFloat(1.0),
                                                   SourceLoc{});
  CHECK(verifyKinds(fx.module(atomic)) == Kinds{"ir-rank-mismatch"});
}

TEST_CASE("dtype invariants") {
  Fixture fx;
  Expr i0 = makeInt(0);
  // A store of an int into a float buffer.
  CHECK(verifyKinds(fx.module(store(fx.A, {i0, i0}, makeInt(1)))) == Kinds{"ir-dtype-mismatch"});
  // A binary node whose operands disagree (the factory would refuse it).
  Expr mixed = std::make_shared<const Binary>(BinaryOp::Add, makeFloat(1.0), makeInt(1), DType::Float32, SourceLoc{});
  CHECK(verifyKinds(fx.module(store(fx.A, {i0, i0}, mixed))) == Kinds{"ir-dtype-mismatch"});
  // A comparison that claims to yield an int.
  Expr cmp = std::make_shared<const Binary>(BinaryOp::Lt, i0, i0, DType::Int32, SourceLoc{});
  CHECK(verifyKinds(fx.module(store(fx.A, {cmp, i0}, makeFloat(0.0)))) == Kinds{"ir-dtype-mismatch"});
  // A let whose variable's dtype differs from its value's.
  Var t = makeVar("t", DType::Float16);
  Stmt let = std::make_shared<const LetStmt>(t, makeFloat(1.0), makeSeq({}), SourceLoc{});
  CHECK(verifyKinds(fx.module(let)) == Kinds{"ir-dtype-mismatch"});
  // Loop bounds of another dtype than the loop variable.
  Stmt loop = std::make_shared<ForStmt>(makeVar("i", DType::Int64), makeInt(0), makeInt(4), ForKind::Serial,
                                        makeSeq({}), SourceLoc{});
  CHECK(verifyKinds(fx.module(loop)) == Kinds{"ir-dtype-mismatch", "ir-dtype-mismatch"});
  // A fill value of another dtype.
  CHECK(verifyKinds(fx.module(kernel(fx.bx, std::make_shared<const FillStmt>(fullRegion(fx.A), makeFloat(0.0, DType::Float16),
                                                                              SourceLoc{})))) ==
        Kinds{"ir-dtype-mismatch"});
}

TEST_CASE("operand kinds") {
  Fixture fx;
  Expr i0 = makeInt(0);
  CHECK(verifyKinds(fx.module(store(fx.A, {makeFloat(0.0), i0}, makeFloat(0.0)))) == Kinds{"ir-operand-type"});
  Stmt intIf = std::make_shared<const IfStmt>(makeInt(1), makeSeq({}), nullptr, SourceLoc{});
  CHECK(verifyKinds(fx.module(intIf)) == Kinds{"ir-operand-type"});
  Expr intDiv = makeBinary(BinaryOp::Div, vref(fx.n), makeInt(2));
  CHECK(verifyKinds(fx.module(store(fx.A, {intDiv, i0}, makeFloat(0.0)))) == Kinds{"ir-operand-type"});
  Expr shiftFloat = makeBinary(BinaryOp::Shl, makeFloat(1.0), makeFloat(1.0));
  CHECK(verifyKinds(fx.module(store(fx.A, {i0, i0}, shiftFloat))) == Kinds{"ir-operand-type"});
  Expr notInt = std::make_shared<const Unary>(UnaryOp::Not, vref(fx.n), DType::Bool, SourceLoc{});
  CHECK(verifyKinds(fx.module(std::make_shared<const IfStmt>(notInt, makeSeq({}), nullptr, SourceLoc{}))) ==
        Kinds{"ir-operand-type"});
  CHECK(verifyKinds(fx.module(store(fx.A, {makeInt(200, DType::Int8), i0}, makeFloat(0.0)))) ==
        Kinds{"ir-invalid-literal"});
}

TEST_CASE("kernels, allocations and scopes") {
  Fixture fx;
  Buffer S = makeBuffer("S", DType::Float32, {makeInt(4)}, MemScope::Shared);
  Buffer G = makeBuffer("G", DType::Float32, {makeInt(4)}, MemScope::Global);
  CHECK(verifyKinds(fx.module(std::make_shared<const AllocStmt>(S, SourceLoc{}))) == Kinds{"ir-alloc-outside-kernel"});
  CHECK(verifyKinds(fx.module(kernel(fx.bx, std::make_shared<const AllocStmt>(G, SourceLoc{})))) ==
        Kinds{"ir-invalid-scope"});
  CHECK(verifyKinds(fx.module(kernel(fx.bx, makeSeq({}), 0))) == Kinds{"ir-invalid-kernel"});
  CHECK(verifyKinds(fx.module(kernel(fx.bx, kernel(makeVar("by"), makeSeq({}))))) == Kinds{"ir-invalid-kernel"});
  Stmt noVars = std::make_shared<const KernelStmt>(std::vector<Expr>{makeInt(1), makeInt(2)}, std::vector<Var>{fx.bx}, 32,
                                                   makeSeq({}), SourceLoc{});
  CHECK(verifyKinds(fx.module(noVars)) == Kinds{"ir-invalid-kernel"});
  auto f = std::make_shared<PrimFunc>();
  f->name = "g";
  f->params = {{"S", S, nullptr, {}}};
  f->body = makeSeq({});
  CHECK(verifyKinds(moduleOf(f)) == Kinds{"ir-invalid-scope"});
}

TEST_CASE("tile-operation shapes and attributes") {
  Fixture fx;
  Buffer S = makeBuffer("S", DType::Float32, {makeInt(8), makeInt(4)}, MemScope::Shared);
  Buffer R = makeBuffer("R", DType::Float32, {makeInt(4)}, MemScope::Fragment);
  auto inKernel = [&](Stmt s) {
    return fx.module(kernel(fx.bx, makeSeq({std::make_shared<const AllocStmt>(S, SourceLoc{}),
                                            std::make_shared<const AllocStmt>(R, SourceLoc{}), std::move(s)})));
  };
  // Copies move equal element counts (4x8 into 8x4 is fine; 4x8 into 4 is not).
  CHECK(verifyKinds(inKernel(std::make_shared<const CopyStmt>(fullRegion(fx.A), fullRegion(S), SourceLoc{}))).empty());
  CHECK(verifyKinds(inKernel(std::make_shared<const CopyStmt>(fullRegion(fx.A), fullRegion(R), SourceLoc{}))) ==
        Kinds{"ir-shape-mismatch"});
  // gemm: A (4x8) @ S (8x4) into a 4x4 region is fine; transposing B breaks it.
  Region c{S, {{makeInt(0), makeInt(4)}, {makeInt(0), makeInt(4)}}, SourceLoc{}};
  CHECK(verifyKinds(inKernel(std::make_shared<const GemmStmt>(fullRegion(fx.A), fullRegion(S), c, false, false, false,
                                                              SourceLoc{})))
            .empty());
  CHECK(verifyKinds(inKernel(std::make_shared<const GemmStmt>(fullRegion(fx.A), fullRegion(S), c, false, true, false,
                                                              SourceLoc{}))) == Kinds{"ir-shape-mismatch"});
  CHECK(verifyKinds(inKernel(std::make_shared<const GemmStmt>(fullRegion(R), fullRegion(S), c, false, false, false,
                                                              SourceLoc{}))) == Kinds{"ir-rank-mismatch"});
  // Reduce S (8x4) over dim 0 gives 4 values: R fits; over dim 1 gives 8: it does not.
  CHECK(verifyKinds(inKernel(std::make_shared<const ReduceStmt>(ReduceKind::Sum, fullRegion(S), fullRegion(R), 0, true,
                                                                SourceLoc{})))
            .empty());
  CHECK(verifyKinds(inKernel(std::make_shared<const ReduceStmt>(ReduceKind::Sum, fullRegion(S), fullRegion(R), 1, true,
                                                                SourceLoc{}))) == Kinds{"ir-shape-mismatch"});
  CHECK(verifyKinds(inKernel(std::make_shared<const ReduceStmt>(ReduceKind::Sum, fullRegion(S), fullRegion(R), -1, true,
                                                                SourceLoc{}))) == Kinds{"ir-invalid-attribute"});
  auto pipe = std::make_shared<ForStmt>(makeVar("k"), makeInt(0), makeInt(4), ForKind::Pipelined, makeSeq({}), SourceLoc{});
  pipe->numStages = 2;
  pipe->order = {0, 1};
  pipe->stage = {0, 2};
  CHECK(verifyKinds(fx.module(pipe)) == Kinds{"ir-invalid-attribute"});
}

TEST_CASE("a null node is an internal error, not a diagnostic") {
  Fixture fx;
  Stmt nullValue = std::make_shared<const StoreStmt>(fx.A, std::vector<Expr>{makeInt(0), makeInt(0)}, nullptr, SourceLoc{});
  SourceManager sm;
  DiagnosticEngine diags(sm);
  CHECK_THROWS_AS(verifyModule(fx.module(nullValue), diags), InternalError);
}
