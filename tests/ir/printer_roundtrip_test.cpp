// The .tir printer: modules built with the ir.h factories print to the
// documented syntax and parse back to an identical print.
#include <cmath>
#include <limits>

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;
using namespace tlc::ir::testing;

namespace {

Stmt seq(std::vector<Stmt> s) { return makeSeq(std::move(s)); }
Stmt store(Buffer b, std::vector<Expr> idx, Expr v) {
  return std::make_shared<const StoreStmt>(std::move(b), std::move(idx), std::move(v), SourceLoc{});
}
Stmt alloc(Buffer b) { return std::make_shared<const AllocStmt>(std::move(b), SourceLoc{}); }
Stmt kernel(std::vector<Expr> grid, std::vector<Var> vars, int64_t threads, Stmt body) {
  return std::make_shared<const KernelStmt>(std::move(grid), std::move(vars), threads, std::move(body), SourceLoc{});
}
std::shared_ptr<ForStmt> loop(Var v, Expr mn, Expr ext, ForKind k, Stmt body) {
  return std::make_shared<ForStmt>(std::move(v), std::move(mn), std::move(ext), k, std::move(body), SourceLoc{});
}
Region region(Buffer b, std::vector<Range> r) { return Region{std::move(b), std::move(r), SourceLoc{}}; }
Expr vref(const Var& v) { return makeVarRef(v); }

// The classic tile GEMM with a dynamic M, as the front end lowers it.
Module gemmModule() {
  Var M = makeVar("M"), N = makeVar("N"), K = makeVar("K");
  Buffer A = makeBuffer("A", DType::Float16, {vref(M), vref(K)}, MemScope::Global);
  Buffer B = makeBuffer("B", DType::Float16, {vref(K), vref(N)}, MemScope::Global);
  Buffer C = makeBuffer("C", DType::Float16, {vref(M), vref(N)}, MemScope::Global);
  Var bx = makeVar("bx"), by = makeVar("by"), k = makeVar("k");
  Buffer As = makeBuffer("A_s", DType::Float16, {makeInt(128), makeInt(32)}, MemScope::Shared);
  Buffer Bs = makeBuffer("B_s", DType::Float16, {makeInt(32), makeInt(128)}, MemScope::Shared);
  Buffer Cf = makeBuffer("C_f", DType::Float32, {makeInt(128), makeInt(128)}, MemScope::Fragment);
  auto ceildiv = [](Expr a, int64_t b) { return floorDiv(add(a, makeInt(b - 1)), makeInt(b)); };
  auto pipelined = loop(k, makeInt(0), ceildiv(vref(K), 32), ForKind::Pipelined,
                        seq({std::make_shared<const CopyStmt>(
                                 region(A, {{mul(vref(by), makeInt(128)), makeInt(128)},
                                            {mul(vref(k), makeInt(32)), makeInt(32)}}),
                                 fullRegion(As), SourceLoc{}),
                             std::make_shared<const CopyStmt>(
                                 region(B, {{mul(vref(k), makeInt(32)), makeInt(32)},
                                            {mul(vref(bx), makeInt(128)), makeInt(128)}}),
                                 fullRegion(Bs), SourceLoc{}),
                             std::make_shared<const GemmStmt>(fullRegion(As), fullRegion(Bs), fullRegion(Cf), false,
                                                              false, false, SourceLoc{})}));
  pipelined->numStages = 3;
  Stmt body = kernel({ceildiv(vref(N), 128), ceildiv(vref(M), 128)}, {bx, by}, 128,
                     seq({alloc(As), alloc(Bs), alloc(Cf),
                          std::make_shared<const FillStmt>(fullRegion(Cf), makeFloat(0.0), SourceLoc{}), pipelined,
                          std::make_shared<const CopyStmt>(
                              fullRegion(Cf),
                              region(C, {{mul(vref(by), makeInt(128)), makeInt(128)},
                                         {mul(vref(bx), makeInt(128)), makeInt(128)}}),
                              SourceLoc{})}));
  auto f = std::make_shared<PrimFunc>();
  f->name = "gemm";
  f->shapeVars = {M, N, K};
  f->params = {{"A", A, nullptr, {}}, {"B", B, nullptr, {}}, {"C", C, nullptr, {}}};
  f->bindings = {{"block_M", "128"}, {"dtype", "float16"}};
  f->body = body;
  return moduleOf(f);
}

std::shared_ptr<PrimFunc> funcWithBody(Stmt body, std::vector<Param> params = {}) {
  auto f = std::make_shared<PrimFunc>();
  f->name = "f";
  f->params = std::move(params);
  f->body = std::move(body);
  return f;
}

}  // namespace

