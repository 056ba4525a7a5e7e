// Lowering from `.tl` to the tile IR: each test compiles a small kernel and
// checks the printed IR (compiler/ir/printer.h) or the nodes themselves.
#include <doctest/doctest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "tests/sema/sema_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

// The printed IR of a kernel that must compile cleanly and verify.
std::string lowered(const std::string& src, const std::vector<Define>& defines = {}) {
  Compiled c = compileText(src, defines);
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  DiagnosticEngine verify(*c.sources);
  CHECK_MESSAGE(ir::verifyModule(*c.module, verify), verify.renderAll());
  return ir::printModule(*c.module);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("compile-time parameters fold; unbound ones become shape variables") {
  Compiled c = compileText(R"(
def k[M, N, block=32, half=block // 2, dtype=float16](A: Tensor[(M, N), dtype], n: int32):
    with T.Kernel(T.ceildiv(N, half)) as bx:
        F = T.alloc_fragment((half,), dtype)
        T.copy(A[0, bx * half], F)
)", {{"block", "64"}});
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  const ir::PrimFunc& f = c.func();
  REQUIRE(f.shapeVars.size() == 2);
  CHECK(f.shapeVars[0]->name == "M");
  CHECK(f.shapeVars[1]->name == "N");
  REQUIRE(f.bindings.size() == 3);
  CHECK(f.bindings[0].name == "block");
  CHECK(f.bindings[0].value == "64");
  CHECK(f.bindings[1].value == "32");
  CHECK(f.bindings[2].value == "float16");
  REQUIRE(f.params.size() == 2);
  CHECK(f.params[0].buffer);
  CHECK(f.params[1].scalar);
  CHECK(f.params[1].scalar->dtype == DType::Int32);
  auto allocs = collect<ir::AllocStmt>(f.body);
  REQUIRE(allocs.size() == 1);
  int64_t ext = 0;
  REQUIRE(ir::constInt(allocs[0]->buffer->shape[0], &ext));
  CHECK(ext == 32);
  auto copies = collect<ir::CopyStmt>(f.body);
  REQUIRE(copies.size() == 1);
  // A point source takes the destination's extents, aligned to its last dimension.
  CHECK(contains(ir::printModule(*c.module), "copy(A[0 : +1, bx * 32 : +32], F)"));
}

TEST_CASE("T.Parallel with two extents nests two parallel loops; stores convert to the buffer dtype") {
  std::string ir = lowered(R"(
def k[M](A: Tensor[(M, 16), float16]):
    with T.Kernel(1) as bx:
        F = T.alloc_fragment((4, 16), float32)
        for i, j in T.Parallel(4, 16):
            F[i, j] = i * 16 + j
)");
  CHECK(contains(ir, "for i in parallel(0 : +4)"));
  CHECK(contains(ir, "for j in parallel(0 : +16)"));
  CHECK(contains(ir, "F[i, j] = cast<float32>(i * 16 + j)"));
}

TEST_CASE("scalar bindings become lets; alloc_var reads and writes element 0") {
  std::string ir = lowered(R"(
def k[M](A: Tensor[(M,), float32], n: int32):
    with T.Kernel(4) as bx:
        base = bx * 64
        acc = T.alloc_var(float32, 0)
        for i in T.serial(n):
            acc += A[base + i]
        A[base] = acc
)");
  CHECK(contains(ir, "let base: int32 = bx * 64"));
  CHECK(contains(ir, "alloc acc: var float32[1]"));
  CHECK(contains(ir, "acc[0] = acc[0] + A[base + i]"));
  CHECK(contains(ir, "A[base] = acc[0]"));
}

TEST_CASE("literals adapt to the other operand; promotion otherwise") {
  Compiled c = compileText(R"(
def k[M](A: Tensor[(M,), float16], B: Tensor[(M,), int8], C: Tensor[(M,), float32]):
    with T.Kernel(1) as bx:
        a = A[0] * 2
        b = B[0] + 1
        d = A[0] + C[0]
        e = B[0] + A[0]
        C[0] = a + b + d + e
)");
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  auto lets = collect<ir::LetStmt>(c.func().body);
  REQUIRE(lets.size() == 4);
  CHECK(lets[0]->var->dtype == DType::Float16);
  CHECK(lets[1]->var->dtype == DType::Int8);
  CHECK(lets[2]->var->dtype == DType::Float32);
  CHECK(lets[3]->var->dtype == DType::Float16);
}

TEST_CASE("constant expressions fold, including math builtins and compile-time branches") {
  std::string ir = lowered(R"(
def k[M, block=64, use_exp=True](A: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(1000, block)) as bx:
        if use_exp:
            A[bx] = T.exp2(3) + T.max(2, 5) * 2 + (7 // -2) + (7 % -2) + T.abs(-3)
        else:
            A[bx] = 0.0
)");
  // ceildiv(1000, 64) = 16; exp2(3) + 5*2 + (-4) + (-1) + 3 = 16
  CHECK(contains(ir, "grid(16)"));
  CHECK(contains(ir, "A[bx] = 16.0"));
  CHECK(!contains(ir, "if "));
}

TEST_CASE("runtime conditions become if statements, select for conditional expressions") {
  std::string ir = lowered(R"(
def k[M](A: Tensor[(M,), float32], n: int32):
    with T.Kernel(4) as bx:
        if bx < n:
            A[bx] = 1.0 if bx % 2 == 0 else 2.0
        elif bx == n:
            A[bx] = T.if_then_else(n > 3, A[bx], -A[bx])
        else:
            pass
)");
  CHECK(contains(ir, "if bx < n"));
  CHECK(contains(ir, "select(bx % 2 == 0, 1.0, 2.0)"));
  CHECK(contains(ir, "if bx == n"));
}

TEST_CASE("tile operations carry regions, flags and the source location") {
  Compiled c = compileText(R"(
def k[M, N, K](A: Tensor[(M, K), float16], B: Tensor[(N, K), float16], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=256) as (bx, by):
        A_s = T.alloc_shared((64, 32), float16)
        B_s = T.alloc_shared((64, 32), float16)
        C_f = T.alloc_fragment((64, 64), float32)
        m = T.alloc_fragment((64,), float32)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2, order=[0, 1, 2], stage=[0, 0, 1]):
            T.copy(A[by * 64, k * 32], A_s)
            T.copy(B[bx * 64, k * 32], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True, clear_accum=k == 0)
        T.reduce_max(C_f, m, dim=-1, clear=False)
        T.atomic_add(C[by * 64, bx * 64], m[0])
        T.copy(C_f, C[by * 64, bx * 64])
)");
  INFO(c.rendered());
  // clear_accum must be a constant: `k == 0` is not.
  CHECK(!c.module.has_value());
  CHECK(c.diags->hasKind(DiagKind::NotCompileTimeConstant));

  c = compileText(R"(
def k[M, N, K](A: Tensor[(M, K), float16], B: Tensor[(N, K), float16], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=256) as (bx, by):
        A_s = T.alloc_shared((64, 32), float16)
        B_s = T.alloc_shared((64, 32), float16)
        C_f = T.alloc_fragment((64, 64), float32)
        m = T.alloc_fragment((64,), float32)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2, order=[0, 1, 2], stage=[0, 0, 1]):
            T.copy(A[by * 64, k * 32], A_s)
            T.copy(B[bx * 64, k * 32], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True)
        T.reduce_max(C_f, m, dim=-1, clear=False)
        T.atomic_add(C[by * 64, bx * 64], m[0])
        T.copy(C_f, C[by * 64, bx * 64])
)");
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  const ir::Stmt& body = c.func().body;
  auto kernels = collect<ir::KernelStmt>(body);
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0]->threads == 256);
  auto loops = collect<ir::ForStmt>(body);
  REQUIRE(loops.size() == 1);
  CHECK(loops[0]->numStages == 2);
  CHECK(loops[0]->order == std::vector<int64_t>{0, 1, 2});
  CHECK(loops[0]->stage == std::vector<int64_t>{0, 0, 1});
  auto gemms = collect<ir::GemmStmt>(body);
  REQUIRE(gemms.size() == 1);
  CHECK(!gemms[0]->transA);
  CHECK(gemms[0]->transB);
  CHECK(gemms[0]->loc.line == 11);
  CHECK(gemms[0]->loc.col == 13);
  auto reduces = collect<ir::ReduceStmt>(body);
  REQUIRE(reduces.size() == 1);
  CHECK(reduces[0]->dim == 1);
  CHECK(!reduces[0]->clear);
  CHECK(reduces[0]->reduceKind == ir::ReduceKind::Max);
  auto atomics = collect<ir::AtomicStmt>(body);
  REQUIRE(atomics.size() == 1);
  CHECK(atomics[0]->atomicKind == ir::AtomicKind::Add);
  CHECK(atomics[0]->buffer->name == "C");
  auto copies = collect<ir::CopyStmt>(body);
  REQUIRE(copies.size() == 3);
  CHECK(copies[0]->loc.line == 9);
  CHECK(copies[0]->src.buffer->name == "A");
  CHECK(copies[0]->src.ranges.size() == 2);
}

