// Linear forms of index expressions, and the multiples they are known to be.
#include "compiler/ir/linear_form.h"

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;

TEST_CASE("a linear form distributes constant factors over sums") {
  Var k = makeVar("k"), j = makeVar("j");
  Expr kr = makeVarRef(k), jr = makeVarRef(j);
  // ((k * 64 + j) - 1) * 128 + 5
  Expr e = add(mul(sub(add(mul(kr, makeInt(64)), jr), makeInt(1)), makeInt(128)), makeInt(5));
  LinearForm f = linearForm(e);
  CHECK(f.constant == -123);
  REQUIRE(f.terms.size() == 2);
  CHECK(coefficientOf(e, k.get()) == 64 * 128);
  CHECK(coefficientOf(e, j.get()) == 128);
  // A variable inside a term has no coefficient.
  CHECK(!coefficientOf(floorDiv(kr, makeInt(2)), k.get()));
  CHECK(constantDifference(add(kr, makeInt(7)), sub(kr, makeInt(1))) == 8);
}

TEST_CASE("known multiples: products, sums, floormod by a constant, casts that keep the value") {
  Var k = makeVar("k"), j = makeVar("j");
  Expr kr = makeVarRef(k), jr = makeVarRef(j);
  CHECK(knownMultiple(makeInt(0)) == int64_t(1) << 40);
  CHECK(knownMultiple(makeInt(-24)) == 24);
  CHECK(knownMultiple(kr) == 1);
  CHECK(knownMultiple(mul(kr, makeInt(6))) == 6);
  CHECK(knownMultiple(add(mul(kr, makeInt(64)), mul(jr, makeInt(8)))) == 8);
  CHECK(knownMultiple(sub(mul(kr, makeInt(12)), mul(jr, makeInt(18)))) == 6);
  // The channel of an im2col run: (k * 64 + j * 8) % 24 keeps the factor 8.
  Expr channel = floorMod(add(mul(kr, makeInt(64)), mul(jr, makeInt(8))), makeInt(24));
  CHECK(knownMultiple(channel) == 8);
  CHECK(knownMultiple(floorMod(mul(kr, makeInt(8)), makeInt(12))) == 4);
  CHECK(knownMultiple(floorDiv(mul(kr, makeInt(8)), makeInt(2))) == 1);  // not modelled
  // Sign and zero extensions keep the value; a conversion of a signed value
  // to an unsigned type does not (-3 becomes 2^64 - 3, no multiple of 3).
  CHECK(knownMultiple(makeCast(DType::Int64, mul(kr, makeInt(8)))) == 8);
  Var u = makeVar("u", DType::UInt32);
  CHECK(knownMultiple(makeCast(DType::Int64, mul(makeVarRef(u), makeInt(3, DType::UInt32)))) == 3);
  CHECK(knownMultiple(makeCast(DType::UInt64, mul(kr, makeInt(3)))) == 1);
  CHECK(knownMultiple(makeCast(DType::Int16, mul(kr, makeInt(8)))) == 1);
}