TEST_CASE("the tile GEMM prints in the documented syntax and round-trips") {
  std::string text = checkRoundTrip(gemmModule());
  const char* expected =
      "func @gemm[M, N, K](A: float16[M, K], B: float16[K, N], C: float16[M, N]) bind(block_M = \"128\", dtype = "
      "\"float16\") {\n"
      "  kernel grid(floordiv(N + 127, 128), floordiv(M + 127, 128)) threads(128) as (bx, by) {\n"
      "    alloc A_s: shared float16[128, 32]\n"
      "    alloc B_s: shared float16[32, 128]\n"
      "    alloc C_f: fragment float32[128, 128]\n"
      "    fill(C_f, 0.0)\n"
      "    for k in pipelined(0 : +floordiv(K + 31, 32), num_stages=3) {\n"
      "      copy(A[by * 128 : +128, k * 32 : +32], A_s)\n"
      "      copy(B[k * 32 : +32, bx * 128 : +128], B_s)\n"
      "      gemm(A_s, B_s, C_f)\n"
      "    }\n"
      "    copy(C_f, C[by * 128 : +128, bx * 128 : +128])\n"
      "  }\n"
      "}\n";
  CHECK(text == expected);
}

TEST_CASE("literals of every dtype keep their dtype and value") {
  Buffer out = makeBuffer("out", DType::Float32, {makeInt(1)}, MemScope::Global);
  std::vector<Expr> values = {
      makeInt(7),
      makeInt(-7),
      makeInt(5, DType::Int8),
      makeInt(-128, DType::Int8),
      makeInt(300, DType::Int16),
      makeInt(std::numeric_limits<int64_t>::min(), DType::Int64),
      makeInt(std::numeric_limits<int64_t>::max(), DType::Int64),
      makeInt(255, DType::UInt8),
      makeInt(65535, DType::UInt16),
      makeInt(4000000000LL, DType::UInt32),
      makeInt(-1, DType::UInt64),  // the bit pattern of 2^64-1
      makeBool(true),
      makeBool(false),
      makeFloat(1.0),
      makeFloat(0.1),
      makeFloat(-0.0),
      makeFloat(1e-30, DType::Float64),
      makeFloat(6.02214076e23, DType::Float64),
      makeFloat(1.5, DType::Float16),
      makeFloat(-2.25, DType::BFloat16),
      makeFloat(448.0, DType::Float8E4M3),
      makeFloat(0.5, DType::Float8E5M2),
      makeFloat(std::numeric_limits<double>::infinity()),
      makeFloat(-std::numeric_limits<double>::infinity(), DType::Float16),
      makeFloat(std::numeric_limits<double>::quiet_NaN(), DType::Float64),
  };
  std::vector<Stmt> body;
  for (const Expr& v : values) body.push_back(std::make_shared<const EvaluateStmt>(makeCall("use", {v}, DType::Float32), SourceLoc{}));
  Module m = moduleOf(funcWithBody(seq(body), {{"out", out, nullptr, {}}}));
  std::string text = checkRoundTrip(m, /*verify=*/false);
  for (const char* s : {"@use<float32>(7)", "@use<float32>(-7)", "(5i8)", "(-128i8)", "(300i16)",
                        "(-9223372036854775808i64)", "(9223372036854775807i64)", "(255u8)", "(65535u16)",
                        "(4000000000u32)", "(18446744073709551615u64)", "(true)", "(false)", "(1.0)", "(0.1)",
                        "(-0.0)", "(1e-30f64)", "(6.02214076e+23f64)", "(1.5f16)", "(-2.25bf16)", "(448.0f8e4m3)",
                        "(0.5f8e5m2)", "(inf)", "(-inff16)", "(nanf64)"}) {
    INFO(s);
    CHECK(text.find(s) != std::string::npos);
  }
  // Values survive exactly, including the sign of zero and the u64 bit pattern.
  auto parsed = parseText(text, /*verify=*/false);
  REQUIRE(parsed->module);
  auto* seqStmt = as<SeqStmt>((*parsed->module).funcs[0]->body);
  REQUIRE(seqStmt);
  auto arg = [&](size_t i) { return as<Call>(as<EvaluateStmt>(seqStmt->stmts[i])->value)->args[0]; };
  CHECK(as<IntImm>(arg(10))->value == -1);
  CHECK(arg(10)->dtype == DType::UInt64);
  CHECK(std::signbit(as<FloatImm>(arg(15))->value));
  CHECK(as<FloatImm>(arg(14))->value == 0.1);
  CHECK(std::isnan(as<FloatImm>(arg(24))->value));
}