TEST_CASE("macros inline with arguments substituted; imports resolve stdlib modules") {
  std::string ir = lowered(R"(
import math
from math import square

macro scale_row(buf, i, s):
    for j in T.Parallel(8):
        buf[i, j] = buf[i, j] * s

def k[M](A: Tensor[(M, 8), float32]):
    with T.Kernel(4) as bx:
        F = T.alloc_fragment((4, 8), float32)
        T.copy(A[bx * 4, 0], F)
        scale_row(F, 1, square(F[0, 0]))
        scale_row(F, 2, math.log2e())
        T.copy(F, A[bx * 4, 0])
)");
  CHECK(contains(ir, "let x: float32 = F[0, 0]"));
  CHECK(contains(ir, "F[1, j] = F[1, j] * s"));
  CHECK(contains(ir, "* 1.4426950408889634"));
}

TEST_CASE("layout annotations lower to annotate_layout statements; layouts are values a macro can take") {
  Compiled c = compileText(R"(
macro registers(buf, layout):
    T.annotate_layout(buf, layout)

def k[M, G=8](A: Tensor[(M, 64), float16]):
    with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
        A_s = T.alloc_shared((64, 64), float16)
        B_s = T.alloc_shared((64, 64), float16)
        X_f = T.alloc_fragment((64, 64), float32)
        Y_f = T.alloc_fragment((64, 64), float32)
        T.annotate_layout(A_s, T.swizzled_layout())
        T.annotate_layout(buffer=B_s, layout=T.row_major_layout())
        groups = T.row_groups(G, 4)
        registers(X_f, groups)
        T.annotate_layout(Y_f, T.shared_fallback())
        T.copy(A[bx * 64, 0], A_s)
        T.copy(A_s, X_f)
        T.copy(X_f, Y_f)
        T.copy(Y_f, B_s)
        T.copy(B_s, A[bx * 64, 0])
)");
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  std::string ir = ir::printModule(*c.module);
  CHECK(contains(ir, "annotate_layout(A_s, swizzled)"));
  CHECK(contains(ir, "annotate_layout(B_s, row_major)"));
  CHECK(contains(ir, "annotate_layout(X_f, row_groups(8, 4))"));
  CHECK(contains(ir, "annotate_layout(Y_f, shared_fallback)"));
  auto annotations = collect<ir::AnnotateLayoutStmt>(c.func().body);
  REQUIRE(annotations.size() == 4);
  CHECK(annotations[2]->loc.line == 3);  // inside the macro, where the statement is written
}

