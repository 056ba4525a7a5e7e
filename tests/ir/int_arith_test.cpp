// Integer constant arithmetic shared by the verifier and simplify.
#include "compiler/ir/int_arith.h"

#include <limits>

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;

TEST_CASE("values wrap at the dtype's width") {
  CHECK(wrapToDType(200, DType::Int8) == -56);
  CHECK(wrapToDType(uint64_t(-1), DType::UInt8) == 255);
  CHECK(wrapToDType(uint64_t(1) << 32, DType::Int32) == 0);
  CHECK(wrapToDType(7, DType::Bool) == 1);
  CHECK(wrapToDType(uint64_t(-1), DType::UInt64) == -1);
}

TEST_CASE("floor division, shifts and undefined cases") {
  CHECK(foldIntBinary(BinaryOp::FloorDiv, -7, 2, DType::Int32) == -4);
  CHECK(foldIntBinary(BinaryOp::FloorMod, -7, 2, DType::Int32) == 1);
  CHECK(foldIntBinary(BinaryOp::FloorMod, 7, -2, DType::Int32) == -1);
  CHECK(!foldIntBinary(BinaryOp::FloorDiv, 1, 0, DType::Int32));
  CHECK(!foldIntBinary(BinaryOp::FloorDiv, std::numeric_limits<int64_t>::min(), -1, DType::Int64));
  CHECK(!foldIntBinary(BinaryOp::Shl, 1, 32, DType::Int32));
  CHECK(foldIntBinary(BinaryOp::Shl, 1, 31, DType::Int32) == std::numeric_limits<int32_t>::min());
  CHECK(foldIntBinary(BinaryOp::Lt, 1, -1, DType::UInt64) == 1);  // -1 is 2^64-1 unsigned
  CHECK(!foldIntBinary(BinaryOp::Div, 4, 2, DType::Int32));
}

TEST_CASE("constant expressions evaluate; anything with a variable does not") {
  Expr e = makeBinary(BinaryOp::Add, makeInt(16), makeBinary(BinaryOp::BitXor, makeInt(3), makeInt(1)));
  CHECK(evalConstInt(e) == 18);
  CHECK(evalConstInt(makeCast(DType::Int8, makeInt(300))) == 44);
  CHECK(evalConstInt(makeCast(DType::Int32, makeFloat(2.75))) == 2);
  CHECK(!evalConstInt(makeCast(DType::Int8, makeFloat(1000.0))));
  CHECK(evalConstInt(makeSelect(makeBinary(BinaryOp::Lt, makeInt(1), makeInt(2)), makeInt(5), makeInt(6))) == 5);
  CHECK(!evalConstInt(makeBinary(BinaryOp::Add, makeInt(1), makeVarRef(makeVar("n")))));
  CHECK(!evalConstInt(makeFloat(1.0)));
}

TEST_CASE("checked arithmetic reports results outside the dtype instead of wrapping") {
  constexpr int64_t i32max = std::numeric_limits<int32_t>::max(), i64max = std::numeric_limits<int64_t>::max();
  CHECK(checkedIntBinary(BinaryOp::Add, i32max, 1, DType::Int32).overflow);
  CHECK(checkedIntBinary(BinaryOp::Add, i32max, 1, DType::Int64).value == i32max + 1);
  CHECK(checkedIntBinary(BinaryOp::Mul, 65536, 65536, DType::Int32).overflow);
  CHECK(checkedIntBinary(BinaryOp::Mul, i64max, 2, DType::Int64).overflow);
  CHECK(checkedIntBinary(BinaryOp::Sub, 3, 5, DType::UInt32).overflow);
  CHECK(checkedIntBinary(BinaryOp::Sub, std::numeric_limits<int64_t>::min(), 1, DType::Int64).overflow);
  CHECK(checkedIntBinary(BinaryOp::FloorDiv, std::numeric_limits<int64_t>::min(), -1, DType::Int64).overflow);
  CHECK(checkedIntBinary(BinaryOp::Shl, 1, 31, DType::Int32).overflow);
  CHECK(checkedIntBinary(BinaryOp::Shl, 1, 30, DType::Int32).value == int64_t(1) << 30);
  CHECK(checkedIntBinary(BinaryOp::Add, 100, 27, DType::Int8).value == 127);
  CHECK(checkedIntBinary(BinaryOp::Add, 100, 28, DType::Int8).overflow);
  // Not arithmetic, or undefined: as foldIntBinary, never an overflow.
  CHECK(checkedIntBinary(BinaryOp::BitXor, -1, i32max, DType::Int32).value == std::numeric_limits<int32_t>::min());
  auto byZero = checkedIntBinary(BinaryOp::FloorMod, 1, 0, DType::Int32);
  CHECK((!byZero.value && !byZero.overflow));
  CHECK(checkedIntBinary(BinaryOp::FloorMod, -7, 2, DType::Int32).value == 1);
  CHECK(fitsDType(i32max, DType::Int32));
  CHECK_FALSE(fitsDType(i32max + 1, DType::Int32));
  CHECK_FALSE(fitsDType(-1, DType::UInt8));
}