TEST_CASE("operators print with the minimal parentheses and keep their tree") {
  Var a = makeVar("a"), b = makeVar("b"), c = makeVar("c");
  Var x = makeVar("x", DType::Float32), p = makeVar("p", DType::Bool);
  Expr A = vref(a), B = vref(b), C = vref(c);
  auto bin = [](BinaryOp op, Expr l, Expr r) { return makeBinary(op, l, r); };
  struct Case {
    Expr e;
    const char* text;
  } cases[] = {
      {bin(BinaryOp::Mul, bin(BinaryOp::Add, A, B), C), "(a + b) * c"},
      {bin(BinaryOp::Add, A, bin(BinaryOp::Mul, B, C)), "a + b * c"},
      {bin(BinaryOp::Sub, A, bin(BinaryOp::Sub, B, C)), "a - (b - c)"},
      {bin(BinaryOp::Sub, bin(BinaryOp::Sub, A, B), C), "a - b - c"},
      {bin(BinaryOp::Sub, A, makeInt(-5)), "a - -5"},
      {makeUnary(UnaryOp::Neg, makeInt(5)), "-(5)"},
      {makeUnary(UnaryOp::Neg, makeInt(-5)), "-(-5)"},
      {makeUnary(UnaryOp::Neg, bin(BinaryOp::Add, A, B)), "-(a + b)"},
      {makeUnary(UnaryOp::Neg, makeUnary(UnaryOp::Neg, A)), "--a"},
      {makeUnary(UnaryOp::BitNot, A), "~a"},
      {makeUnary(UnaryOp::Not, bin(BinaryOp::Lt, A, B)), "not a < b"},
      {bin(BinaryOp::Eq, makeUnary(UnaryOp::Not, vref(p)), makeBool(false)), "(not p) == false"},
      {bin(BinaryOp::Or, bin(BinaryOp::And, vref(p), vref(p)), bin(BinaryOp::And, vref(p), vref(p))), "p and p or p and p"},
      {bin(BinaryOp::And, vref(p), bin(BinaryOp::Or, vref(p), vref(p))), "p and (p or p)"},
      {bin(BinaryOp::BitOr, bin(BinaryOp::BitXor, A, B), bin(BinaryOp::BitAnd, B, C)), "a ^ b | b & c"},
      {bin(BinaryOp::Shl, A, bin(BinaryOp::Add, B, C)), "a << b + c"},
      {bin(BinaryOp::Add, bin(BinaryOp::Shr, A, B), C), "(a >> b) + c"},
      {bin(BinaryOp::FloorMod, A, bin(BinaryOp::Mul, B, C)), "a % (b * c)"},
      {bin(BinaryOp::FloorDiv, A, B), "floordiv(a, b)"},
      {bin(BinaryOp::Min, A, bin(BinaryOp::Max, B, C)), "min(a, max(b, c))"},
      {bin(BinaryOp::Div, vref(x), makeFloat(2.0)), "x / 2.0"},
      {makeSelect(bin(BinaryOp::Ge, A, B), vref(x), makeFloat(0.0)), "select(a >= b, x, 0.0)"},
      {std::make_shared<const Cast>(DType::Int32, A, SourceLoc{}), "cast<int32>(a)"},
      {makeCast(DType::Float16, vref(x)), "cast<float16>(x)"},
      {makeCall("exp2", {vref(x)}, DType::Float32), "@exp2(x)"},
      {makeCall("cuda.lane_id", {}, DType::Int32), "@cuda.lane_id<int32>()"},
      {makeCall("weird name", {A}, DType::Float64), "@\"weird name\"<float64>(a)"},
      {bin(BinaryOp::Ne, bin(BinaryOp::Le, A, B), bin(BinaryOp::Gt, B, C)), "a <= b != (b > c)"},
  };
  for (const Case& k : cases) {
    INFO(k.text);
    CHECK(printExpr(k.e) == k.text);
    Buffer out = makeBuffer("out", k.e->dtype, {makeInt(1)}, MemScope::Global);
    Module m = moduleOf(funcWithBody(store(out, {makeInt(0)}, k.e),
                                     {{"out", out, nullptr, {}}, {"a", nullptr, a, {}}, {"b", nullptr, b, {}},
                                      {"c", nullptr, c, {}}, {"x", nullptr, x, {}}, {"p", nullptr, p, {}}}));
    checkRoundTrip(m, /*verify=*/false);
  }
}