TEST_CASE("range with a step binds the user variable from a hidden counter") {
  std::string ir = lowered(R"(
def k[M](A: Tensor[(M,), int32]):
    with T.Kernel(1) as bx:
        for i in range(10, 0, -3):
            A[i] = i
)");
  // 10, 7, 4, 1: four iterations.
  CHECK(contains(ir, "serial(0 : +4)"));
  CHECK(contains(ir, "10 + i_iter * -3"));
}

TEST_CASE("compileSource on broken input reports and returns nullopt, never throws") {
  for (const char* src : {"def", "def k[M](A: Tensor[(M,), float32]):\n    with T.Kernel(", "macro m(:\n",
                          "def k[](A: Tensor[(), float32]):\n    pass\n", "x += 1\n", "\t\n  def\n"}) {
    CAPTURE(src);
    Compiled c = compileText(src);
    CHECK(!c.module.has_value());
    CHECK(c.diags->hasErrors());
  }
}

TEST_CASE("every IR node of every example carries a source location") {
  struct LocChecker : ir::IRVisitor {
    std::vector<std::string> missing;
    void visit(const ir::Expr& e) override {
      if (!e->loc.known()) missing.push_back(std::string("expr ") + ir::exprKindName(e->kind) + ": " + ir::printExpr(e));
      ir::IRVisitor::visit(e);
    }
    void visit(const ir::Stmt& s) override {
      if (!s->loc.known()) missing.push_back(std::string("stmt ") + ir::stmtKindName(s->kind));
      ir::IRVisitor::visit(s);
    }
  };
  for (std::string rel : {"elementwise_add/add.tl", "gemm/gemm.tl", "softmax/softmax.tl", "rmsnorm/rmsnorm.tl",
                          "row_reduce/row_sum.tl"}) {
    CAPTURE(rel);
    Compiled c = compileFile(std::string(TLC_SOURCE_DIR) + "/examples/" + rel);
    REQUIRE(c.module.has_value());
    LocChecker check;
    const ir::PrimFunc& f = c.func();
    CHECK(f.loc.known());
    for (const ir::Param& p : f.params) {
      CHECK(p.loc.known());
      if (p.buffer)
        for (const ir::Expr& d : p.buffer->shape) check.visit(d);
    }
    check.visit(f.body);
    std::string list;
    for (const std::string& m : check.missing) list += "\n  " + m;
    CHECK_MESSAGE(check.missing.empty(), "nodes without a location:" << list);
  }
}

