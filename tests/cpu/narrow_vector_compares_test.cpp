// The clean-up pass that compares 32-bit values extended to 64-bit vector
// lanes as 32-bit values (compiler/backends/cpu/narrow_vector_compares.h):
// which compares it narrows on hand-written IR, and a kernel masking the
// column a row's index names, whose compare it narrows on the way to
// AVX-512, against the interpreter.
#include <doctest/doctest.h>

#include "compiler/backends/cpu/cpu_backend.h"
#include "tests/cpu/cpu_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

// `body` (using %a, %b: i32 and %v, %w: <4 x i32>) in a function returning
// <4 x i1> %r, after the pass.
std::string afterPass(const std::string& body) {
  std::string out = cpu::narrowVectorComparesInText(
      "define <4 x i1> @f(i32 %a, i32 %b, <4 x i32> %v, <4 x i32> %w) {\n" + body + "  ret <4 x i1> %r\n}\n");
  REQUIRE_MESSAGE(out.rfind("; error", 0) != 0, out);
  return out;
}

const char* kSplatZext =
    "  %x = zext i32 %a to i64\n"
    "  %i = insertelement <4 x i64> poison, i64 %x, i64 0\n"
    "  %s = shufflevector <4 x i64> %i, <4 x i64> poison, <4 x i32> zeroinitializer\n";

}  // namespace

TEST_CASE("64-bit vector compares of extended 32-bit values compare the 32-bit values") {
  // A splat of a zero-extended index against the lanes' columns: narrowed.
  std::string eq = afterPass(std::string(kSplatZext) + "  %r = icmp eq <4 x i64> %s, <i64 0, i64 1, i64 2, i64 3>\n");
  CHECK(eq.find("icmp eq <4 x i32>") != std::string::npos);
  INFO(eq);
  CHECK(eq.find("<4 x i64>") == std::string::npos);  // the 64-bit splat is gone
  CHECK(eq.find("zext") == std::string::npos);
  // The constant first, an unsigned order: narrowed, the operands in place.
  std::string ult = afterPass(std::string(kSplatZext) + "  %r = icmp ult <4 x i64> <i64 7, i64 8, i64 9, i64 4294967295>, %s\n");
  CHECK(ult.find("icmp ult <4 x i32> <i32 7, i32 8, i32 9, i32 -1>, ") != std::string::npos);
  // Sign-extended vectors in a signed order: narrowed.
  std::string slt = afterPass(
      "  %x = sext <4 x i32> %v to <4 x i64>\n  %y = sext <4 x i32> %w to <4 x i64>\n"
      "  %r = icmp slt <4 x i64> %x, %y\n");
  CHECK(slt.find("icmp slt <4 x i32> %v, %w") != std::string::npos);
  // Kept: a signed order of zero-extended values (2^31 and up are not
  // negative), a constant that does not fit, and two extensions that differ.
  std::string sgt = afterPass(std::string(kSplatZext) + "  %r = icmp sgt <4 x i64> %s, <i64 0, i64 1, i64 2, i64 3>\n");
  CHECK(sgt.find("icmp sgt <4 x i64>") != std::string::npos);
  std::string big = afterPass(std::string(kSplatZext) + "  %r = icmp eq <4 x i64> %s, <i64 0, i64 1, i64 2, i64 4294967296>\n");
  CHECK(big.find("icmp eq <4 x i64>") != std::string::npos);
  CHECK(big.find("<4 x i32> zeroinitializer") == big.rfind("<4 x i32> zeroinitializer"));  // no splat left behind
  std::string mixed = afterPass(
      "  %x = zext <4 x i32> %v to <4 x i64>\n  %y = sext <4 x i32> %w to <4 x i64>\n"
      "  %r = icmp eq <4 x i64> %x, %y\n");
  CHECK(mixed.find("icmp eq <4 x i64> %x, %y") != std::string::npos);
}

TEST_CASE("masking the column a row's index names compares 32-bit lanes and agrees with the interpreter") {
  const char* source = R"(
def mask_taken[M, N=64](X: Tensor[(M, N), float32], arg: Tensor[(M,), int32], Y: Tensor[(M, N), float32]):
    with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
        x = T.alloc_fragment((16, N), float32)
        a = T.alloc_fragment((16,), int32)
        T.copy(X[bx * 16, 0], x)
        T.copy(arg[bx * 16], a)
        for i, j in T.Parallel(16, N):
            if j == a[i]:
                x[i, j] = -T.infinity(float32)
        T.copy(x, Y[bx * 16, 0])
)";
  CpuCompiled c = compileTl(source);
  cpu::CpuOptions o;
  o.cpu = "znver4";
  std::string ir = cpuLLVM(c, o, true);
  INFO(c.rendered());
  REQUIRE(!ir.empty());
  CHECK(ir.find("icmp eq <16 x i32>") != std::string::npos);
  CHECK(ir.find("icmp eq <16 x i64>") == std::string::npos);
  for (int64_t m : {16, 37}) {
    OracleComparison r = runAgainstOracle(c, {{"M", m}}, 1, {}, {}, {{"arg", {0, 64}}});
    INFO(r.log);
    CHECK(r.pass);
  }
}
