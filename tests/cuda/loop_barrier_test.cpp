// Barriers between iterations of a serial loop: a loop whose iterations
// write disjoint parts of a global tensor (the region moves by at least its
// extent each iteration) and never read it needs none; overlapping regions
// or a tensor the loop also reads keep one.
#include <doctest/doctest.h>

#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

std::string emit(const std::string& source) { return test::emitCudaFor(source); }

size_t barriers(const std::string& text) {
  size_t n = 0;
  for (size_t at = text.find("__syncthreads"); at != std::string::npos; at = text.find("__syncthreads", at + 1)) ++n;
  return n;
}

// A row-streaming loop: SRC is the tensor read, COL the column of the tile written.
std::string streaming(const std::string& src, const std::string& col) {
  std::string text = R"(
def k[M, N, block=128](X: Tensor[(M, N), float32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:
        A = T.alloc_fragment((4, block), float32)
        for k in T.serial(T.ceildiv(N, block)):
            T.copy(SRC[bx * 4, k * block], A)
            for i, j in T.Parallel(4, block):
                A[i, j] = A[i, j] * 2.0
            T.copy(A, Y[bx * 4, COL])
)";
  text.replace(text.find("SRC"), 3, src);
  text.replace(text.find("COL"), 3, col);
  return text;
}

}  // namespace

TEST_CASE("iterations writing disjoint tiles of a tensor need no barrier") {
  CHECK(barriers(emit(streaming("X", "k * block"))) == 0);
  // The region's start may also carry terms that do not change in the loop.
  CHECK(barriers(emit(streaming("X", "bx + k * block * 2 + 3"))) == 0);
}

TEST_CASE("overlapping tiles from one iteration to the next keep the barrier") {
  CHECK(barriers(emit(streaming("X", "k * 64"))) == 1);
  CHECK(barriers(emit(streaming("X", "(k * block) // 2"))) == 1);
}

TEST_CASE("a loop that reads the tensor it writes keeps the barrier") {
  CHECK(barriers(emit(streaming("Y", "k * block"))) >= 1);
}

TEST_CASE("a serial loop reading what came before waits once, before the loop") {
  std::string cu = emit(R"(
def k[M](X: Tensor[(M, 512), float32], Y: Tensor[(M,), float32]):
    with T.Kernel(M, threads=128) as bx:
        x = T.alloc_fragment((8, 64), float32)
        part = T.alloc_fragment((8,), float32)
        s = T.alloc_var(float32, 0.0)
        T.copy(X[bx, 0], x)
        T.reduce_sum(x, part, dim=1)
        for i in T.serial(8):
            s += part[i]
        Y[bx] = s
)");
  size_t loop = cu.find("for (int i = 0; i < 8; ++i)");
  REQUIRE(loop != std::string::npos);
  size_t end = cu.find("}", loop);
  CHECK(cu.substr(loop, end - loop).find("__syncthreads") == std::string::npos);
  CHECK(cu.rfind("__syncthreads", loop) != std::string::npos);
}

TEST_CASE("a tile loaded by cp.async in a serial loop is waited for, and not overwritten while it is read") {
  // The loop writes the tensor its copy reads, so it stays serial
  // (cuda-auto-pipeline); the copy is issued as cp.async (cuda-async-copies).
  std::string source = R"(
def k[M, N](X: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(M, 8), threads=128) as bx:
        S = T.alloc_shared((8, 128), float32)
        for k in T.serial(T.ceildiv(N, 128)):
            T.copy(X[bx * 8, k * 128], S)
            for i, j in T.Parallel(8, 128):
                X[bx * 8 + i, k * 128 + j] = S[i, (j + 1) % 128] * 2.0
)";
  std::string cu = emit(source);
  INFO(cu);
  CHECK(cu.find("tlc::cp_async16(") != std::string::npos);
  // The wait, then the barrier that makes the tile visible to every thread.
  size_t commit = cu.find("tlc::cp_async_commit();"), wait = cu.find("tlc::cp_async_wait<0>();", commit);
  REQUIRE(wait != std::string::npos);
  CHECK(cu.find("__syncthreads();", wait) < cu.find("S[", wait));
  // The next iteration's copy writes the tile the Parallel nest reads: a
  // second barrier at the end of the iteration.
  CHECK(barriers(cu) == 2);
  // Without the pass the copy moves through registers, with the same barriers.
  cuda::CudaOptions sync;
  sync.arch = "sm_90a";
  sync.asyncStandaloneCopies = false;
  std::string plain = test::generateCudaFor(source, sync)->source;
  CHECK(plain.find("cp_async") == std::string::npos);
  CHECK(barriers(plain) == 2);
}

TEST_CASE("a tile in flight keeps its shared bytes until its wait, even when nothing reads it") {
  // D_s is copied and never read; C_s, written by the Parallel nest that
  // runs while the copy lands, may not take D_s's bytes.
  std::string cu = emit(R"(
def k[M, N](A: Tensor[(M, N), int32], D: Tensor[(M, N), int32], C: Tensor[(M, N), int32]):
    with T.Kernel(T.ceildiv(N, 16), T.ceildiv(M, 32), threads=32) as (bx, by):
        A_s = T.alloc_shared((32, 16), int32)
        T.copy(A[by * 32, bx * 16], A_s)
        D_s = T.alloc_shared((32, 16), int32)
        T.copy(D[by * 32, bx * 16], D_s)
        C_s = T.alloc_shared((32, 16), int32)
        for i, j in T.Parallel(32, 16):
            C_s[i, j] = A_s[i, j] + 1
        T.copy(C_s, C[by * 32, bx * 16])
)");
  INFO(cu);
  auto offset = [&](const std::string& name) {
    size_t at = cu.find(name + " = reinterpret_cast<int*>(tlc_smem + ");
    REQUIRE(at != std::string::npos);
    return std::stol(cu.substr(cu.find("tlc_smem + ", at) + 11));
  };
  CHECK(offset("D_s") != offset("C_s"));
}
