// Elementwise loops, reductions, masked copies, fills and atomics in the
// interpreter, each against a reference written out in the test.
#include <doctest/doctest.h>

#include <tuple>

#include <cmath>

#include "compiler/interp/float_convert.h"
#include "compiler/interp/interpreter.h"
#include "ir_builders.h"

using namespace tlc;
using namespace tlc::interp;
using namespace tlc::testing;

namespace {

struct Run {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  bool ok = false;
  Run(const PrimFunc& f, std::vector<ArgValue> args) {
    ok = interpret(f, args, diags);
    INFO(diags.renderAll());
  }
};

PrimFunc func(std::string name, std::vector<Param> params, std::vector<Var> shapeVars, Stmt body) {
  PrimFunc f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.shapeVars = std::move(shapeVars);
  f.body = std::move(body);
  return f;
}

}  // namespace

TEST_CASE("elementwise: a Parallel loop over tiles with a bounds guard and math builtins") {
  // C[i] = exp(A[i]) * 0.5 + B[i] * alpha  for i < N, tiles of 32.
  Var N = makeVar("N"), bx = makeVar("bx"), i = makeVar("i"), alpha = makeVar("alpha", DType::Float32);
  Buffer A = makeBuffer("A", DType::Float32, {vref(N)}, MemScope::Global);
  Buffer B = makeBuffer("B", DType::Float32, {vref(N)}, MemScope::Global);
  Buffer C = makeBuffer("C", DType::Float32, {vref(N)}, MemScope::Global);
  Expr gi = add(mul(vref(bx), i32(32)), vref(i));
  Expr value = makeBinary(BinaryOp::Add,
                          makeBinary(BinaryOp::Mul, makeCall("exp", {makeLoad(A, {gi})}, DType::Float32), makeFloat(0.5)),
                          makeBinary(BinaryOp::Mul, makeLoad(B, {gi}), vref(alpha)));
  Stmt body = loop(i, i32(32), ifThen(lt(gi, vref(N)), store(C, {gi}, value)), ForKind::Parallel);
  PrimFunc f = func("axpy", {tensorParam(A), tensorParam(B), tensorParam(C), scalarParam(alpha)}, {N},
                    kernel({ceilDiv(vref(N), 32)}, {bx}, body));
  const int64_t n = 100;
  HostTensor a(DType::Float32, {n}), b(DType::Float32, {n}), c(DType::Float32, {n});
  fillRandom(a, 3);
  fillRandom(b, 4);
  Run r(f, {ArgValue::ofTensor(a), ArgValue::ofTensor(b), ArgValue::ofTensor(c), ArgValue::ofFloat(-1.5)});
  REQUIRE(r.ok);
  for (int64_t k = 0; k < n; ++k) {
    // Each operation rounds to float32, as the reference does here.
    float e = static_cast<float>(std::exp(static_cast<double>(static_cast<float>(a.get(k)))));
    float want = static_cast<float>(e * 0.5f) + static_cast<float>(static_cast<float>(b.get(k)) * -1.5f);
    CHECK(c.get(k) == doctest::Approx(want).epsilon(1e-7));
  }
}

TEST_CASE("elementwise float16 arithmetic rounds after every operation") {
  // out[0] = (x + y) - x with x = 1, y = 2^-12: in float16 x + y rounds to 1, so the result is 0.
  Buffer in = makeBuffer("in", DType::Float16, {i32(2)}, MemScope::Global);
  Buffer out = makeBuffer("out", DType::Float16, {i32(1)}, MemScope::Global);
  Var bx = makeVar("bx");
  Expr x = makeLoad(in, {i32(0)}), y = makeLoad(in, {i32(1)});
  Stmt body = store(out, {i32(0)}, makeBinary(BinaryOp::Sub, makeBinary(BinaryOp::Add, x, y), x));
  PrimFunc f = func("cancel", {tensorParam(in), tensorParam(out)}, {}, kernel({i32(1)}, {bx}, body));
  HostTensor ti(DType::Float16, {2}), to(DType::Float16, {1});
  ti.set(0, 1.0);
  ti.set(1, std::ldexp(1.0, -12));
  Run r(f, {ArgValue::ofTensor(ti), ArgValue::ofTensor(to)});
  REQUIRE(r.ok);
  CHECK(to.get(0) == 0.0);
}

