// Row padding of shared buffers against bank conflicts
// (cuda_bank_conflicts.h): the conflict degree of sampled lane accesses, and
// the padding the emitted CUDA uses for transposed, row-wise and serial-loop
// accesses.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_bank_conflicts.h"
#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

// 32 lanes reading column `col` of rows 0..31 (transposed) or row 0 (row-wise).
cuda::LaneAccess lanes(bool transposed) {
  cuda::LaneAccess a;
  a.lanes.resize(32);
  for (int t = 0; t < 32; ++t) a.lanes[t] = transposed ? std::vector<int64_t>{t, 0} : std::vector<int64_t>{0, t};
  return a;
}

}  // namespace

TEST_CASE("bank conflict degree of 32 lanes, by hand") {
  std::vector<int64_t> shape = {32, 64};
  // float32 rows of 64 words: every row starts in bank 0.
  CHECK(cuda::bankConflictDegree(lanes(true), shape, 0, 4) == 32);
  // 16 bytes of padding: rows start 4 banks apart, 8 distinct banks.
  CHECK(cuda::bankConflictDegree(lanes(true), shape, 4, 4) == 4);
  // One word: rows start one bank apart.
  CHECK(cuda::bankConflictDegree(lanes(true), shape, 1, 4) == 1);
  CHECK(cuda::bankConflictDegree(lanes(false), shape, 0, 4) == 1);
  // float16: two lanes of a row share a word (a broadcast, no conflict).
  CHECK(cuda::bankConflictDegree(lanes(false), shape, 0, 2) == 1);
  // Inactive lanes do not count.
  cuda::LaneAccess few = lanes(true);
  for (int t = 2; t < 32; ++t) few.lanes[t].clear();
  CHECK(cuda::bankConflictDegree(few, shape, 0, 4) == 2);
}

TEST_CASE("the padding with the fewest conflicts is chosen, none on ties") {
  std::vector<int64_t> shape = {32, 64};
  CHECK(cuda::chooseRowPad({lanes(true)}, shape, 4, true) == 1);
  CHECK(cuda::chooseRowPad({lanes(true)}, shape, 4, false) == 4);
  CHECK(cuda::chooseRowPad({lanes(false)}, shape, 4, true) == 0);
  CHECK(cuda::chooseRowPad({}, shape, 4, true) == 0);
}

TEST_CASE("a shared tile read transposed in a Parallel loop gets padded rows") {
  std::string cu = test::emitCudaFor(R"(
def t[M, N](A: Tensor[(M, N), float32], B: Tensor[(N, M), float32]):
    with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 32), threads=128) as (bx, by):
        s = T.alloc_shared((32, 64), float32)
        T.copy(A[by * 32, bx * 64], s)
        for j, i in T.Parallel(64, 32):
            if bx * 64 + j < N and by * 32 + i < M:
                B[bx * 64 + j, by * 32 + i] = s[i, j]
)");
  CHECK(cu.find("s[((i * 65) + j)]") != std::string::npos);
  // The copy into the padded rows still loads 16 bytes from global memory.
  CHECK(cu.find("tlc::copy_vec<float, 4>(in_v,") != std::string::npos);
}

TEST_CASE("a shared tile read along its rows keeps its layout") {
  std::string cu = test::emitCudaFor(R"(
def t[M](A: Tensor[(M, 64), float32], B: Tensor[(M, 64), float32]):
    with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
        s = T.alloc_shared((32, 64), float32)
        T.copy(A[bx * 32, 0], s)
        for i, j in T.Parallel(32, 64):
            if bx * 32 + i < M:
                B[bx * 32 + i, j] = s[i, j] * 2.0
)");
  CHECK(cu.find("s[((i * 64) + j)]") != std::string::npos);
}

TEST_CASE("one row per thread walked by a serial loop gets padded rows") {
  std::string cu = test::emitCudaFor(R"(
def scan[M](X: Tensor[(M, 64), float32], Y: Tensor[(M, 64), float32]):
    with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
        s = T.alloc_shared((128, 64), float32)
        acc = T.alloc_fragment((128,), float32)
        T.clear(acc)
        T.copy(X[bx * 128, 0], s)
        for i in T.Parallel(128):
            for j in T.serial(64):
                acc[i] += s[i, j]
                s[i, j] = acc[i]
        T.copy(s, Y[bx * 128, 0])
)");
  CHECK(cu.find("s[((i * 65) + j)]") != std::string::npos);
}

TEST_CASE("gemm operands and pipelined tiles are not padded for bank conflicts") {
  std::string cu = test::emitCudaFor(R"(
def g[M, N, K](A: Tensor[(M, K), float16], B: Tensor[(K, N), float16], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
        A_s = T.alloc_shared((64, 32), float16)
        B_s = T.alloc_shared((32, 64), float16)
        C_f = T.alloc_fragment((64, 64), float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
            T.copy(A[by * 64, k * 32], A_s)
            T.copy(B[k * 32, bx * 64], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 64, bx * 64])
)", "sm_80");
  CHECK(cu.find("cp_async16") != std::string::npos);
}
