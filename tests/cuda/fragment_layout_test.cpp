// Layout inference for register fragments (cuda_fragment_layout.h): which
// fragments stay in registers, the row-group parameters chosen for them, and
// the layouts themselves checked by enumeration.
#include <doctest/doctest.h>

#include <set>

#include "compiler/backends/cuda/cuda_fragment_layout.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/ir/functor.h"
#include "tests/cuda/emit_util.h"

using namespace tlc;
using namespace tlc::cuda;

namespace {

class FindKernel : public ir::IRVisitor {
 public:
  const ir::KernelStmt* kernel = nullptr;
  std::unordered_map<std::string, const ir::BufferNode*> fragments;
  void visitKernel(const ir::KernelStmt* k) override {
    kernel = k;
    IRVisitor::visitKernel(k);
  }
  void visitAlloc(const ir::AllocStmt* a) override { fragments[a->buffer->name] = a->buffer.get(); }
};

struct Inferred {
  ir::Module module;
  FragmentLayoutPlan plan;
  std::unordered_map<std::string, const ir::BufferNode*> buffers;
  bool inRegisters(const std::string& name) const { return plan.buffers.count(buffers.at(name)) > 0; }
  const RegisterTile& tile(const std::string& name) const { return plan.buffers.at(buffers.at(name)); }
  std::string why(const std::string& name) const {
    auto it = plan.fallback.find(buffers.at(name));
    return it == plan.fallback.end() ? "" : it->second;
  }
};

Inferred infer(const std::string& source) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ir::Module module = test::compileTlSource(source, sources, diags);
  FindKernel find;
  find.visit(module.funcs[0]->body);
  REQUIRE(find.kernel);
  Inferred out{module, inferFragmentLayouts(*find.kernel, find.kernel->threads, {}), find.fragments};
  return out;
}

// Every element is held by exactly `copies` (thread, register) pairs and no
// pair holds two elements.
void checkCoverage(const layout::Fragment& f) {
  std::string why;
  CHECK_MESSAGE(f.isValid(&why), why);
  std::set<std::pair<int64_t, int64_t>> held;
  layout::forEachIndex(f.inputShape(), [&](const std::vector<int64_t>& idx) {
    for (int64_t rep = 0; rep < f.replicate(); ++rep) {
      int64_t t = f.threadOf(idx, rep);
      CHECK(t >= 0);
      CHECK(t < f.threadCount());
      CHECK(held.insert({t, f.registerOf(idx)}).second);
    }
  });
  int64_t elems = 1;
  for (auto e : f.inputShape()) elems *= e;
  CHECK((int64_t)held.size() == elems * f.replicate());
}

const char* kSoftmaxLike = R"(
def k[M, N, block_M=64, block_N=128](X: Tensor[(M, N), float16], Y: Tensor[(M, N), float16]):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        X_f = T.alloc_fragment((block_M, block_N), float32)
        m = T.alloc_fragment((block_M,), float32)
        m_prev = T.alloc_fragment((block_M,), float32)
        T.fill(m, -T.infinity(float32))
        T.copy(X[bx * block_M, 0], X_f)
        T.copy(m, m_prev)
        T.reduce_max(X_f, m, dim=1, clear=False)
        for i, j in T.Parallel(block_M, block_N):
            X_f[i, j] = X_f[i, j] - m[i]
        for i in T.Parallel(block_M):
            m_prev[i] = m_prev[i] - m[i]
        T.copy(X_f, Y[bx * block_M, 0])
)";

}  // namespace

TEST_CASE("a softmax-like kernel keeps its tile and row vectors in registers") {
  auto r = infer(kSoftmaxLike);
  REQUIRE(r.inRegisters("X_f"));
  REQUIRE(r.inRegisters("m"));
  REQUIRE(r.inRegisters("m_prev"));
  CHECK(r.tile("X_f").role == FragmentRole::Tile);
  CHECK(r.tile("m").role == FragmentRole::Rows);
  CHECK(r.tile("m_prev").role == FragmentRole::Rows);
  CHECK(r.tile("m").group == r.tile("X_f").group);
  const RegisterLayout& l = r.tile("X_f").layout;
  // float16 rows: 8-element (16-byte) runs; 8 threads per row read 128
  // contiguous bytes; 16 rows at a time, 4 per thread.
  CHECK(l.vector == 8);
  CHECK(l.group == 8);
  CHECK(l.rowsPerThread() == 4);
  CHECK(r.tile("X_f").registers() == 64);
  CHECK(r.tile("m").registers() == 4);
  CHECK(r.plan.nests.size() == 2);
}

