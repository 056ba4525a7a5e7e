// User errors found while interpreting: located diagnostics, never a crash.
#include <doctest/doctest.h>

#include <cmath>

#include "compiler/interp/interpreter.h"
#include "ir_builders.h"

using namespace tlc;
using namespace tlc::interp;
using namespace tlc::testing;

namespace {

// A source file the locations below point into.
const char* kSource =
    "def k(A: Tensor[(M, 64), float32]):\n"
    "    with T.Kernel(2) as bx:\n"
    "        A_s = T.alloc_shared((64,), float32)\n"
    "        A_s[bx * 40 + 30] = 1.0\n";

struct Env {
  SourceManager sm;
  uint32_t file = sm.addBuffer("k.tl", kSource);
  DiagnosticEngine diags{sm};
  SourceLoc at(uint32_t line, uint32_t col, uint32_t len) { return SourceLoc{file, line, col, len}; }
};

PrimFunc func(std::vector<Param> params, std::vector<Var> shapeVars, Stmt body) {
  PrimFunc f;
  f.name = "k";
  f.params = std::move(params);
  f.shapeVars = std::move(shapeVars);
  f.body = std::move(body);
  return f;
}

}  // namespace

// expected-error: out-of-bounds-access
TEST_CASE("an out-of-bounds store is a located error naming the buffer, the index and the block") {
  Env env;
  Buffer As = makeBuffer("A_s", DType::Float32, {i32(64)}, MemScope::Shared, env.at(3, 9, 3));
  Var bx = makeVar("bx");
  Stmt body = seq({alloc(As), store(As, {add(mul(vref(bx), i32(40)), i32(30))}, makeFloat(1.0), env.at(4, 9, 17))});
  PrimFunc f = func({}, {}, kernel({i32(2)}, {bx}, body, env.at(2, 10, 8)));
  std::vector<ArgValue> args;
  CHECK_FALSE(interpret(f, args, env.diags));
  REQUIRE(env.diags.diagnostics().size() == 1);
  const Diagnostic& d = env.diags.diagnostics()[0];
  CHECK(d.kind == DiagKind::InterpOutOfBounds);
  CHECK(d.message == "index 70 is out of bounds for dimension 0 of `A_s` (size 64)");
  CHECK(d.loc.line == 4);
  std::string text = env.diags.renderAll();
  CHECK(text.find("k.tl:4:9: error: index 70 is out of bounds") != std::string::npos);
  CHECK(text.find("[out-of-bounds-access]") != std::string::npos);
  CHECK(text.find("`A_s` is declared here") != std::string::npos);
  CHECK(text.find("in block (bx=1)") != std::string::npos);
}

TEST_CASE("an out-of-bounds load and atomic are errors too") {
  Env env;
  Buffer A = makeBuffer("A", DType::Float32, {i32(4)}, MemScope::Global);
  Buffer B = makeBuffer("B", DType::Float32, {i32(4)}, MemScope::Global);
  Var bx = makeVar("bx");
  {
    PrimFunc f = func({tensorParam(A), tensorParam(B)}, {},
                      kernel({i32(1)}, {bx}, store(B, {i32(0)}, makeLoad(A, {i32(-1)}, env.at(4, 9, 3)))));
    HostTensor a(DType::Float32, {4}), b(DType::Float32, {4});
    std::vector<ArgValue> args = {ArgValue::ofTensor(a), ArgValue::ofTensor(b)};
    CHECK_FALSE(interpret(f, args, env.diags));
    CHECK(env.diags.hasKind(DiagKind::InterpOutOfBounds));
    CHECK(env.diags.diagnostics()[0].message == "index -1 is out of bounds for dimension 0 of `A` (size 4)");
  }
  env.diags.clear();
  {
    Stmt at = std::make_shared<const AtomicStmt>(AtomicKind::Add, A, std::vector<Expr>{i32(4)}, makeFloat(1.0),
                                                 env.at(4, 9, 3));
    PrimFunc f = func({tensorParam(A)}, {}, kernel({i32(1)}, {bx}, at));
    HostTensor a(DType::Float32, {4});
    std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
    CHECK_FALSE(interpret(f, args, env.diags));
    CHECK(env.diags.hasKind(DiagKind::InterpOutOfBounds));
  }
}

