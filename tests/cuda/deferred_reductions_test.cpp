// Accumulating register reductions in a loop (cuda_register_reduce.cpp):
// which ones keep per-thread partial results through the loop and combine
// across threads once after it. Correctness of the emitted code against the
// interpreter is tested in the emulator
// (tests/cuda_emu_examples/register_fragments/deferred_reductions.tl).
#include <doctest/doctest.h>

#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

// The CUDA C between the serial loop's head and the end of the kernel, split at the loop's end.
struct Split {
  std::string inLoop, after;
};

Split splitAtLoop(const std::string& cu) {
  size_t head = cu.find("for (int k = ");
  REQUIRE(head != std::string::npos);
  // The loop's closing brace: the first line after the head indented like it.
  size_t lineStart = cu.rfind('\n', head) + 1;
  std::string indent = cu.substr(lineStart, head - lineStart);
  size_t end = cu.find("\n" + indent + "}", head);
  REQUIRE(end != std::string::npos);
  return {cu.substr(head, end - head), cu.substr(end)};
}

std::string kernel(const std::string& loopBody) {
  return R"(
def k[M, N](X: Tensor[(M, N), float32], S: Tensor[(M,), float32]):
    with T.Kernel(T.ceildiv(M, 4), threads=128) as bx:
        x = T.alloc_fragment((4, 256), float32)
        s = T.alloc_fragment((4,), float32)
        part = T.alloc_fragment((4,), float32)
        T.fill(s, 1.0)
        for k in T.serial(T.ceildiv(N, 256)):
            T.copy(X[bx * 4, k * 256], x)
)" + loopBody + R"(
        T.copy(s, S[bx * 4])
)";
}

}  // namespace

TEST_CASE("an accumulating row reduction combines across threads after its loop") {
  Split s = splitAtLoop(test::emitCudaFor(kernel("            T.reduce_sum(x, s, dim=1, clear=False)")));
  CHECK(s.inLoop.find("group_allreduce") == std::string::npos);
  CHECK(s.after.find("group_allreduce") != std::string::npos);
}

TEST_CASE("a reduction into a temporary accumulated into a vector is deferred like one accumulating reduction") {
  Split s = splitAtLoop(test::emitCudaFor(kernel(R"(            T.reduce_max(x, part, dim=1)
            for i in T.Parallel(4):
                s[i] = T.max(s[i], part[i]))")));
  CHECK(s.inLoop.find("group_allreduce") == std::string::npos);
  CHECK(s.after.find("group_allreduce<") != std::string::npos);
}

TEST_CASE("a reduction whose destination the loop reads combines in every iteration") {
  Split s = splitAtLoop(test::emitCudaFor(kernel(R"(            T.reduce_sum(x, s, dim=1, clear=False)
            for i in T.Parallel(4):
                s[i] = s[i] * 0.5)")));
  CHECK(s.inLoop.find("group_allreduce") != std::string::npos);
}