TEST_CASE("row-group layouts place every element once (tiles) or once per replica (vectors)") {
  for (auto l : std::vector<RegisterLayout>{{64, 128, 128, 4, 8}, {4, 1024, 128, 32, 8}, {8, 64, 64, 8, 4},
                                            {32, 16, 128, 4, 4}, {16, 8, 32, 2, 1}, {2, 1024, 128, 64, 8},
                                            {1, 8192, 512, 512, 8}}) {
    CAPTURE(l.rows);
    CAPTURE(l.cols);
    checkCoverage(l.tile());
    checkCoverage(l.rowVector());
    checkCoverage(l.columnVector());
    // A row vector element is held by exactly the threads that hold its row of the tile.
    auto tile = l.tile(), rowv = l.rowVector(), colv = l.columnVector();
    for (int64_t i = 0; i < l.rows; ++i) {
      std::set<int64_t> tileThreads, vecThreads;
      for (int64_t j = 0; j < l.cols; ++j) tileThreads.insert(tile.threadOf({i, j}));
      for (int64_t rep = 0; rep < rowv.replicate(); ++rep) vecThreads.insert(rowv.threadOf({i}, rep));
      CHECK(tileThreads == vecThreads);
    }
    // Each thread's tile element (i, j) finds column element j in the same thread.
    for (int64_t i = 0; i < l.rows; ++i)
      for (int64_t j = 0; j < l.cols; ++j) {
        bool found = false;
        for (int64_t rep = 0; rep < colv.replicate(); ++rep) found |= colv.threadOf({j}, rep) == tile.threadOf({i, j});
        CHECK(found);
      }
    // Threads sharing a row are consecutive lanes of one warp (shuffle
    // groups), or whole consecutive warps when a row is wider than a warp.
    for (int64_t t = 0; t < l.threads; ++t) {
      if (l.group <= 32) CHECK(t / l.group * l.group / 32 == (t / 32));
      else CHECK(t / l.group == (t / 32) / (l.group / 32));
    }
  }
}

