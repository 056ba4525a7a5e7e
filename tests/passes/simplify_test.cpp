// simplify on expressions built directly: folding at each dtype's width,
// shared subtrees, and what it must not do.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "compiler/ir/printer.h"
#include "compiler/passes/simplify.h"

using namespace tlc;
using namespace tlc::ir;
using passes::simplifyExpr;
using passes::simplifyStmt;

namespace {
Expr bin(BinaryOp op, Expr a, Expr b) { return makeBinary(op, std::move(a), std::move(b)); }
int64_t intOf(const Expr& e) {
  int64_t v = 0;
  REQUIRE(constInt(e, &v));
  return v;
}
}  // namespace

TEST_CASE("integer folding wraps at the dtype's width and respects signedness") {
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Add, makeInt(std::numeric_limits<int32_t>::max()), makeInt(1)))) ==
        std::numeric_limits<int32_t>::min());
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Mul, makeInt(std::numeric_limits<int64_t>::max(), DType::Int64),
                               makeInt(2, DType::Int64)))) == -2);
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Sub, makeInt(0, DType::UInt16), makeInt(1, DType::UInt16)))) == 65535);
  // Unsigned comparison and division see 2^64-1, not -1.
  Expr u64max = makeInt(-1, DType::UInt64);
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Lt, makeInt(1, DType::UInt64), u64max))) == 1);
  CHECK(intOf(simplifyExpr(bin(BinaryOp::FloorDiv, u64max, makeInt(2, DType::UInt64)))) ==
        std::numeric_limits<int64_t>::max());
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Shr, makeInt(200, DType::UInt8), makeInt(4, DType::UInt8)))) == 12);
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Shr, makeInt(-128, DType::Int8), makeInt(4, DType::Int8)))) == -8);
  CHECK(intOf(simplifyExpr(bin(BinaryOp::FloorMod, makeInt(7), makeInt(-2)))) == -1);
  // INT64_MIN / -1 overflows: left alone, like division by zero.
  Expr overflow = bin(BinaryOp::FloorDiv, makeInt(std::numeric_limits<int64_t>::min(), DType::Int64),
                      makeInt(-1, DType::Int64));
  CHECK(as<Binary>(simplifyExpr(overflow)) != nullptr);
  CHECK(intOf(simplifyExpr(makeCast(DType::Int8, makeInt(300)))) == 44);
  CHECK(intOf(simplifyExpr(makeCast(DType::UInt8, makeInt(-1)))) == 255);
  CHECK(intOf(simplifyExpr(makeCast(DType::Bool, makeInt(-3)))) == 1);
}

TEST_CASE("float folding happens in the dtype's precision, never for narrow floats") {
  auto f32 = simplifyExpr(bin(BinaryOp::Add, makeFloat(16777216.0), makeFloat(1.0)));
  REQUIRE(as<FloatImm>(f32));
  CHECK(as<FloatImm>(f32)->value == 16777216.0);  // float32 rounding
  auto f64 = simplifyExpr(bin(BinaryOp::Add, makeFloat(16777216.0, DType::Float64), makeFloat(1.0, DType::Float64)));
  CHECK(as<FloatImm>(f64)->value == 16777217.0);
  CHECK(as<Binary>(simplifyExpr(bin(BinaryOp::Add, makeFloat(1.0, DType::Float16), makeFloat(1.0, DType::Float16)))));
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(as<Binary>(simplifyExpr(bin(BinaryOp::Min, makeFloat(nan), makeFloat(1.0)))));
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Eq, makeFloat(nan), makeFloat(nan)))) == 0);
  CHECK(intOf(simplifyExpr(bin(BinaryOp::Ne, makeFloat(nan), makeFloat(nan)))) == 1);
  // Out-of-range float to int conversion is undefined: left alone.
  CHECK(as<Cast>(simplifyExpr(makeCast(DType::Int8, makeFloat(300.0)))));
  CHECK(intOf(simplifyExpr(makeCast(DType::UInt8, makeFloat(255.9)))) == 255);
}