TEST_CASE("integer arithmetic: floor division and modulo, wrapping, casts") {
  Buffer out = makeBuffer("out", DType::Int32, {i32(8)}, MemScope::Global);
  Buffer fout = makeBuffer("fout", DType::Float32, {i32(2)}, MemScope::Global);
  Var bx = makeVar("bx");
  auto bin = [](BinaryOp op, int64_t a, int64_t b, DType t = DType::Int32) {
    return makeBinary(op, makeInt(a, t), makeInt(b, t));
  };
  Stmt body = seq({
      store(out, {i32(0)}, bin(BinaryOp::FloorDiv, -7, 2)),
      store(out, {i32(1)}, bin(BinaryOp::FloorMod, -7, 2)),
      store(out, {i32(2)}, bin(BinaryOp::FloorMod, 7, -2)),
      store(out, {i32(3)}, makeCast(DType::Int32, bin(BinaryOp::Add, 127, 1, DType::Int8))),  // wraps
      store(out, {i32(4)}, makeCast(DType::Int32, makeFloat(-2.75))),
      store(out, {i32(5)}, makeCast(DType::Int32, makeFloat(1e20))),  // saturates
      store(out, {i32(6)}, makeCast(DType::Int32, makeCast(DType::Int8, makeInt(300)))),
      store(out, {i32(7)}, makeCall("ceildiv", {makeInt(-7), makeInt(2)}, DType::Int32)),
      store(fout, {i32(0)}, makeBinary(BinaryOp::FloorMod, makeFloat(-7.5), makeFloat(2.0))),
      store(fout, {i32(1)}, makeCall("max", {makeFloat(1.0), makeFloat(NAN)}, DType::Float32)),
  });
  PrimFunc f = func("ints", {tensorParam(out), tensorParam(fout)}, {}, kernel({i32(1)}, {bx}, body));
  HostTensor o(DType::Int32, {8}), fo(DType::Float32, {2});
  Run r(f, {ArgValue::ofTensor(o), ArgValue::ofTensor(fo)});
  REQUIRE(r.ok);
  CHECK(o.getInt(0) == -4);
  CHECK(o.getInt(1) == 1);
  CHECK(o.getInt(2) == -1);
  CHECK(o.getInt(3) == -128);
  CHECK(o.getInt(4) == -2);
  CHECK(o.getInt(5) == 2147483647LL);
  CHECK(o.getInt(6) == 44);
  CHECK(o.getInt(7) == -3);
  CHECK(fo.get(0) == 0.5);
  CHECK(std::isnan(fo.get(1)));
}

namespace {

// out[r] = reduce over the rows or columns of src (copied to a fragment first).
PrimFunc makeReduce(ReduceKind kind, int dim, bool clear, int64_t rows, int64_t cols) {
  Buffer src = makeBuffer("src", DType::Float32, {i32(rows), i32(cols)}, MemScope::Global);
  int64_t outLen = dim == 1 ? rows : cols;
  Buffer out = makeBuffer("out", DType::Float32, {i32(outLen)}, MemScope::Global);
  Buffer frag = makeBuffer("S", DType::Float32, {i32(rows), i32(cols)}, MemScope::Fragment);
  Buffer acc = makeBuffer("acc", DType::Float32, {i32(outLen)}, MemScope::Fragment);
  Var bx = makeVar("bx");
  Stmt body = seq({
      alloc(frag), alloc(acc), copy(fullRegion(src), fullRegion(frag)), copy(fullRegion(out), fullRegion(acc)),
      std::make_shared<const ReduceStmt>(kind, fullRegion(frag), fullRegion(acc), dim, clear, SourceLoc{}),
      copy(fullRegion(acc), fullRegion(out)),
  });
  PrimFunc f;
  f.name = "reduce";
  f.params = {tensorParam(src), tensorParam(out)};
  f.body = kernel({i32(1)}, {bx}, body);
  return f;
}

double reduceRef(ReduceKind kind, const std::vector<double>& xs, double init, bool clear) {
  double acc = clear ? (kind == ReduceKind::Max ? -INFINITY : kind == ReduceKind::Min ? INFINITY : 0.0) : init;
  for (double x : xs) {
    switch (kind) {
      case ReduceKind::Sum: acc += x; break;
      case ReduceKind::AbsSum: acc += std::fabs(x); break;
      case ReduceKind::Max: acc = std::max(acc, x); break;
      case ReduceKind::Min: acc = std::min(acc, x); break;
      case ReduceKind::AbsMax: acc = std::max(acc, std::fabs(x)); break;
    }
  }
  return acc;
}

}  // namespace