TEST_CASE("mma and MFMA accumulator layouts place every element once (tiles) or once per replica (vectors)") {
  // mma.sync over warps, then MFMA (32x32 and 16x16 blocks) over 64-lane wavefronts.
  for (auto l : std::vector<RegisterLayout>{RegisterLayout::mma(128, 128, 8, 1), RegisterLayout::mma(64, 32, 4, 1),
                                            RegisterLayout::mma(64, 64, 2, 2), RegisterLayout::mma(32, 64, 1, 4),
                                            RegisterLayout::mma(128, 64, 4, 2), RegisterLayout::mma(64, 64, 2, 1, 32),
                                            RegisterLayout::mma(64, 128, 1, 2, 32), RegisterLayout::mma(48, 32, 1, 1, 16),
                                            RegisterLayout::mma(32, 48, 2, 1, 16), RegisterLayout::mma(64, 32, 2, 2, 16),
                                            // wgmma warpgroups splitting the columns: warps numbered by column
                                            RegisterLayout::mma(64, 32, 4, 2, 0, true), RegisterLayout::mma(64, 512, 4, 2, 0, true),
                                            RegisterLayout::mma(128, 64, 8, 2, 0, true),
                                            // A-operand layouts of 8-bit (4 columns per lane and atom) and tf32 (1) elements
                                            RegisterLayout::mma(64, 64, 4, 1, 0, false, 4), RegisterLayout::mma(128, 128, 8, 1, 0, false, 4),
                                            RegisterLayout::mma(64, 32, 4, 1, 0, false, 1), RegisterLayout::mma(32, 16, 2, 1, 0, false, 1)}) {
    CAPTURE(l.mfma);
    CAPTURE(l.vector);
    CAPTURE(l.colMajor);
    CAPTURE(l.rows);
    CAPTURE(l.cols);
    CAPTURE(l.warpsM);
    CAPTURE(l.warpsN);
    checkCoverage(l.tile());
    checkCoverage(l.rowVector());
    checkCoverage(l.columnVector());
    auto tile = l.tile(), rowv = l.rowVector(), colv = l.columnVector();
    CHECK(tile.registersPerThread() == l.rowsPerThread() * l.colsPerThread());
    // A row vector element is held by exactly the threads that hold its row,
    // in the register of the thread's row; likewise for columns.
    for (int64_t i = 0; i < l.rows; ++i) {
      std::set<int64_t> tileThreads, vecThreads;
      for (int64_t j = 0; j < l.cols; ++j) tileThreads.insert(tile.threadOf({i, j}));
      for (int64_t rep = 0; rep < rowv.replicate(); ++rep) vecThreads.insert(rowv.threadOf({i}, rep));
      CHECK(tileThreads == vecThreads);
    }
    for (int64_t j = 0; j < l.cols; ++j) {
      std::set<int64_t> tileThreads, vecThreads;
      for (int64_t i = 0; i < l.rows; ++i) tileThreads.insert(tile.threadOf({i, j}));
      for (int64_t rep = 0; rep < colv.replicate(); ++rep) vecThreads.insert(colv.threadOf({j}, rep));
      CHECK(tileThreads == vecThreads);
    }
    // The emitter's loops (rowOf, colOf, tileRegister) enumerate each
    // thread's elements where the fragment puts them.
    for (int64_t t = 0; t < l.threads; ++t)
      for (int64_t ri = 0; ri < l.rowsPerThread(); ++ri)
        for (int64_t ch = 0; ch < l.chunksPerRow(); ++ch)
          for (int64_t v = 0; v < l.vector; ++v) {
            std::vector<std::pair<ir::Var, int64_t>> env;
            int64_t i = layout::evalIndex(l.rowOf(ir::makeInt(ri), ir::makeInt(t)), env);
            int64_t j = layout::evalIndex(l.colOf(ir::makeInt(ch), ir::makeInt(v), ir::makeInt(t)), env);
            int64_t reg = layout::evalIndex(l.tileRegister(ir::makeInt(ri), ir::makeInt(ch), ir::makeInt(v)), env);
            CHECK(tile.threadOf({i, j}) == t);
            CHECK(tile.registerOf({i, j}) == reg);
            // The gemm emitters' closed form agrees.
            auto [mi, mj] = mmaAccumulatorIndex(l.rows, l.cols, l.warpsM, l.warpsN, ir::makeInt(t), ir::makeInt(reg),
                                                l.mfma, l.colMajor, l.vector);
            CHECK(layout::evalIndex(mi, env) == i);
            CHECK(layout::evalIndex(mj, env) == j);
            CHECK(rowv.registerOf({i}) == ri);
            CHECK(colv.registerOf({j}) == ch * l.vector + v);
          }
    // As a gemm's A operand (one warp per 16 rows): register q of the
    // k-step at column kk packs the V elements of row g (+ 8 for odd q),
    // columns kk + (q / 2) 4V + V (lane % 4) .. + V - 1, the mma / wgmma A
    // fragment of the element type.
    if (!l.mfma && l.warpsN == 1 && l.rows == 16 * l.warpsM) {
      const int64_t V = l.vector;
      for (int64_t t = 0; t < l.threads; ++t)
        for (int64_t kk = 0; kk < l.cols; kk += 8 * V)
          for (int q = 0; q < 4; ++q)
            for (int64_t e = 0; e < V; ++e) {
              std::vector<std::pair<ir::Var, int64_t>> env;
              int64_t reg = layout::evalIndex(registerAOperand(0, l.cols / (4 * V), ir::makeInt(kk), q, V), env) + e;
              int64_t i = (t / 32) * 16 + (t % 32) / 4 + (q % 2) * 8, j = kk + (q / 2) * 4 * V + (t % 4) * V + e;
              CHECK(tile.threadOf({i, j}) == t);
              CHECK(tile.registerOf({i, j}) == reg);
            }
    }
    // One replica of each vector element owns it (writes it out).
    ir::Var tv = ir::makeVar("t");
    for (int64_t i = 0; i < l.rows; ++i) {
      int owners = 0;
      for (int64_t rep = 0; rep < rowv.replicate(); ++rep)
        owners += layout::evalIndex(l.rowVectorOwner(ir::makeVarRef(tv)), {{tv, rowv.threadOf({i}, rep)}}) != 0;
      CHECK(owners == 1);
    }
    for (int64_t j = 0; j < l.cols; ++j) {
      int owners = 0;
      for (int64_t rep = 0; rep < colv.replicate(); ++rep)
        owners += layout::evalIndex(l.columnVectorOwner(ir::makeVarRef(tv)), {{tv, colv.threadOf({j}, rep)}}) != 0;
      CHECK(owners == 1);
    }
    // Numbered by column, warpgroup g (warps 4g .. 4g + 3) holds 64 whole
    // rows of one column slice, as one wgmma m64nN computes them.
    if (l.colMajor)
      for (int64_t i = 0; i < l.rows; ++i)
        for (int64_t j = 0; j < l.cols; ++j) {
          int64_t group = tile.threadOf({i, j}) / 128, rowGroups = l.rows / 64;
          CHECK(group % rowGroups == i / 64);
          CHECK(group / rowGroups == j / (l.cols / l.warpsN));
        }
    // A row lies in consecutive lanes of one 32-lane half: the row reductions' shuffles.
    const int64_t S = l.rowLanes(64);
    if (l.mfma)
      for (int64_t i = 0; i < l.rows; ++i)
        for (int64_t rep = 0; rep < rowv.replicate(); ++rep)
          CHECK(rowv.threadOf({i}, rep) / S == rowv.threadOf({i}, rep - rep % S) / S);
  }
}