TEST_CASE("-D values parse as integers, floats, booleans and dtypes") {
  const char* src = R"(
def k[M, block=64, scale=1.0, flag=False, dtype=float16](A: Tensor[(M,), dtype]):
    with T.Kernel(T.ceildiv(M, block)) as bx:
        if flag:
            A[bx] = scale
)";
  Compiled c = compileText(src, {{"block", "0x20"}});
  CHECK(!c.module.has_value());  // hexadecimal is not a -D integer
  CHECK(c.diags->hasKind(DiagKind::BadDefine));

  c = compileText(src, {{"block", "32"}, {"scale", "2.5"}, {"flag", "True"}, {"dtype", "bfloat16"}});
  INFO(c.rendered());
  REQUIRE(c.module.has_value());
  std::string ir = ir::printModule(*c.module);
  CHECK(contains(ir, "bfloat16[M]"));
  CHECK(contains(ir, "A[bx] = 2.5"));
  const ir::PrimFunc& f = c.func();
  REQUIRE(f.bindings.size() == 4);
  CHECK(f.bindings[1].value == "2.5");
  CHECK(f.bindings[2].value == "True");
  CHECK(f.bindings[3].value == "bfloat16");
}

// Found by tlc_difftest (seeds 20951, 20081): a point's region depends on the
// tile and the indices only, never on whether a size is a constant.
TEST_CASE("a point's region is the same for constant and runtime sizes") {
  const std::string src = R"(
def k[M, N, bm=32, bn=1, bv=32](A: Tensor[(M, N), float32], B: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
        S = T.alloc_shared((bm, bn), float32)
        R = T.alloc_fragment((bv,), float32)
        T.copy(A[by * bm, bx * bn], S)
        T.copy(A[by * bm + 2, bx * bv], R)
        T.copy(S, B[by * bm, bx * bn])
        T.copy(R, B[by * bm + 2, bx * bv])
)";
  for (std::vector<Define> sizes : {std::vector<Define>{}, {{"M", "3"}, {"N", "7"}}}) {
    CAPTURE(sizes.size());
    std::string ir = lowered(src, sizes);
    // (bm, 1) from a 2-D point: dimension by dimension, though M = 3 < 32.
    CHECK(contains(ir, "copy(A[by * 32 : +32, bx : +1], S)"));
    CHECK(contains(ir, "copy(S, B[by * 32 : +32, bx : +1])"));
    // (32,) from A[by * bm + 2, bx * 32]: the tile-aligned dimension, though N = 7 < 32.
    CHECK(contains(ir, "copy(A[by * 32 + 2 : +1, bx * 32 : +32], R)"));
  }
}

TEST_CASE("T.Pipelined(warp_specialize=False) reaches the tile IR; the default prints nothing") {
  const std::string src = R"(
def k[N](A: Tensor[(N,), float16], B: Tensor[(N,), float16]):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64,), float16)
        for i in T.Pipelined(T.ceildiv(N, 64), num_stages=2, warp_specialize=WS):
            T.copy(A[i * 64], S)
            T.copy(S, B[i * 64])
)";
  std::string off = src, on = src;
  off.replace(off.find("WS"), 2, "False");
  on.replace(on.find("WS"), 2, "True");
  CHECK(contains(lowered(off), "num_stages=2, warp_specialize=false)"));
  std::string plain = lowered(on);
  CHECK(contains(plain, "num_stages=2)"));
  CHECK(!contains(plain, "warp_specialize"));
}