TEST_CASE("reductions: all five kinds, both dimensions, with and without clear") {
  const int64_t rows = 5, cols = 7;
  for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::AbsSum, ReduceKind::AbsMax})
    for (int dim : {0, 1})
      for (bool clear : {true, false}) {
        CAPTURE(reduceKindName(kind));
        CAPTURE(dim);
        CAPTURE(clear);
        PrimFunc f = makeReduce(kind, dim, clear, rows, cols);
        HostTensor src(DType::Float32, {rows, cols});
        fillRandom(src, 11);
        int64_t outLen = dim == 1 ? rows : cols;
        HostTensor out(DType::Float32, {outLen});
        for (int64_t o = 0; o < outLen; ++o) out.set(o, 0.25 * static_cast<double>(o) - 0.6);
        HostTensor before = out;
        Run r(f, {ArgValue::ofTensor(src), ArgValue::ofTensor(out)});
        REQUIRE(r.ok);
        for (int64_t o = 0; o < outLen; ++o) {
          std::vector<double> xs;
          for (int64_t j = 0; j < (dim == 1 ? cols : rows); ++j) xs.push_back(dim == 1 ? src.get(o * cols + j) : src.get(j * cols + o));
          double want = static_cast<float>(reduceRef(kind, xs, before.get(o), clear));
          CHECK(out.get(o) == doctest::Approx(want).epsilon(1e-6));
        }
      }
}

TEST_CASE("copy: out-of-bounds source elements read as zero, out-of-bounds destination writes are dropped") {
  // A is 5x7; copy the 4x4 window at (3, 5) into a 4x4 tile, then the tile back to B at (3, 5).
  Buffer A = makeBuffer("A", DType::Float32, {i32(5), i32(7)}, MemScope::Global);
  Buffer B = makeBuffer("B", DType::Float16, {i32(5), i32(7)}, MemScope::Global);
  Buffer T = makeBuffer("T", DType::Float32, {i32(4), i32(4)}, MemScope::Shared);
  Buffer W = makeBuffer("W", DType::Float32, {i32(4), i32(4)}, MemScope::Global);
  Var bx = makeVar("bx");
  Stmt body = seq({
      alloc(T),
      copy(region(A, {i32(3), i32(5)}, {4, 4}), fullRegion(T)),
      copy(fullRegion(T), fullRegion(W)),
      copy(fullRegion(T), region(B, {i32(3), i32(5)}, {4, 4})),  // cast to float16, edges dropped
  });
  PrimFunc f = func("window", {tensorParam(A), tensorParam(B), tensorParam(W)}, {}, kernel({i32(1)}, {bx}, body));
  HostTensor a(DType::Float32, {5, 7}), b(DType::Float16, {5, 7}), w(DType::Float32, {4, 4});
  fillRandom(a, 5);
  for (int64_t k = 0; k < b.numel(); ++k) b.set(k, 42.0);
  Run r(f, {ArgValue::ofTensor(a), ArgValue::ofTensor(b), ArgValue::ofTensor(w)});
  REQUIRE(r.ok);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      bool inside = 3 + i < 5 && 5 + j < 7;
      CHECK(w.get(i * 4 + j) == (inside ? a.get((3 + i) * 7 + 5 + j) : 0.0));
    }
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 7; ++j) {
      bool written = i >= 3 && j >= 5;
      double want = written ? roundToFloatDType(a.get(i * 7 + j), DType::Float16) : 42.0;
      CHECK(b.get(i * 7 + j) == want);
    }
}

TEST_CASE("copy pairs elements in row-major order once unit dimensions are dropped") {
  // A row of a 2-D tensor into a 1-D buffer.
  Buffer A = makeBuffer("A", DType::Int32, {i32(3), i32(4)}, MemScope::Global);
  Buffer R = makeBuffer("R", DType::Int32, {i32(4)}, MemScope::Global);
  Var bx = makeVar("bx");
  PrimFunc f = func("row", {tensorParam(A), tensorParam(R)}, {},
                    kernel({i32(1)}, {bx}, copy(region(A, {i32(2), i32(0)}, {1, 4}), fullRegion(R))));
  HostTensor a(DType::Int32, {3, 4}), rr(DType::Int32, {4});
  for (int64_t k = 0; k < 12; ++k) a.setInt(k, k * 10);
  Run r(f, {ArgValue::ofTensor(a), ArgValue::ofTensor(rr)});
  REQUIRE(r.ok);
  for (int64_t k = 0; k < 4; ++k) CHECK(rr.getInt(k) == 80 + 10 * k);
}