// expected-error: runtime-shape-mismatch
TEST_CASE("tensors that disagree on a dynamic dimension: the error names both parameters") {
  Env env;
  GemmConfig cfg;
  PrimFunc f = makeTiledGemm(cfg);
  HostTensor A(DType::Float32, {64, 32}), B(DType::Float32, {32, 16}), C(DType::Float32, {48, 16});
  std::vector<ArgValue> args = {ArgValue::ofTensor(A), ArgValue::ofTensor(B), ArgValue::ofTensor(C)};
  CHECK_FALSE(interpret(f, args, env.diags));
  REQUIRE(env.diags.hasKind(DiagKind::InterpShapeMismatch));
  CHECK(env.diags.diagnostics()[0].message == "dimension `M` is 48 in `C` (dimension 0) but 64 in `A` (dimension 0)");
}

// expected-error: argument-mismatch
TEST_CASE("argument count, kind and dtype are checked") {
  Env env;
  GemmConfig cfg;
  PrimFunc f = makeTiledGemm(cfg);
  HostTensor A(DType::Float16, {64, 32}), B(DType::Float32, {32, 16}), C(DType::Float32, {64, 16});
  std::vector<ArgValue> args = {ArgValue::ofTensor(A), ArgValue::ofTensor(B), ArgValue::ofTensor(C)};
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.diagnostics()[0].message == "the tensor given for `A` holds float16 but the parameter is float32");
  env.diags.clear();
  std::vector<ArgValue> two = {ArgValue::ofTensor(B), ArgValue::ofTensor(C)};
  CHECK_FALSE(interpret(f, two, env.diags));
  CHECK(env.diags.hasKind(DiagKind::InterpArgumentMismatch));
  env.diags.clear();
  std::vector<ArgValue> scalar = {ArgValue::ofInt(3), ArgValue::ofTensor(B), ArgValue::ofTensor(C)};
  CHECK_FALSE(interpret(f, scalar, env.diags));
  CHECK(env.diags.diagnostics()[0].message == "parameter `A` needs a tensor argument");
}

TEST_CASE("a constant dimension that the tensor does not have") {
  Env env;
  Buffer A = makeBuffer("A", DType::Float32, {i32(8), i32(4)}, MemScope::Global, env.at(1, 7, 1));
  Var bx = makeVar("bx");
  PrimFunc f = func({tensorParam(A)}, {}, kernel({i32(1)}, {bx}, store(A, {i32(0), i32(0)}, makeFloat(1.0))));
  HostTensor a(DType::Float32, {8, 5});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.diagnostics()[0].message ==
        "the tensor given for `A` has shape [8, 5] but dimension 1 of the parameter must be 4");
}

// expected-error: undefined-behavior
TEST_CASE("integer division by zero and out-of-range shifts are undefined behaviour, reported") {
  Env env;
  Buffer A = makeBuffer("A", DType::Int32, {i32(2)}, MemScope::Global);
  Var bx = makeVar("bx");
  PrimFunc f = func({tensorParam(A)}, {},
                    kernel({i32(1)}, {bx}, store(A, {i32(0)}, makeBinary(BinaryOp::FloorDiv, i32(5), vref(bx), env.at(4, 9, 6)))));
  HostTensor a(DType::Int32, {2});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.hasKind(DiagKind::InterpUndefinedBehavior));
  CHECK(env.diags.diagnostics()[0].message == "integer division by zero");
  env.diags.clear();
  PrimFunc g = func({tensorParam(A)}, {},
                    kernel({i32(1)}, {bx}, store(A, {i32(0)}, makeBinary(BinaryOp::Shl, i32(1), i32(40)))));
  CHECK_FALSE(interpret(g, args, env.diags));
  CHECK(env.diags.diagnostics()[0].message == "shift by 40 is out of range for int32 (0 to 31)");
}

// expected-error: unsupported-in-interpreter
TEST_CASE("unknown builtins and target intrinsics are not evaluated") {
  Env env;
  Buffer A = makeBuffer("A", DType::Float32, {i32(2)}, MemScope::Global);
  Var bx = makeVar("bx");
  PrimFunc f = func({tensorParam(A)}, {},
                    kernel({i32(1)}, {bx}, store(A, {i32(0)}, makeCall("cuda.shfl_xor", {makeFloat(1.0)}, DType::Float32))));
  HostTensor a(DType::Float32, {2});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.hasKind(DiagKind::InterpUnsupported));
}

