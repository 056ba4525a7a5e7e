// Streaming (non-temporal) stores, compiler/backends/cpu/streaming_stores.h:
// the generated code has them exactly where the rule says, and kernels that
// stream their output still agree with the reference interpreter, including
// rows that do not start on a cache line and extents shorter than one.
#include <doctest/doctest.h>

#include <cstdlib>

#include "compiler/backends/cpu/cpu_backend.h"
#include "runtime/cpu/tlc_cpu_runtime.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

std::string example(const std::string& rel) { return std::string(TLC_SOURCE_DIR) + "/examples/" + rel; }

struct Generated {
  std::string llvm, assembly;
};

Generated generate(CpuCompiled& c, const cpu::CpuOptions& o = {}) {
  REQUIRE(c.module);
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  INFO(c.rendered());
  REQUIRE(lowered);
  return {cpu::emitLLVMText(*lowered, o, /*optimized=*/true), cpu::emitAssembly(*lowered, o)};
}

bool streams(const Generated& g) { return g.llvm.find("!nontemporal") != std::string::npos; }

// C = C + A: the output is also read, so its lines are wanted in the cache.
const char* kAccumulate = R"(
def accumulate[M, N, block_M=32, block_N=64](A: Tensor[(M, N), float32], C: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_f = T.alloc_fragment((block_M, block_N), float32)
        C_f = T.alloc_fragment((block_M, block_N), float32)
        T.copy(A[by * block_M, bx * block_N], A_f)
        T.copy(C[by * block_M, bx * block_N], C_f)
        for i, j in T.Parallel(block_M, block_N):
            C_f[i, j] = C_f[i, j] + A_f[i, j]
        T.copy(C_f, C[by * block_M, bx * block_N])
)";

// B = A transposed: a transposing nest (tile_transpose.h), whose stores are
// whole 64-byte lines with AVX-512 (16 float32, or 2 x 16 float16 side by
// side) and half lines with AVX2.
const char* kTranspose = R"(
def transpose[M, N, block=32, dtype=float32](A: Tensor[(M, N), dtype], B: Tensor[(N, M), dtype]):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        A_f = T.alloc_fragment((block, block), dtype)
        T.copy(A[by * block, bx * block], A_f)
        for i, j in T.Parallel(block, block):
            B[bx * block + j, by * block + i] = A_f[i, j]
)";

}  // namespace

TEST_CASE("an output the kernel only writes, in whole rows, is written with streaming stores and fenced") {
  CpuCompiled c = compileTlFile(example("elementwise_add/add.tl"), {{"M", "256"}, {"N", "512"}, {"dtype", "float32"}});
  Generated g = generate(c);
  CHECK(streams(g));
  CHECK(g.llvm.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
  // Whether to stream is decided at run time from the tensor's size.
  CHECK(g.llvm.find("@tlc_cpu_stream_store_min_bytes()") != std::string::npos);
  CHECK(g.assembly.find("movnt") != std::string::npos);
  CHECK(g.assembly.find("sfence") != std::string::npos);
}

TEST_CASE("outputs the kernel also reads, and stores not contiguous in the loop, are not streamed") {
  CpuCompiled acc = compileTl(kAccumulate, {{"M", "256"}, {"N", "512"}});
  Generated g = generate(acc);
  CHECK_FALSE(streams(g));
  CHECK(g.assembly.find("movnt") == std::string::npos);
  CHECK(g.llvm.find("sfence") == std::string::npos);

  cpu::CpuOptions avx2;
  avx2.cpu = "x86-64-v3";
  CpuCompiled tr = compileTl(kTranspose, {{"M", "256"}, {"N", "512"}});
  CHECK_FALSE(streams(generate(tr, avx2)));
}

TEST_CASE("a transposing nest streams whole lines when they are aligned, else fetches the next block's lines into L1") {
  cpu::CpuOptions avx512;
  avx512.cpu = "znver4";
  for (const char* dt : {"float32", "float16"}) {
    CAPTURE(dt);
    CpuCompiled tr = compileTl(kTranspose, {{"M", "256"}, {"N", "512"}, {"dtype", dt}});
    Generated g = generate(tr, avx512);
    CHECK(streams(g));
    // One 64-byte non-temporal store per line (vmovntps or vmovntdq).
    CHECK((g.assembly.find("vmovntps\t%zmm") != std::string::npos ||
           g.assembly.find("vmovntdq\t%zmm") != std::string::npos));
    // The plain copy of the nest (misaligned rows or a small tensor)
    // prefetches the next block's destination lines into L1 (prefetcht0;
    // its source lines go to L2 with prefetcht1).
    CHECK(g.llvm.find("@llvm.prefetch.p0(ptr %") != std::string::npos);
    CHECK(g.assembly.find("prefetcht0") != std::string::npos);
    CHECK(g.assembly.find("prefetchw") == std::string::npos);
  }
}

TEST_CASE("kernels that stream their outputs agree with the interpreter") {
  // Stream every eligible output, however small, for the length of the test.
  tlc_cpu_set_stream_store_min_bytes(0);
  struct Case {
    std::vector<Define> defines;
  } cases[] = {
      {{{"M", "256"}, {"N", "512"}, {"dtype", "float32"}}},
      {{{"M", "257"}, {"N", "257"}}},                          // float16 rows that start mid-line
      {{{"M", "100"}, {"N", "300"}, {"dtype", "bfloat16"}}},
      {{{"M", "33"}, {"N", "70"}, {"dtype", "float32"}}},      // edge tiles shorter than a line
      {{{"M", "64"}, {"N", "200"}, {"dtype", "float8_e4m3"}}},
  };
  for (const Case& k : cases) {
    CpuCompiled c = compileTlFile(example("elementwise_add/add.tl"), k.defines);
    std::string what;
    for (const Define& d : k.defines) what += " -D " + d.name + "=" + d.value;
    CAPTURE(what);
    OracleComparison r = runAgainstOracle(c);
    INFO(r.log);
    CHECK(r.pass);
  }
  // Transposing nests: streamed lines (and the plain copy when the rows are
  // not aligned to lines).
  for (const char* m : {"96", "160"})
    for (const char* dt : {"float32", "float16"}) {
      CAPTURE(m);
      CAPTURE(dt);
      CpuCompiled tr = compileTl(kTranspose, {{"M", m}, {"N", "64"}, {"dtype", dt}});
      OracleComparison r = runAgainstOracle(tr);
      INFO(r.log);
      CHECK(r.pass);
    }
  tlc_cpu_set_stream_store_min_bytes(-1);
}

TEST_CASE("the streaming threshold has a default that a host program can override and restore") {
  int64_t initial = tlc_cpu_stream_store_min_bytes();
  CHECK(initial > 0);
  // Half the last-level cache, at most 16 MiB (a server's cache is shared by
  // many cores), unless the environment sets it.
  if (!std::getenv("TLC_CPU_STREAM_MIN_BYTES")) CHECK(initial <= (int64_t(16) << 20));
  tlc_cpu_set_stream_store_min_bytes(12345);
  CHECK(tlc_cpu_stream_store_min_bytes() == 12345);
  tlc_cpu_set_stream_store_min_bytes(-1);
  CHECK(tlc_cpu_stream_store_min_bytes() == initial);
}
