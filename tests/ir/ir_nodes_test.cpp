#include <doctest/doctest.h>

#include "compiler/ir/functor.h"
#include "compiler/ir/ir.h"

using namespace tlc;
using namespace tlc::ir;

TEST_CASE("arithmetic helpers fold integer constants and skip identities") {
  Var x = makeVar("x");
  Expr vx = makeVarRef(x);
  int64_t v = 0;
  CHECK(constInt(add(makeInt(2), makeInt(3)), &v));
  CHECK(v == 5);
  CHECK(add(vx, makeInt(0)) == vx);
  CHECK(mul(makeInt(1), vx) == vx);
  CHECK(constInt(floorDiv(makeInt(-7), makeInt(2)), &v));
  CHECK(v == -4);
  CHECK(constInt(floorMod(makeInt(-7), makeInt(2)), &v));
  CHECK(v == 1);
}

TEST_CASE("helpers promote mixed dtypes with casts") {
  Expr e = add(makeInt(1), makeFloat(2.0));
  CHECK(e->dtype == DType::Float32);
}

TEST_CASE("mutator returns the same node when nothing changes") {
  Var x = makeVar("x");
  Buffer b = makeBuffer("B", DType::Float32, {makeInt(4)}, MemScope::Shared);
  Stmt s = std::make_shared<const StoreStmt>(b, std::vector<Expr>{makeVarRef(x)}, makeFloat(1.0), SourceLoc{});
  IRMutator m;
  CHECK(m.mutate(s) == s);
}

TEST_CASE("makeSeq flattens nested sequences") {
  Buffer b = makeBuffer("B", DType::Float32, {makeInt(4)}, MemScope::Shared);
  Stmt a = std::make_shared<const AllocStmt>(b, SourceLoc{});
  Stmt inner = makeSeq({a, a});
  Stmt outer = makeSeq({inner, a});
  auto* seq = as<SeqStmt>(outer);
  REQUIRE(seq != nullptr);
  CHECK(seq->stmts.size() == 3);
}