TEST_CASE("an rmsnorm-like kernel spreads each row over a warp and follows the columns with a column vector") {
  auto r = infer(R"(
def k[M, N=1024, block_M=4](X: Tensor[(M, N), float16], W: Tensor[(N,), float16], Y: Tensor[(M, N), float16]):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        X_f = T.alloc_fragment((block_M, N), float32)
        W_f = T.alloc_fragment((N,), float32)
        ss = T.alloc_fragment((block_M,), float32)
        T.copy(X[bx * block_M, 0], X_f)
        T.copy(W, W_f)
        T.reduce_sum(X_f, ss, dim=1)
        for i, j in T.Parallel(block_M, N):
            X_f[i, j] = X_f[i, j] * ss[i] * W_f[j]
        T.copy(X_f, Y[bx * block_M, 0])
)");
  REQUIRE(r.inRegisters("X_f"));
  CHECK(r.tile("W_f").role == FragmentRole::Columns);
  CHECK(r.tile("ss").role == FragmentRole::Rows);
  CHECK(r.tile("X_f").layout.group == 32);
  CHECK(r.tile("X_f").layout.rowsPerThread() == 1);
  CHECK(r.tile("W_f").registers() == 32);
}

TEST_CASE("wide column vectors take more threads per row when that saves registers; row vectors fewer") {
  // A per-column scale and bias of a short, wide tile: with the narrowest
  // G that reads 128 bytes per row (16 threads, runs of 8), each thread
  // holds 16 columns of each vector; with a warp per row, 8.
  // The kernel with vectors of `len` elements, indexed by `at` in the nest.
  auto kernel = [](const std::string& len, const std::string& at, const std::string& offset) {
    return "def k[M, N](X: Tensor[(M, N), float16], s: Tensor[(" + len + ",), float32], b: Tensor[(" + len +
           ",), float32],\n            Y: Tensor[(M, N), bfloat16]):\n"
           "    with T.Kernel(T.ceildiv(N, 256), T.ceildiv(M, 16), threads=256) as (bx, by):\n"
           "        x = T.alloc_fragment((16, 256), float16)\n"
           "        y = T.alloc_fragment((16, 256), bfloat16)\n"
           "        sv = T.alloc_fragment((" + (len == "N" ? "256" : "16") + ",), float32)\n"
           "        bv = T.alloc_fragment((" + (len == "N" ? "256" : "16") + ",), float32)\n"
           "        T.copy(X[by * 16, bx * 256], x)\n"
           "        T.copy(s[" + offset + "], sv)\n"
           "        T.copy(b[" + offset + "], bv)\n"
           "        for i, j in T.Parallel(16, 256):\n"
           "            y[i, j] = x[i, j] * sv[" + at + "] + bv[" + at + "]\n"
           "        T.copy(y, Y[by * 16, bx * 256])\n";
  };
  auto r = infer(kernel("N", "j", "bx * 256"));
  REQUIRE(r.inRegisters("x"));
  CHECK(r.tile("x").layout.group == 32);
  CHECK(r.tile("x").layout.vector == 8);
  CHECK(r.tile("sv").registers() == 8);
  CHECK(r.tile("x").registers() == 16);

  // The same tile with row vectors instead: the narrow G keeps them small.
  auto rows = infer(kernel("M", "i", "by * 16"));
  REQUIRE(rows.inRegisters("x"));
  CHECK(rows.tile("x").layout.group == 16);
  CHECK(rows.tile("sv").registers() == 1);
}

