// Register nests whose value is float16 / bfloat16 +, -, * are emitted two
// lanes at a time: per lane the leaves (loads, unpacked nibbles), then the
// arithmetic once on the pair; index arithmetic the element only seems to
// depend on is simplified away first.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

using test::exampleSource;

const char* kAffine = R"(
def affine[M, N, dtype=bfloat16](X: Tensor[(M, N), dtype], g: Tensor[(N,), dtype], Y: Tensor[(M, N), dtype]):
    with T.Kernel(T.ceildiv(M, 8), threads=64) as bx:
        x = T.alloc_fragment((8, 64), dtype)
        T.copy(X[bx * 8, 0], x)
        for i, j in T.Parallel(8, 64):
            x[i, j] = x[i, j] * g[T.min(j, N - 1)] + x[i, j]
        T.copy(x, Y[bx * 8, 0])
)";

}  // namespace

TEST_CASE("the W4A16 dequantizing loop converts and scales pairs of weights") {
  std::string cu = test::emitCudaFor(exampleSource("examples/dequantize_gemm/w4a16_gemm.tl"));
  // One byte gives both nibbles of a pair: the lanes share the column pair's byte.
  CHECK(cu.find("const int j_pair = ") != std::string::npos);
  CHECK(cu.find("tlc::hmul(tlc::hsub(tlc::unpack_uint4_pair<__half>(") != std::string::npos);
  CHECK(cu.find("= tlc::low(") != std::string::npos);
  CHECK(cu.find("= tlc::high(") != std::string::npos);
  // The packed weights are read a 32-bit word at a time (the word holding the
  // lane's byte, then the nibble's index in it): no byte loads.
  CHECK(cu.find("unsigned lanes[2];") != std::string::npos);
  CHECK(cu.find("= (*reinterpret_cast<const unsigned*>(&Bq_s[") != std::string::npos);
  CHECK(cu.find("tlc::u8 lanes[2];") == std::string::npos);
  // The scale group of a 64-wide tile with groups of 128 is the tile's: no per-element group index.
  CHECK(cu.find("const int g = ") == std::string::npos);
  CHECK(cu.find("tlc::cvt<__half>((tlc::f(") == std::string::npos);
}

TEST_CASE("16-bit float arithmetic of a row-group tile runs on lane pairs; float32 does not") {
  std::string bf = test::emitCudaFor(kAffine);
  CHECK(bf.find("tlc::hadd(tlc::hmul(tlc::pair(") != std::string::npos);
  CHECK(bf.find("__nv_bfloat16 lanes[2];") != std::string::npos);
  std::string source = kAffine;
  source.replace(source.find("dtype=bfloat16"), 14, "dtype=float32");
  std::string f32 = test::emitCudaFor(source);
  CHECK(f32.find("tlc::pair(") == std::string::npos);
  CHECK(f32.find("lanes") == std::string::npos);
}

TEST_CASE("scalar 16-bit arithmetic is one native operation, and HIP computes no pairs") {
  std::string cu = test::emitCudaFor(R"(
def k[N](X: Tensor[(N,), float16], Y: Tensor[(N,), float16]):
    with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
        for i in T.Parallel(128):
            if bx * 128 + i < N:
                Y[bx * 128 + i] = X[bx * 128 + i] * X[bx * 128 + i] - X[bx * 128 + i] / T.cast(3.0, float16)
)");
  CHECK(cu.find("tlc::hsub(tlc::hmul(") != std::string::npos);
  // Division still computes in float and rounds once.
  CHECK(cu.find("tlc::cvt<__half>((tlc::f(") != std::string::npos);
  cuda::CudaOptions hip;
  hip.arch = "gfx942";
  hip.language = cuda::GpuLanguage::Hip;
  std::string hipc = test::generateCudaFor(kAffine, hip)->source;
  CHECK(hipc.find("tlc::pair(") == std::string::npos);
  CHECK(hipc.find("tlc::hadd(tlc::hmul(") != std::string::npos);
}