TEST_CASE("clashing and reserved names are renamed deterministically") {
  Var x1 = makeVar("x"), x2 = makeVar("x"), kw = makeVar("for"), xs = makeVar("x_1"), odd = makeVar("a.b"),
      num = makeVar("0th"), inf = makeVar("inff16");
  Buffer buf = makeBuffer("x", DType::Int32, {makeInt(8)}, MemScope::Global);
  Stmt body = seq({store(buf, {vref(x1)}, vref(x2)), store(buf, {vref(kw)}, vref(xs)), store(buf, {vref(odd)}, vref(num)),
                   store(buf, {vref(inf)}, makeInt(0))});
  Module m = moduleOf(funcWithBody(body, {{"x", buf, nullptr, {}},
                                          {"x", nullptr, x1, {}},
                                          {"x", nullptr, x2, {}},
                                          {"for", nullptr, kw, {}},
                                          {"x_1", nullptr, xs, {}},
                                          {"a.b", nullptr, odd, {}},
                                          {"0th", nullptr, num, {}},
                                          {"inff16", nullptr, inf, {}}}));
  std::string text = checkRoundTrip(m);
  CHECK(text.find("func @f(x: int32[8], x_1: int32, x_2: int32, for_1: int32, x_1_1: int32, a_b: int32, v0th: int32, "
                  "inff16_1: int32)") != std::string::npos);
  CHECK(text.find("x[x_1] = x_2") != std::string::npos);
  CHECK(text.find("x[for_1] = x_1_1") != std::string::npos);
}

TEST_CASE("a variable bound at two sites gets one name per site") {
  // Passes that copy code bind the same Var node twice; the text must still
  // parse back and print the same.
  Var i = makeVar("i");
  Buffer out = makeBuffer("out", DType::Int32, {makeInt(4)}, MemScope::Global);
  Stmt inner = loop(i, makeInt(0), makeInt(4), ForKind::Serial, store(out, {vref(i)}, vref(i)));
  Stmt nested = loop(i, makeInt(0), makeInt(2), ForKind::Unroll, inner);  // shadows itself
  Module m = moduleOf(funcWithBody(seq({inner, inner, nested}), {{"out", out, nullptr, {}}}));
  std::string text = checkRoundTrip(m);
  CHECK(text.find("for i in serial(0 : +4)") != std::string::npos);
  CHECK(text.find("for i_1 in serial(0 : +4)") != std::string::npos);
  CHECK(text.find("for i_2 in unroll(0 : +2)") != std::string::npos);
  CHECK(text.find("for i_3 in serial(0 : +4) {\n      out[i_3] = i_3") != std::string::npos);
}