TEST_CASE("identities never drop calls, and float identities are only the exact ones") {
  Var x = makeVar("x", DType::Float32), n = makeVar("n");
  Expr call = makeCall("cuda.clock", {}, DType::Int32);
  CHECK(printExpr(simplifyExpr(bin(BinaryOp::Mul, call, makeInt(0)))) == "@cuda.clock<int32>() * 0");
  CHECK(printExpr(simplifyExpr(bin(BinaryOp::Sub, call, call))) == "@cuda.clock<int32>() - @cuda.clock<int32>()");
  CHECK(printExpr(simplifyExpr(bin(BinaryOp::Add, makeVarRef(x), makeFloat(0.0)))) == "x + 0.0");
  CHECK(printExpr(simplifyExpr(bin(BinaryOp::Sub, makeVarRef(x), makeVarRef(x)))) == "x - x");
  CHECK(printExpr(simplifyExpr(bin(BinaryOp::Eq, makeVarRef(x), makeVarRef(x)))) == "x == x");
  CHECK(printExpr(simplifyExpr(makeUnary(UnaryOp::Not, bin(BinaryOp::Lt, makeVarRef(x), makeFloat(1.0))))) ==
        "not x < 1.0");
  CHECK(printExpr(simplifyExpr(makeUnary(UnaryOp::Not, bin(BinaryOp::Lt, makeVarRef(n), makeInt(1))))) == "n >= 1");
  CHECK(printExpr(simplifyExpr(makeSelect(bin(BinaryOp::Lt, makeVarRef(n), makeInt(1)), makeVarRef(x),
                                          makeVarRef(x)))) == "x");
}

// Target intrinsics (a dot in the callee) may have effects. The verifier
// admits them only in lowered IR, so these cases are built here rather than
// read from .tir files.
TEST_CASE("evaluations and lets of target intrinsics are kept, their pure neighbours dropped") {
  Var n = makeVar("n"), kept = makeVar("kept"), unused = makeVar("unused");
  Buffer A = makeBuffer("A", DType::Int32, {makeInt(4)}, MemScope::Global);
  Expr sync = makeCall("cuda.sync", {}, DType::Int32);
  Stmt body = makeSeq({
      std::make_shared<const EvaluateStmt>(bin(BinaryOp::Add, makeVarRef(n), makeInt(1)), SourceLoc{}),
      std::make_shared<const EvaluateStmt>(sync, SourceLoc{}),
      std::make_shared<const LetStmt>(unused, bin(BinaryOp::Mul, makeVarRef(n), makeInt(3)),
                                      std::make_shared<const StoreStmt>(A, std::vector<Expr>{makeInt(0)}, makeInt(1),
                                                                        SourceLoc{}),
                                      SourceLoc{}),
      std::make_shared<const LetStmt>(kept, makeCall("cuda.read", {makeVarRef(n)}, DType::Int32),
                                      std::make_shared<const StoreStmt>(A, std::vector<Expr>{makeInt(1)}, makeInt(2),
                                                                        SourceLoc{}),
                                      SourceLoc{}),
  });
  std::string text = printStmt(simplifyStmt(body));
  INFO(text);
  CHECK(text.find("evaluate @cuda.sync<int32>()") != std::string::npos);
  CHECK(text.find("let kept: int32 = @cuda.read(n)") != std::string::npos);
  CHECK(text.find("unused") == std::string::npos);
  CHECK(text.find("n + 1") == std::string::npos);
  Expr clock = makeCall("cuda.clock", {}, DType::Int32);
  CHECK(printExpr(simplifyExpr(bin(BinaryOp::Mul, bin(BinaryOp::Mul, makeVarRef(n), clock), makeInt(0)))) ==
        "n * @cuda.clock<int32>() * 0");
}

TEST_CASE("unchanged trees come back as the same nodes") {
  Var n = makeVar("n");
  Buffer b = makeBuffer("B", DType::Int32, {makeInt(4)}, MemScope::Global);
  Stmt s = std::make_shared<const StoreStmt>(b, std::vector<Expr>{makeVarRef(n)},
                                             bin(BinaryOp::Add, makeVarRef(n), makeVarRef(n)), SourceLoc{});
  CHECK(simplifyStmt(s) == s);
  Module m;
  auto f = std::make_shared<PrimFunc>();
  f->name = "unchanged";
  f->params = {{"B", b, nullptr, {}}, {"n", nullptr, n, {}}};
  f->body = s;
  m.funcs.push_back(f);
  CHECK(passes::simplify(m).funcs[0] == m.funcs[0]);
}