TEST_CASE("atomics: every block adds into a shared total, and max/min keep the extremes") {
  // Block b adds x[b] to sum[b % 3], and folds x[b] into mx[0] / mn[0].
  const int64_t blocks = 16;
  Buffer X = makeBuffer("X", DType::Float32, {i32(blocks)}, MemScope::Global);
  Buffer S = makeBuffer("sum", DType::Float32, {i32(3)}, MemScope::Global);
  Buffer MX = makeBuffer("mx", DType::Float32, {i32(1)}, MemScope::Global);
  Buffer MN = makeBuffer("mn", DType::Int32, {i32(1)}, MemScope::Global);
  Var bx = makeVar("bx");
  Expr xb = makeLoad(X, {vref(bx)});
  auto atomic = [](AtomicKind k, const Buffer& b, Expr idx, Expr v) {
    return std::make_shared<const AtomicStmt>(k, b, std::vector<Expr>{std::move(idx)}, std::move(v), SourceLoc{});
  };
  Stmt body = seq({
      atomic(AtomicKind::Add, S, floorMod(vref(bx), i32(3)), xb),
      atomic(AtomicKind::Max, MX, i32(0), xb),
      atomic(AtomicKind::Min, MN, i32(0), makeCast(DType::Int32, makeBinary(BinaryOp::Mul, xb, makeFloat(100.0)))),
  });
  PrimFunc f = func("atomics", {tensorParam(X), tensorParam(S), tensorParam(MX), tensorParam(MN)}, {},
                    kernel({i32(blocks)}, {bx}, body));
  HostTensor x(DType::Float32, {blocks}), s(DType::Float32, {3}), mx(DType::Float32, {1}), mn(DType::Int32, {1});
  fillRandom(x, 9);
  mx.set(0, -10.0);
  mn.setInt(0, 1000);
  Run r(f, {ArgValue::ofTensor(x), ArgValue::ofTensor(s), ArgValue::ofTensor(mx), ArgValue::ofTensor(mn)});
  REQUIRE(r.ok);
  double sums[3] = {0, 0, 0}, best = -10.0;
  int64_t least = 1000;
  for (int64_t b = 0; b < blocks; ++b) {
    sums[b % 3] = static_cast<float>(sums[b % 3] + x.get(b));
    best = std::max(best, x.get(b));
    least = std::min<int64_t>(least, static_cast<int64_t>(static_cast<float>(x.get(b) * 100.0f)));
  }
  for (int k = 0; k < 3; ++k) CHECK(s.get(k) == doctest::Approx(sums[k]).epsilon(1e-6));
  CHECK(mx.get(0) == best);
  CHECK(mn.getInt(0) == least);
}

TEST_CASE("Let, If/else, Select and 3-D grids") {
  // out[bz, by, bx] = (bx + 10*by + 100*bz) if odd else -1, through a Let.
  Buffer out = makeBuffer("out", DType::Int64, {i32(2), i32(3), i32(4)}, MemScope::Global);
  Var bx = makeVar("bx"), by = makeVar("by"), bz = makeVar("bz"), v = makeVar("v", DType::Int64);
  Expr id = makeCast(DType::Int64, add(add(vref(bx), mul(vref(by), i32(10))), mul(vref(bz), i32(100))));
  Stmt body = std::make_shared<const LetStmt>(
      v, id,
      ifThen(makeBinary(BinaryOp::Eq, floorMod(vref(v), makeInt(2, DType::Int64)), makeInt(1, DType::Int64)),
             store(out, {vref(bz), vref(by), vref(bx)}, makeSelect(makeBool(true), vref(v), makeInt(0, DType::Int64))),
             store(out, {vref(bz), vref(by), vref(bx)}, makeInt(-1, DType::Int64))),
      SourceLoc{});
  PrimFunc f = func("grid3", {tensorParam(out)}, {}, kernel({i32(4), i32(3), i32(2)}, {bx, by, bz}, body));
  HostTensor o(DType::Int64, {2, 3, 4});
  Run r(f, {ArgValue::ofTensor(o)});
  REQUIRE(r.ok);
  for (int64_t z = 0; z < 2; ++z)
    for (int64_t y = 0; y < 3; ++y)
      for (int64_t x = 0; x < 4; ++x) {
        int64_t idv = x + 10 * y + 100 * z;
        CHECK(o.getInt((z * 3 + y) * 4 + x) == (idv % 2 == 1 ? idv : -1));
      }
}

TEST_CASE("int32 and int64 overflow is reported as undefined behaviour, at the operation") {
  for (auto [t, a, b, op] : {std::tuple{DType::Int32, int64_t(2147483647), int64_t(1), BinaryOp::Add},
                             {DType::Int32, int64_t(50000), int64_t(50000), BinaryOp::Mul},
                             {DType::Int64, int64_t(-9223372036854775807LL - 1), int64_t(1), BinaryOp::Sub}}) {
    CAPTURE(dtypeName(t));
    Buffer out = makeBuffer("out", t, {i32(1)}, MemScope::Global);
    Var bx = makeVar("bx");
    Stmt body = store(out, {i32(0)}, makeBinary(op, makeInt(a, t), makeInt(b, t)));
    PrimFunc f = func("over", {tensorParam(out)}, {}, kernel({i32(1)}, {bx}, body));
    HostTensor o(t, {1});
    Run r(f, {ArgValue::ofTensor(o)});
    CHECK_FALSE(r.ok);
    std::string rendered = r.diags.renderAll();
    CHECK(rendered.find("[undefined-behavior]") != std::string::npos);
    CHECK(rendered.find(std::string(dtypeName(t)) + " overflow") != std::string::npos);
  }
}