TEST_CASE("every statement kind round-trips") {
  Var n = makeVar("n", DType::Int64), bx = makeVar("bx"), i = makeVar("i"), j = makeVar("j", DType::Int64);
  Var t = makeVar("t", DType::Float32), u = makeVar("u"), s = makeVar("s", DType::Float32);
  Buffer X = makeBuffer("X", DType::Float32, {vref(n), makeInt(64, DType::Int64)}, MemScope::Global);
  Buffer Y = makeBuffer("Y", DType::Float32, {vref(n)}, MemScope::Global);
  Buffer S = makeBuffer("S", DType::Float32, {makeInt(4), makeInt(64)}, MemScope::Fragment);
  Buffer R = makeBuffer("R", DType::Float32, {makeInt(4)}, MemScope::Fragment);
  Buffer L = makeBuffer("L", DType::Int32, {makeInt(2)}, MemScope::Local);
  Buffer V = makeBuffer("acc", DType::Float32, {makeInt(1)}, MemScope::Var);
  auto pipe = loop(i, makeInt(0), makeInt(8), ForKind::Pipelined, seq({}));
  pipe->numStages = 2;
  pipe->order = {1, 0};
  pipe->stage = {0, 1};
  Stmt ifChain = std::make_shared<const IfStmt>(
      makeBinary(BinaryOp::Lt, vref(bx), makeInt(2)), store(L, {makeInt(0)}, makeInt(1)),
      std::make_shared<const IfStmt>(makeBinary(BinaryOp::Eq, vref(bx), makeInt(3)), store(L, {makeInt(1)}, makeInt(2)),
                                     store(L, {makeInt(1)}, makeInt(3)), SourceLoc{}),
      SourceLoc{});
  Stmt ifElseSeq = std::make_shared<const IfStmt>(
      makeBool(true), seq({}), seq({store(L, {makeInt(0)}, makeInt(4)), store(L, {makeInt(1)}, makeInt(5))}), SourceLoc{});
  // A braced let (not last), then a flat let chain at the end of the block.
  Stmt bracedLet = std::make_shared<const LetStmt>(u, makeBinary(BinaryOp::Mul, vref(bx), makeInt(4)),
                                                   store(L, {makeInt(0)}, vref(u)), SourceLoc{});
  Stmt flatLets = std::make_shared<const LetStmt>(
      t, makeFloat(2.0),
      std::make_shared<const LetStmt>(s, makeBinary(BinaryOp::Mul, vref(t), vref(t)),
                                      seq({store(V, {makeInt(0)}, vref(s)), store(V, {makeInt(0)}, vref(t))}), SourceLoc{}),
      SourceLoc{});
  Stmt kernelBody = seq({
      alloc(S), alloc(R), alloc(L), alloc(V),
      std::make_shared<const FillStmt>(fullRegion(S), makeFloat(0.0), SourceLoc{}),
      std::make_shared<const CopyStmt>(
          region(X, {{makeCast(DType::Int64, makeBinary(BinaryOp::Mul, vref(bx), makeInt(4))), makeInt(4, DType::Int64)},
                     {makeInt(0, DType::Int64), makeInt(64, DType::Int64)}}),
          fullRegion(S), SourceLoc{}),
      loop(j, makeInt(0, DType::Int64), makeInt(64, DType::Int64), ForKind::Vectorized,
           store(S, {makeInt(0), makeCast(DType::Int32, vref(j))},
                 makeCall("exp", {makeLoad(S, {makeInt(0), makeCast(DType::Int32, vref(j))})}, DType::Float32))),
      std::make_shared<const ReduceStmt>(ReduceKind::Max, fullRegion(S), fullRegion(R), 1, false, SourceLoc{}),
      std::make_shared<const ReduceStmt>(ReduceKind::AbsSum, fullRegion(S), fullRegion(R), 1, true, SourceLoc{}),
      std::make_shared<const GemmStmt>(region(S, {{makeInt(0), makeInt(4)}, {makeInt(0), makeInt(4)}}),
                                       region(S, {{makeInt(0), makeInt(4)}, {makeInt(0), makeInt(4)}}),
                                       region(S, {{makeInt(0), makeInt(4)}, {makeInt(4), makeInt(4)}}), true, true, true,
                                       SourceLoc{}),
      std::make_shared<const AtomicStmt>(AtomicKind::Add, Y, std::vector<Expr>{makeCast(DType::Int64, vref(bx))},
                                         makeLoad(R, {makeInt(0)}), SourceLoc{}),
      std::make_shared<const AtomicStmt>(AtomicKind::Max, Y, std::vector<Expr>{makeInt(0, DType::Int64)},
                                         makeFloat(1.0), SourceLoc{}),
      std::make_shared<const AtomicStmt>(AtomicKind::Min, Y, std::vector<Expr>{makeInt(1, DType::Int64)},
                                         makeFloat(2.0), SourceLoc{}, V, std::vector<Expr>{makeInt(0)}),
      std::make_shared<const EvaluateStmt>(makeCall("cuda.syncthreads", {}, DType::Int32), SourceLoc{}),
      pipe, ifChain, ifElseSeq, bracedLet, flatLets});
  Stmt body = kernel({makeCast(DType::Int32, makeBinary(BinaryOp::FloorDiv, vref(n), makeInt(4, DType::Int64)))}, {bx},
                     256, kernelBody);
  auto f = funcWithBody(body, {{"X", X, nullptr, {}}, {"Y", Y, nullptr, {}}});
  f->shapeVars = {n};
  f->bindings = {{"quote\"d", "a\\b\nc"}};
  std::string text = checkRoundTrip(moduleOf(f), /*verify=*/false);
  for (const char* s :
       {"func @f[n: int64](X: float32[n, 64i64], Y: float32[n]) bind(\"quote\\\"d\" = \"a\\\\b\\nc\")",
        "kernel grid(cast<int32>(floordiv(n, 4i64))) threads(256) as (bx) {", "alloc acc: var float32[1]",
        "alloc L: local int32[2]", "copy(X[cast<int64>(bx * 4) : +4i64, 0i64 : +64i64], S)",
        "for j: int64 in vectorized(0i64 : +64i64) {", "S[0, cast<int32>(j)] = @exp(S[0, cast<int32>(j)])",
        "reduce_max(S, R, dim=1, clear=false)", "reduce_abssum(S, R, dim=1)",
        "gemm(S[0 : +4, 0 : +4], S[0 : +4, 0 : +4], S[0 : +4, 4 : +4], transpose_A=true, transpose_B=true, "
        "clear_accum=true)",
        "atomic_add(Y[cast<int64>(bx)], R[0])", "atomic_max(Y[0i64], 1.0)", "atomic_min(Y[1i64], 2.0) -> acc[0]", "evaluate @cuda.syncthreads<int32>()",
        "for i in pipelined(0 : +8, num_stages=2, order=[1, 0], stage=[0, 1]) {\n    }",
        "if bx < 2 {\n      L[0] = 1\n    } else if bx == 3 {\n      L[1] = 2\n    } else {\n      L[1] = 3\n    }",
        "if true {\n    } else {\n      L[0] = 4\n      L[1] = 5\n    }",
        "let u: int32 = bx * 4 {\n      L[0] = u\n    }",
        "let t: float32 = 2.0\n    let s: float32 = t * t\n    acc[0] = s\n    acc[0] = t\n  }\n}"}) {
    INFO(s);
    CHECK(text.find(s) != std::string::npos);
  }
}