// expected-error: invalid-program
TEST_CASE("variables and buffers used outside their scope are invalid programs") {
  Env env;
  Buffer A = makeBuffer("A", DType::Float32, {i32(2)}, MemScope::Global);
  Buffer T = makeBuffer("T", DType::Float32, {i32(2)}, MemScope::Shared, env.at(3, 9, 3));
  Var bx = makeVar("bx"), stray = makeVar("i");
  HostTensor a(DType::Float32, {2});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
  PrimFunc f = func({tensorParam(A)}, {}, kernel({i32(1)}, {bx}, store(A, {vref(stray)}, makeFloat(1.0))));
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.diagnostics()[0].message == "variable `i` is used outside its scope");
  env.diags.clear();
  PrimFunc g = func({tensorParam(A)}, {}, kernel({i32(1)}, {bx}, store(T, {i32(0)}, makeFloat(1.0))));
  CHECK_FALSE(interpret(g, args, env.diags));
  CHECK(env.diags.hasKind(DiagKind::InterpInvalidProgram));
  env.diags.clear();
  // An Alloc that is a loop's whole body is gone after the loop.
  Var j = makeVar("j");
  PrimFunc h = func({tensorParam(A)}, {},
                    kernel({i32(1)}, {bx}, seq({loop(j, i32(2), alloc(T)), store(T, {i32(0)}, makeFloat(1.0))})));
  CHECK_FALSE(interpret(h, args, env.diags));
  REQUIRE(env.diags.hasKind(DiagKind::InterpInvalidProgram));
  CHECK(env.diags.diagnostics()[0].message == "buffer `T` is used outside the scope of its allocation");
}

TEST_CASE("a copy between regions of different sizes is a run-time shape error") {
  Env env;
  Var N = makeVar("N"), bx = makeVar("bx");
  Buffer A = makeBuffer("A", DType::Float32, {vref(N)}, MemScope::Global);
  Buffer T = makeBuffer("T", DType::Float32, {i32(8)}, MemScope::Shared);
  Region src{A, {{i32(0), vref(N)}}, SourceLoc{}};
  PrimFunc f = func({tensorParam(A)}, {N}, kernel({i32(1)}, {bx}, seq({alloc(T), copy(src, fullRegion(T), env.at(4, 9, 6))})));
  HostTensor a(DType::Float32, {6});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.hasKind(DiagKind::InterpShapeMismatch));
}

// expected-warning: uninitialized-read
TEST_CASE("reading an allocation before writing it gives one uninitialized-read warning and NaN") {
  Env env;
  Buffer A = makeBuffer("A", DType::Float32, {i32(4)}, MemScope::Global);
  Buffer T = makeBuffer("T", DType::Float32, {i32(4)}, MemScope::Fragment, env.at(3, 9, 3));
  Var bx = makeVar("bx");
  // T[0] is written; copying all of T reads T[1..3] uninitialized.
  PrimFunc f = func({tensorParam(A)}, {},
                    kernel({i32(2)}, {bx}, seq({alloc(T), store(T, {i32(0)}, makeFloat(2.0)), copy(fullRegion(T), fullRegion(A))})));
  HostTensor a(DType::Float32, {4});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a)};
  CHECK(interpret(f, args, env.diags));  // a warning, not an error
  REQUIRE(env.diags.diagnostics().size() == 1);
  CHECK(env.diags.diagnostics()[0].kind == DiagKind::InterpUninitializedRead);
  CHECK(env.diags.diagnostics()[0].message == "`T` is read at [1] before any value was written there; the value is undefined");
  CHECK(a.get(0) == 2.0);
  CHECK(std::isnan(a.get(1)));
}

TEST_CASE("gemm operands whose shapes disagree") {
  Env env;
  Buffer A = makeBuffer("A", DType::Float32, {i32(4), i32(8)}, MemScope::Global);
  Buffer B = makeBuffer("B", DType::Float32, {i32(4), i32(8)}, MemScope::Global);
  Buffer C = makeBuffer("C", DType::Float32, {i32(4), i32(8)}, MemScope::Global);
  Var bx = makeVar("bx");
  Stmt g = std::make_shared<const GemmStmt>(fullRegion(A), fullRegion(B), fullRegion(C), false, false, true, env.at(4, 9, 6));
  PrimFunc f = func({tensorParam(A), tensorParam(B), tensorParam(C)}, {}, kernel({i32(1)}, {bx}, g));
  HostTensor a(DType::Float32, {4, 8}), b(DType::Float32, {4, 8}), c(DType::Float32, {4, 8});
  std::vector<ArgValue> args = {ArgValue::ofTensor(a), ArgValue::ofTensor(b), ArgValue::ofTensor(c)};
  CHECK_FALSE(interpret(f, args, env.diags));
  CHECK(env.diags.diagnostics()[0].message ==
        "gemm shapes disagree: op(A) is [4, 8], op(B) is [4, 8] and C is [4, 8]; C = op(A) @ op(B) needs [M, K] @ [K, N] -> [M, N]");
}