TEST_CASE("a row gets more than a warp only when fewer rows than warps leave no smaller choice") {
  const char* kRows = R"(
def k[M, N, block_M=BM, block_N=BN](X: Tensor[(M, N), float16], Y: Tensor[(M, N), float16]):
    with T.Kernel(T.ceildiv(M, block_M), threads=512) as bx:
        X_f = T.alloc_fragment((block_M, block_N), float32)
        s = T.alloc_fragment((block_M,), float32)
        T.copy(X[bx * block_M, 0], X_f)
        T.reduce_sum(X_f, s, dim=1)
        for i, j in T.Parallel(block_M, block_N):
            X_f[i, j] = X_f[i, j] / s[i]
        T.copy(X_f, Y[bx * block_M, 0])
)";
  auto withRows = [&](int rows, int cols) {
    std::string text = kRows;
    text.replace(text.find("BM"), 2, std::to_string(rows));
    text.replace(text.find("BN"), 2, std::to_string(cols));
    return text;
  };
  // One row over 512 threads: the row spans all 16 warps, 8 elements each.
  auto one = infer(withRows(1, 4096));
  REQUIRE(one.inRegisters("X_f"));
  CHECK(one.tile("X_f").layout.group == 512);
  CHECK(one.tile("X_f").registers() == 8);
  CHECK(one.tile("s").registers() == 1);
  // Four rows: four warps per row.
  auto four = infer(withRows(4, 4096));
  REQUIRE(four.inRegisters("X_f"));
  CHECK(four.tile("X_f").layout.group == 128);
  // Sixteen rows fill the 16 warps: a row stays within one warp.
  auto sixteen = infer(withRows(16, 2048));
  REQUIRE(sixteen.inRegisters("X_f"));
  CHECK(sixteen.tile("X_f").layout.group == 32);
}

TEST_CASE("a transposed access sends the whole group to shared memory") {
  auto r = infer(R"(
def k[M, block=32](X: Tensor[(M, block), float32], Y: Tensor[(M, block), float32]):
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        A = T.alloc_fragment((block, block), float32)
        B = T.alloc_fragment((block, block), float32)
        T.copy(X[bx * block, 0], A)
        for i, j in T.Parallel(block, block):
            B[i, j] = A[j, i]
        T.copy(B, Y[bx * block, 0])
)");
  CHECK_FALSE(r.inRegisters("A"));
  CHECK_FALSE(r.inRegisters("B"));
  CHECK(r.why("A").find("not indexed by the Parallel loop variables") != std::string::npos);
  CHECK(r.why("B").find("`A`") != std::string::npos);
  CHECK(r.plan.nests.empty());
}

TEST_CASE("reductions along the first dimension stay in registers; scalar accesses fall back") {
  auto r = infer(R"(
def k[M, block=32](X: Tensor[(M, block), float32], Y: Tensor[(M,), float32], Z: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        A = T.alloc_fragment((block, block), float32)
        s = T.alloc_fragment((block,), float32)
        C = T.alloc_fragment((block, block), float32)
        t = T.alloc_fragment((block,), float32)
        T.copy(X[bx * block, 0], A)
        T.reduce_sum(A, s, dim=0)
        T.copy(s, Y[bx * block])
        T.copy(X[bx * block, 0], C)
        T.reduce_sum(C, t, dim=1)
        t[0] = 1.0
        T.copy(t, Z[bx * block])
)");
  CHECK(r.inRegisters("A"));
  CHECK(r.inRegisters("s"));
  CHECK(r.tile("s").role == FragmentRole::Columns);
  // The row vector goes to shared memory; its reduction's source stays in
  // registers and writes it from there.
  CHECK(r.inRegisters("C"));
  CHECK_FALSE(r.inRegisters("t"));
  CHECK(r.why("t").find("outside a Parallel loop") != std::string::npos);
}

TEST_CASE("a row reduction of a register tile into shared memory keeps the tile in registers") {
  const char* source = R"(
def k[M](X: Tensor[(M, 512), float32], Y: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, 8), threads=256) as bx:
        A = T.alloc_fragment((8, 512), float32)
        s = T.alloc_shared((8,), float32)
        T.copy(X[bx * 8, 0], A)
        T.reduce_sum(A, s, dim=1)
        for i in T.serial(8):
            Y[bx * 8 + i] = s[i]
)";
  CHECK(infer(source).inRegisters("A"));
  std::string cu = test::emitCudaFor(source);
  // The first thread of each row writes the row's sum.
  CHECK(cu.find("if (tid % 32 == 0) s[") != std::string::npos);
}