TEST_CASE("printStmt and printExpr name free variables on first use") {
  Var x = makeVar("x"), y = makeVar("x");
  CHECK(printExpr(makeBinary(BinaryOp::Add, vref(x), vref(y))) == "x + x_1");
  Buffer b = makeBuffer("B", DType::Int32, {makeInt(4)}, MemScope::Shared);
  CHECK(printStmt(seq({alloc(b), store(b, {vref(x)}, vref(x))})) == "alloc B: shared int32[4]\nB[x] = x\n");
}

TEST_CASE("locations print only on request and parse back into the source manager") {
  SourceManager sm;
  uint32_t tl = sm.addBuffer("kernel.tl", "line one\nline two\n");
  Buffer out = makeBuffer("out", DType::Int32, {makeInt(1)}, MemScope::Global);
  Stmt s = std::make_shared<const StoreStmt>(out, std::vector<Expr>{makeInt(0)}, makeInt(1), SourceLoc{tl, 2, 5, 3});
  auto f = funcWithBody(s, {{"out", out, nullptr, {}}});
  f->loc = SourceLoc{tl, 1, 1, 3};
  Module m = moduleOf(f);
  CHECK(printModule(m).find("loc(") == std::string::npos);
  PrintOptions options;
  options.locations = &sm;
  std::string text = printModule(m, options);
  CHECK(text == "func @f(out: int32[1]) loc(\"kernel.tl\":1:1) {\n  out[0] = 1 loc(\"kernel.tl\":2:5)\n}\n");
  auto parsed = parseText(text);
  REQUIRE(parsed->module);
  const Func& g = parsed->module->funcs[0];
  CHECK(parsed->sources.name(g->body->loc.file) == "kernel.tl");
  CHECK(g->body->loc.line == 2);
  CHECK(g->body->loc.col == 5);
  CHECK(printModule(*parsed->module) == printModule(m));
}

TEST_CASE("parsed nodes carry locations in the .tir text") {
  auto parsed = parseText("func @f(out: int32[4]) {\n  for i in serial(0 : +4) {\n    out[i] = i + 1\n  }\n}\n");
  REQUIRE(parsed->module);
  auto* f = as<ForStmt>(parsed->module->funcs[0]->body);
  REQUIRE(f);
  CHECK(f->loc.line == 2);
  CHECK(f->loc.col == 3);
  auto* st = as<StoreStmt>(f->body);
  REQUIRE(st);
  CHECK(st->loc.line == 3);
  CHECK(st->value->loc.line == 3);
  CHECK(st->value->loc.col == 14);
  CHECK(parsed->sources.name(st->loc.file) == "test.tir");
}

TEST_CASE("an empty module prints as empty text and several functions are separated by a blank line") {
  CHECK(printModule(Module{}).empty());
  auto parsed = parseText("");
  REQUIRE(parsed->module);
  CHECK(parsed->module->funcs.empty());
  Module two = gemmModule();
  two.funcs.push_back(funcWithBody(seq({})));
  std::string text = checkRoundTrip(two);
  CHECK(text.find("}\n\nfunc @f() {\n}\n") != std::string::npos);
}

