// substitute(): replacing variables by expressions, respecting bindings.
#include "compiler/ir/substitute.h"

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;

TEST_CASE("uses are replaced and unchanged subtrees are shared") {
  Var i = makeVar("i"), j = makeVar("j");
  Expr e = makeBinary(BinaryOp::Add, makeBinary(BinaryOp::Mul, makeVarRef(i), makeInt(4)), makeVarRef(j));
  Expr r = substitute(e, i, makeInt(3));
  CHECK(printExpr(r) == "3 * 4 + j");
  CHECK(as<Binary>(r)->b == as<Binary>(e)->b);  // `j` untouched, same node
  CHECK(substitute(e, makeVar("k"), makeInt(1)) == e);
  VarMap both{{i.get(), makeVarRef(j)}, {j.get(), makeVarRef(i)}};
  CHECK(printExpr(substitute(e, both)) == "j * 4 + i");  // simultaneous, not sequential
}

TEST_CASE("a binding of the substituted variable shadows the mapping in its body") {
  Var i = makeVar("i");
  Buffer b = makeBuffer("B", DType::Int32, {makeInt(8)}, MemScope::Global);
  auto store = [&](Expr idx) {
    return std::make_shared<const StoreStmt>(b, std::vector<Expr>{idx}, makeVarRef(i), SourceLoc{});
  };
  Stmt inner = std::make_shared<ForStmt>(i, makeVarRef(i), makeInt(2), ForKind::Serial, store(makeVarRef(i)),
                                         SourceLoc{});
  Stmt s = makeSeq({store(makeInt(0)), inner});
  Stmt r = substitute(s, i, makeInt(5));
  // The loop's start is outside its binding and changes; its body does not.
  CHECK(printStmt(r) == "B[0] = 5\nfor i in serial(5 : +2) {\n  B[i] = i\n}\n");
  Stmt let = std::make_shared<const LetStmt>(i, makeInt(1), store(makeVarRef(i)), SourceLoc{});
  CHECK(substitute(let, i, makeInt(9)) == let);
}

TEST_CASE("an allocation whose shape changes is re-created and its uses follow") {
  Var n = makeVar("n");
  Buffer s = makeBuffer("S", DType::Float32, {makeVarRef(n)}, MemScope::Shared);
  Stmt body = makeSeq({std::make_shared<const AllocStmt>(s, SourceLoc{}),
                       std::make_shared<const FillStmt>(fullRegion(s), makeFloat(0.0), SourceLoc{}),
                       std::make_shared<const StoreStmt>(s, std::vector<Expr>{makeInt(0)},
                                                         makeLoad(s, {makeInt(1)}), SourceLoc{})});
  Stmt r = substitute(body, n, makeInt(16));
  auto* seq = as<SeqStmt>(r);
  REQUIRE(seq);
  Buffer fresh = as<AllocStmt>(seq->stmts[0])->buffer;
  CHECK(fresh != s);
  CHECK(printExpr(fresh->shape[0]) == "16");
  CHECK(as<FillStmt>(seq->stmts[1])->dst.buffer == fresh);
  auto* st = as<StoreStmt>(seq->stmts[2]);
  CHECK(st->buffer == fresh);
  CHECK(as<Load>(st->value)->buffer == fresh);
}