TEST_CASE("groups that would need too many registers stay in shared memory") {
  auto r = infer(R"(
def k[M, N=8192, block_M=4](X: Tensor[(M, N), float32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        X_f = T.alloc_fragment((block_M, N), float32)
        T.copy(X[bx * block_M, 0], X_f)
        T.copy(X_f, Y[bx * block_M, 0])
)");
  CHECK_FALSE(r.inRegisters("X_f"));
  CHECK(r.why("X_f").find("registers per thread") != std::string::npos);
}

TEST_CASE("a block of at most 256 threads keeps one group over 128 registers when all groups fit 192") {
  // 64 rows of 128 values and of their indices on 128 threads: 64 + 64
  // registers, and the two row vectors' 4 each.
  auto kernel = [](int threads, int rows, int extra) {
    return "def k[M, N=128, block_M=" + std::to_string(rows) + "](X: Tensor[(M, N), float32], "
           "V: Tensor[(M,), float32], I: Tensor[(M,), int32]):\n"
           "    with T.Kernel(T.ceildiv(M, block_M), threads=" + std::to_string(threads) + ") as bx:\n"
           "        x = T.alloc_fragment((block_M, N), float32)\n"
           "        idx = T.alloc_fragment((block_M, N), int32)\n"
           "        m = T.alloc_fragment((block_M,), float32)\n"
           "        a = T.alloc_fragment((block_M,), int32)\n"
           "        T.copy(X[bx * block_M, 0], x)\n"
           "        T.reduce_max(x, m, dim=1)\n"
           "        for i, j in T.Parallel(block_M, N):\n"
           "            idx[i, j] = T.if_then_else(x[i, j] == m[i], j, N)\n"
           "        T.reduce_min(idx, a, dim=1)\n"
           "        for i in T.Parallel(block_M):\n"
           "            V[bx * block_M + i] = m[i]\n"
           "            I[bx * block_M + i] = a[i]\n" +
           (extra ? "        y = T.alloc_fragment((block_M, 4), float32)\n"
                    "        w = T.alloc_fragment((4, " + std::to_string(extra) + "), float32)\n"
                    "        T.copy(X[bx * block_M, 0], y)\n        T.copy(X[0, 0], w)\n"
                    "        for i, j in T.Parallel(block_M, 4):\n            y[i, j] = y[i, j] * 2.0\n"
                    "        for i, j in T.Parallel(4, " + std::to_string(extra) + "):\n            w[i, j] = w[i, j] + 1.0\n"
                    "        T.copy(y, X[bx * block_M, 0])\n        T.copy(w, X[0, 0])\n"
                  : "");
  };
  auto small = infer(kernel(128, 64, 0));
  for (const char* b : {"x", "idx", "m", "a"}) {
    CAPTURE(b);
    CHECK(small.inRegisters(b));
  }
  CHECK(small.plan.overLimit == 0);
  // 512 threads, 256 rows: the same 136 registers stay in shared memory.
  auto large = infer(kernel(512, 256, 0));
  CHECK_FALSE(large.inRegisters("x"));
  CHECK(large.why("x").find("136 registers per thread (at most 128)") != std::string::npos);
  // Other groups taking 64 registers leave 128: the 136 do not fit.
  auto crowded = infer(kernel(128, 64, 2048));
  CHECK(crowded.inRegisters("w"));
  CHECK_FALSE(crowded.inRegisters("x"));
}

TEST_CASE("padded row-group layouts place every element once, and only the slots in range hold one") {
  for (auto l : std::vector<RegisterLayout>{{4, 1000, 128, 32, 4}, {7, 33, 128, 16, 1}, {1, 1000, 128, 128, 4},
                                            {1000, 1, 128, 1, 1}, {100, 24, 128, 1, 8}, {7, 33, 128, 64, 1},
                                            {3, 40, 64, 16, 4}}) {
    CAPTURE(l.rows);
    CAPTURE(l.cols);
    CAPTURE(l.group);
    CHECK((l.paddedRows() || l.paddedColumns()));
    checkCoverage(l.tile());
    checkCoverage(l.rowVector());
    checkCoverage(l.columnVector());
    // Every (thread, register row, run) slot: in range exactly when its
    // position is inside the tile, and then the tile puts that element there.
    int64_t inside = 0;
    for (int64_t t = 0; t < l.threads; ++t)
      for (int64_t ri = 0; ri < l.rowsPerThread(); ++ri)
        for (int64_t ch = 0; ch < l.chunksPerRow(); ++ch) {
          std::vector<std::pair<ir::Var, int64_t>> env;
          int64_t i = layout::evalIndex(l.rowOf(ir::makeInt(ri), ir::makeInt(t)), env);
          int64_t j = layout::evalIndex(l.colOf(ir::makeInt(ch), ir::makeInt(0), ir::makeInt(t)), env);
          bool rowIn = layout::evalIndex(l.rowInRange(ir::makeInt(ri), ir::makeInt(t)), env) != 0;
          bool chunkIn = layout::evalIndex(l.chunkInRange(ir::makeInt(ch), ir::makeInt(t)), env) != 0;
          CHECK(rowIn == (i < l.rows));
          CHECK(chunkIn == (j < l.cols));
          if (!rowIn || !chunkIn) continue;
          inside += l.vector;
          CHECK(l.tile().threadOf({i, j}) == t);
          CHECK(l.tile().registerOf({i, j}) ==
                layout::evalIndex(l.tileRegister(ir::makeInt(ri), ir::makeInt(ch), ir::makeInt(0)), env));
        }
    CHECK(inside == l.rows * l.cols);
  }
}

TEST_CASE("tiles the threads do not divide take the padded layout with the fewest registers") {
  const char* kTile = R"(
def k[M, N](X: Tensor[(M, N), float32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(M, BM), threads=128) as bx:
        X_f = T.alloc_fragment((BM, BN), float32)
        T.copy(X[bx * BM, 0], X_f)
        for i, j in T.Parallel(BM, BN):
            X_f[i, j] = X_f[i, j] * 2.0
        T.copy(X_f, Y[bx * BM, 0])
)";
  auto withShape = [&](int rows, int cols) {
    std::string text = kTile;
    for (size_t at; (at = text.find("BM")) != std::string::npos;) text.replace(at, 2, std::to_string(rows));
    for (size_t at; (at = text.find("BN")) != std::string::npos;) text.replace(at, 2, std::to_string(cols));
    return text;
  };
  struct Expect {
    int rows, cols;
    int64_t group, vector, registers;
  };
  for (Expect e : std::vector<Expect>{{4, 1000, 32, 4, 32}, {7, 33, 16, 1, 3}, {1, 1000, 128, 4, 8}, {100, 24, 1, 4, 24}}) {
    CAPTURE(e.rows);
    CAPTURE(e.cols);
    auto r = infer(withShape(e.rows, e.cols));
    REQUIRE(r.inRegisters("X_f"));
    const RegisterLayout& l = r.tile("X_f").layout;
    CHECK(l.group == e.group);
    CHECK(l.vector == e.vector);
    CHECK(r.tile("X_f").registers() == e.registers);
  }
  // A tile some layout divides keeps it (no padding).
  auto even = infer(withShape(3, 128));
  REQUIRE(even.inRegisters("X_f"));
  CHECK(even.tile("X_f").layout.group == 128);
  CHECK(even.tile("X_f").layout.vector == 1);
  CHECK_FALSE(even.tile("X_f").layout.paddedRows());
  CHECK(even.plan.unfit.empty());
}

TEST_CASE("a group whose uses fit registers but no layout does is listed for the warning") {
  auto r = infer(R"(
def k[M, N](X: Tensor[(M, N), float32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
        X_f = T.alloc_fragment((128, 300), float32)
        T.copy(X[bx * 128, 0], X_f)
        T.copy(X_f, Y[bx * 128, 0])
)");
  CHECK_FALSE(r.inRegisters("X_f"));
  REQUIRE(r.plan.unfit.size() == 1);
  CHECK(r.plan.unfit[0].first == r.buffers.at("X_f"));
  CHECK(r.plan.unfit[0].second.find("use more threads or a smaller tile") != std::string::npos);
}