TEST_CASE("layout annotations print as annotate_layout statements and parse back with their layouts") {
  Buffer S = makeBuffer("S", DType::Float16, {makeInt(64), makeInt(32)}, MemScope::Shared);
  Buffer R = makeBuffer("R", DType::Float16, {makeInt(32), makeInt(64)}, MemScope::Shared);
  Buffer F = makeBuffer("F", DType::Float32, {makeInt(64), makeInt(64)}, MemScope::Fragment);
  Buffer G = makeBuffer("G", DType::Float32, {makeInt(64)}, MemScope::Fragment);
  auto annotate = [](Buffer b, LayoutSpec l) { return std::make_shared<const AnnotateLayoutStmt>(b, l, SourceLoc{}); };
  Stmt body = kernel({makeInt(1)}, {makeVar("bx")}, 128,
                     seq({alloc(S), alloc(R), alloc(F), alloc(G), annotate(S, {LayoutKind::Swizzled}),
                          annotate(R, {LayoutKind::RowMajor}), annotate(F, {LayoutKind::RowGroups, 8, 4}),
                          annotate(G, {LayoutKind::SharedFallback})}));
  std::string text = checkRoundTrip(moduleOf(funcWithBody(body)));
  for (const char* s : {"annotate_layout(S, swizzled)\n", "annotate_layout(R, row_major)\n",
                        "annotate_layout(F, row_groups(8, 4))\n", "annotate_layout(G, shared_fallback)\n"})
    CHECK(text.find(s) != std::string::npos);
  auto parsed = parseText(text);
  REQUIRE(parsed->module);
  auto* k = as<KernelStmt>(parsed->module->funcs[0]->body);
  REQUIRE(k);
  auto* a = as<AnnotateLayoutStmt>(as<SeqStmt>(k->body)->stmts[6]);
  REQUIRE(a);
  CHECK(a->buffer->name == "F");
  CHECK(a->layout == LayoutSpec{LayoutKind::RowGroups, 8, 4});
}

TEST_CASE("prints of values, elements and whole buffers round-trip with their text") {
  Var bx = makeVar("bx"), i = makeVar("i");
  Buffer S = makeBuffer("S", DType::Float16, {makeInt(4)}, MemScope::Shared);
  auto whole = std::make_shared<PrintStmt>(nullptr, S, "all \"quoted\" 100%", "dir/k.tl:9", SourceLoc{});
  auto value = std::make_shared<PrintStmt>(makeBinary(BinaryOp::Eq, vref(bx), makeInt(1)), nullptr, "", "", SourceLoc{});
  auto inLoop = std::make_shared<PrintStmt>(makeLoad(S, {vref(i)}), nullptr, "m", "k.tl:3", SourceLoc{});
  inLoop->iteration = {{"i", vref(i)}, {"for", makeInt(2)}};
  inLoop->element = "S";
  inLoop->index = {vref(i)};
  Stmt body = kernel({makeInt(2)}, {bx}, 32,
                     seq({alloc(S), whole, value, loop(i, makeInt(0), makeInt(4), ForKind::Parallel, inLoop)}));
  std::string text = checkRoundTrip(moduleOf(funcWithBody(body, {})), /*verify=*/true);
  for (const char* s : {"print(S, message=\"all \\\"quoted\\\" 100%\", at=\"dir/k.tl:9\")", "print(bx == 1)",
                        "print(S[i], message=\"m\", at=\"k.tl:3\", iteration=[\"i\": i, \"for\": 2], element=\"S\"[i])"}) {
    INFO(s);
    CHECK(text.find(s) != std::string::npos);
  }
}

