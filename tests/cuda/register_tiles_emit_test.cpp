// The CUDA C emitted for register fragments: no shared memory and no barrier
// for them, row reductions by shuffles, whole-tile vector loads, and the next
// tile of a streaming loop loaded one iteration ahead.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

std::string emit(const std::string& source) { return test::emitCudaFor(source); }

using test::exampleSource;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("softmax runs from registers: a row per block, reductions across its warps, three blocks per SM") {
  std::string cu = emit(exampleSource("examples/softmax/softmax.tl"));
  CHECK(cu.find("float X_f[32];") != std::string::npos);
  CHECK(cu.find("// `X_f`: registers, tile of a row-group layout (256 threads per row, runs of 8)") != std::string::npos);
  CHECK(cu.find("// `m`: registers, row vector of a row-group layout") != std::string::npos);
  CHECK(cu.find("float m[1];") != std::string::npos);
  // Each row reduction: shuffles within the 8 warps, one partial result per
  // warp in shared memory (the two reductions in the two halves of the
  // scratch), a barrier between the writes and the reads. The iterations
  // need no barrier of their own: the next iteration writes each half after
  // the other reduction's barrier, which follows this one's reads of it. The
  // second loop's stores to Y (disjoint tiles from one iteration to the next)
  // need none either.
  CHECK(count(cu, "tlc::group_allreduce<32>") == 2);
  CHECK(count(cu, "if (tid % 32 == 0) row_partial") == 2);
  CHECK(count(cu, "for (int w = 1; w < 8; ++w)") == 2);
  CHECK(count(cu, "__syncthreads") == 2);
  // Loading the next tile one iteration ahead would leave registers for two
  // blocks of 256 threads per SM; without it three fit, and the kernel asks
  // for three and loads each tile in its own iteration.
  CHECK(cu.find("__launch_bounds__(256, 3)") != std::string::npos);
  CHECK(count(cu, "X_f_next") == 0);
  // The output row is stored as 16-byte vectors.
  CHECK(cu.find("tlc::copy_vec<__half, 8>(run_ptr") != std::string::npos);
}

TEST_CASE("a tile of 64 rows keeps 8 threads per row and reduces by shuffles only") {
  std::string source = exampleSource("examples/softmax/softmax.tl");
  std::string from = "block_M=1, block_N=8192, threads=256", to = "block_M=64, block_N=128, threads=128";
  REQUIRE(source.find(from) != std::string::npos);
  source.replace(source.find(from), from.size(), to);
  std::string cu = emit(source);
  CHECK(cu.find("float X_f[64];") != std::string::npos);
  CHECK(cu.find("(8 threads per row, runs of 8)") != std::string::npos);
  CHECK(count(cu, "tlc::group_allreduce<8>") == 2);
  CHECK(count(cu, "__syncthreads") == 0);
  CHECK(cu.find("tlc_smem +") == std::string::npos);
}

TEST_CASE("rmsnorm keeps rows, weights and the sum of squares in registers") {
  std::string cu = emit(exampleSource("examples/rmsnorm/rmsnorm.tl"));
  CHECK(cu.find("float W_f[32];") != std::string::npos);
  CHECK(cu.find("float ss[1];") != std::string::npos);
  CHECK(count(cu, "__syncthreads") == 0);
  CHECK(cu.find("tlc_smem +") == std::string::npos);
  CHECK(count(cu, "tlc::group_allreduce<32>") == 1);
  // The weights are loaded as 16-byte vectors too.
  CHECK(count(cu, "tlc::copy_vec<__half, 8>") >= 3);
}

TEST_CASE("a fragment read transposed stays in shared memory behind barriers") {
  std::string cu = emit(R"(
def k[M, block=32](X: Tensor[(M, block), float32], Y: Tensor[(M, block), float32]):
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        A = T.alloc_fragment((block, block), float32)
        B = T.alloc_fragment((block, block), float32)
        T.copy(X[bx * block, 0], A)
        for i, j in T.Parallel(block, block):
            B[i, j] = A[j, i]
        T.copy(B, Y[bx * block, 0])
)");
  CHECK(cu.find("float* A = reinterpret_cast<float*>(tlc_smem") != std::string::npos);
  CHECK(cu.find("float* B = reinterpret_cast<float*>(tlc_smem") != std::string::npos);
  CHECK(count(cu, "__syncthreads") >= 2);
  // The generated code says why.
  CHECK(cu.find("// `A`: shared memory (an access that is not indexed by the Parallel loop variables in order)") !=
        std::string::npos);
}

TEST_CASE("a loop that writes the tensor it streams from does not load ahead") {
  const char* inPlace = R"(
def k[M, N, block_M=16, block_N=64](X: Tensor[(M, N), float16]):
    with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
        F = T.alloc_fragment((block_M, block_N), float32)
        for k in T.serial(T.ceildiv(N, block_N)):
            T.copy(X[bx * block_M, k * block_N], F)
            for i, j in T.Parallel(block_M, block_N):
                F[i, j] = F[i, j] * 2.0
            T.copy(F, X[bx * block_M, k * block_N])
)";
  std::string cu = emit(inPlace);
  CHECK(cu.find("float F[16];") != std::string::npos);
  CHECK(cu.find("F_next") == std::string::npos);
  // The same loop reading another tensor does.
  std::string other = inPlace;
  other.replace(other.find("(X: Tensor[(M, N), float16])"), 28, "(X: Tensor[(M, N), float16], Y: Tensor[(M, N), float16])");
  other.replace(other.rfind("T.copy(F, X["), 12, "T.copy(F, Y[");
  CHECK(emit(other).find("unsigned F_next") != std::string::npos);
}

TEST_CASE("a pipelined loop loads a register tile from global memory one iteration ahead, beside its shared stages") {
  const char* source = R"(
def k[M, N, K, block_N=8, block_K=128](A: Tensor[(M, K), float16], B: Tensor[(N, K), uint8], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), M, threads=128) as (bx, by):
        B_f = T.alloc_fragment((block_N, block_K), uint8)
        A_s = T.alloc_shared((1, block_K), float16)
        acc = T.alloc_fragment((block_N, block_K), float32)
        part = T.alloc_fragment((block_N,), float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(B[bx * block_N, k * block_K], B_f)
            T.copy(A[by, k * block_K], A_s)
            for i, j in T.Parallel(block_N, block_K):
                acc[i, j] += T.cast(A_s[0, j], float32) * T.cast(B_f[i, j], float32)
        T.reduce_sum(acc, part, dim=1)
        for i in T.Parallel(block_N):
            C[by, bx * block_N + i] = part[i]
)";
  std::string cu = emit(source);
  // A_s is the pipeline's shared stage (cp.async); B_f is loaded into packed
  // words once before the loop and then one iteration ahead in each.
  CHECK(cu.find("tlc::cp_async16") != std::string::npos);
  CHECK(cu.find("unsigned B_f_next[2];") != std::string::npos);
  CHECK(count(cu, "tlc::copy_vec<unsigned, 2>(B_f_next") == 2);
  size_t loop = cu.find("for (int iter = 0;");
  REQUIRE(loop != std::string::npos);
  CHECK(cu.find("B_f[r] = tlc::unpack<tlc::u8>(B_f_next, r)", loop) != std::string::npos);
  CHECK(cu.find("const int k_next = k + 1;", loop) != std::string::npos);
}

TEST_CASE("a thread folds 16 registers or more of a maximum or an integer sum in four chains, a float sum in order") {
  // softmax's row of 8192 on 256 threads: 32 registers a thread, whose
  // maximum folds in four chains and whose float sum in column order.
  std::string cu = emit(exampleSource("examples/softmax/softmax.tl"));
  CHECK(cu.find("for (int c = 0; c < 32; ++c) acc_chain[c % 4] = tlc::max<float>(acc_chain[c % 4], X_f[((ri * 32) + c)]);") !=
        std::string::npos);
  CHECK(cu.find("float acc = tlc::max<float>(tlc::max<float>(acc_chain[0], acc_chain[1]), tlc::max<float>(acc_chain[2], acc_chain[3]));") !=
        std::string::npos);
  CHECK(count(cu, "_chain[4];") == 1);
  // rmsnorm's float sum of squares over 32 registers a thread keeps its order.
  std::string rms = emit(exampleSource("examples/rmsnorm/rmsnorm.tl"));
  CHECK(rms.find("for (int c_1 = 0; c_1 < 32; ++c_1) acc = (acc + sq[((ri_4 * 32) + c_1)]);") != std::string::npos);
  CHECK(count(rms, "_chain") == 0);
  // An int32 sum reorders freely.
  std::string isum = emit(R"(
def isum[M](X: Tensor[(M, 512), int32], S: Tensor[(M,), int32]):
    with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:
        X_f = T.alloc_fragment((4, 512), int32)
        s = T.alloc_fragment((4,), int32)
        T.copy(X[bx * 4, 0], X_f)
        T.reduce_sum(X_f, s, dim=1)
        T.copy(s, S[bx * 4])
)");
  CHECK(isum.find("for (int c_1 = 0; c_1 < 16; ++c_1) acc_chain[c_1 % 4] = (acc_chain[c_1 % 4] + X_f[((ri_3 * 16) + c_1)]);") !=
        std::string::npos);
  CHECK(isum.find("int acc = ((acc_chain[0] + acc_chain[1]) + (acc_chain[2] + acc_chain[3]));") != std::string::npos);
}

TEST_CASE("a gemm mainloop on a 2-D grid without T.use_swizzle is rasterized in panels of 8 rows") {
  const std::string panels = "const unsigned tlc_rows = min(tlc_grid_y, 8u);";
  // The zoo's TN gemm (a persistent mainloop: its tiles walk the logical grid).
  CHECK(emit(exampleSource("bench/zoo/gemm_tn.tl")).find(panels) != std::string::npos);
  // A batched gemm (3-D grid) and attention keep the row order.
  CHECK(emit(exampleSource("bench/zoo/gemm_batched.tl")).find("tlc_rows") == std::string::npos);
  CHECK(emit(exampleSource("examples/flash_attention/mha_fwd_bshd.tl")).find("tlc_rows") == std::string::npos);
  // T.use_swizzle(1) and enable=False ask for the row order; a panel of 4 is kept.
  std::string gemm = exampleSource("bench/zoo/gemm_tn.tl");
  const std::string at = "        A_s = T.alloc_shared(";
  REQUIRE(gemm.find(at) != std::string::npos);
  for (const char* hint : {"T.use_swizzle(1)", "T.use_swizzle(8, enable=False)", "T.use_swizzle(4)"}) {
    std::string source = gemm;
    source.insert(source.find(at), std::string("        ") + hint + "\n");
    std::string cu = emit(source);
    if (std::string(hint) == "T.use_swizzle(4)")
      CHECK(cu.find("const unsigned tlc_rows = min(tlc_grid_y, 4u);") != std::string::npos);
    else
      CHECK_MESSAGE(cu.find("tlc_rows") == std::string::npos, hint);
  }
}