TEST_CASE("asynchronous pipeline statements round-trip") {
  Var bx = makeVar("bx"), k = makeVar("k");
  Buffer A = makeBuffer("A", DType::Float16, {makeInt(64), makeInt(32)}, MemScope::Global);
  Buffer S = makeBuffer("S", DType::Float16, {makeInt(64)}, MemScope::Shared);
  Buffer T = makeBuffer("T", DType::Float16, {makeInt(64)}, MemScope::Shared);
  Stmt copies = seq({std::make_shared<const CopyStmt>(region(A, {{makeInt(0), makeInt(64)}, {vref(k), makeInt(1)}}),
                                                      fullRegion(S), SourceLoc{}, true),
                     std::make_shared<const CopyStmt>(region(A, {{makeInt(0), makeInt(64)}, {vref(k), makeInt(1)}}),
                                                      fullRegion(T), SourceLoc{}, true)});
  Stmt body = seq({std::make_shared<const AsyncWaitStmt>(1, SourceLoc{}),
                   std::make_shared<const VersionStmt>(std::vector<Buffer>{S, T}, floorMod(vref(k), makeInt(3)), copies,
                                                       SourceLoc{}),
                   std::make_shared<const AsyncCommitStmt>(SourceLoc{})});
  Stmt kernelBody = seq({std::make_shared<const AllocStmt>(S, SourceLoc{}, 3), std::make_shared<const AllocStmt>(T, SourceLoc{}, 3),
                         loop(k, makeInt(0), makeInt(32), ForKind::Serial, body),
                         std::make_shared<const AsyncWaitStmt>(0, SourceLoc{})});
  auto f = funcWithBody(kernel({makeInt(1)}, {bx}, 64, kernelBody), {{"A", A, nullptr, {}}});
  std::string text = checkRoundTrip(moduleOf(f), /*verify=*/true);
  for (const char* s : {"alloc S: shared float16[64] versions(3)", "wait_group(1)", "version(S, T) = k % 3 {",
                        "copy_async(A[0 : +64, k : +1], S)", "commit_group", "wait_group(0)"}) {
    INFO(s);
    CHECK(text.find(s) != std::string::npos);
  }
}

TEST_CASE("barriers and warp_specialize round-trip") {
  Var bx = makeVar("bx", DType::Int32);
  Var k = makeVar("k", DType::Int32);
  Var kl = makeVar("k_load", DType::Int32);
  Buffer A = makeBuffer("A", DType::Float16, {makeInt(64), makeInt(32)}, MemScope::Global);
  Buffer S = makeBuffer("S", DType::Float16, {makeInt(64)}, MemScope::Shared);
  Buffer full = makeBuffer("full", DType::UInt64, {makeInt(2)}, MemScope::Barrier);
  Buffer empty = makeBuffer("empty", DType::UInt64, {makeInt(2)}, MemScope::Barrier);
  auto stage = [](const Var& v) { return floorMod(vref(v), makeInt(2)); };
  auto parity = [](const Expr& round) { return floorMod(round, makeInt(2)); };
  Stmt producer = loop(
      kl, makeInt(0), makeInt(32), ForKind::Serial,
      seq({std::make_shared<const BarrierWaitStmt>(BarrierRef{empty, stage(kl)},
                                                   parity(add(floorDiv(vref(kl), makeInt(2)), makeInt(1))), SourceLoc{}),
           std::make_shared<const BarrierArriveStmt>(BarrierRef{full, stage(kl)}, makeInt(128), SourceLoc{}),
           std::make_shared<const VersionStmt>(
               std::vector<Buffer>{S}, stage(kl),
               std::make_shared<const CopyStmt>(region(A, {{makeInt(0), makeInt(64)}, {vref(kl), makeInt(1)}}),
                                                fullRegion(S), SourceLoc{}, true, BarrierRef{full, stage(kl)}),
               SourceLoc{})}));
  Stmt consumer = loop(k, makeInt(0), makeInt(32), ForKind::Serial,
                       seq({std::make_shared<const BarrierWaitStmt>(BarrierRef{full, stage(k)},
                                                                    parity(floorDiv(vref(k), makeInt(2))), SourceLoc{}),
                            std::make_shared<const BarrierArriveStmt>(BarrierRef{empty, stage(k)}, nullptr, SourceLoc{})}));
  Stmt kernelBody = seq({std::make_shared<const AllocStmt>(S, SourceLoc{}, 2),
                         std::make_shared<const AllocStmt>(full, SourceLoc{}, 1, 1),
                         std::make_shared<const AllocStmt>(empty, SourceLoc{}, 1, 1),
                         std::make_shared<const WarpSpecializeStmt>(128, producer, consumer, SourceLoc{})});
  auto f = funcWithBody(kernel({makeInt(1)}, {bx}, 64, kernelBody), {{"A", A, nullptr, {}}});
  std::string text = checkRoundTrip(moduleOf(f), /*verify=*/true);
  for (const char* s : {"alloc full: barrier uint64[2] arrivals(1)", "warp_specialize(producer_threads=128) {",
                        "barrier_wait(empty[k_load % 2], (floordiv(k_load, 2) + 1) % 2)",
                        "barrier_arrive(full[k_load % 2], expect_bytes=128)",
                        "copy_async(A[0 : +64, k_load : +1], S, barrier=full[k_load % 2])", "} consumer {",
                        "barrier_wait(full[k % 2], floordiv(k, 2) % 2)", "barrier_arrive(empty[k % 2])"}) {
    INFO(s);
    CHECK(text.find(s) != std::string::npos);
  }
}
