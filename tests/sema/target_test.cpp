// `T.target(name)`: a compile-time bool telling which target the module is
// compiled for, so that a kernel's defaults can follow it.
#include <doctest/doctest.h>

#include "tests/sema/sema_test_util.h"

using namespace tlc;

namespace {

const char* kKernel =
    "def k[N, block=64 if T.target(\"hip\") else (32 if T.target(\"sm_90a\") else (8 if T.target(\"cpu\") else 16))](\n"
    "        A: Tensor[(N,), float32]):\n"
    "    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:\n"
    "        for i in T.Parallel(block):\n"
    "            if bx * block + i < N:\n"
    "                A[bx * block + i] = 1.0\n";

int64_t threadsFor(const std::string& target) {
  test::Compiled c = test::compileText(kKernel, {{"N", "100"}}, "test.tl", target);
  INFO(c.rendered());
  REQUIRE(c.module);
  auto kernels = test::collect<ir::KernelStmt>(c.func().body);
  REQUIRE(kernels.size() == 1);
  return kernels[0]->threads;
}

}  // namespace

TEST_CASE("T.target tests the kind and the architecture of the compilation's target") {
  CHECK(threadsFor("hip:gfx942") == 64);
  CHECK(threadsFor("hip:gfx90a") == 64);
  CHECK(threadsFor("cuda:sm_90a") == 32);
  CHECK(threadsFor("cuda:sm_80") == 16);
  CHECK(threadsFor("cpu") == 8);
  CHECK(threadsFor("interp") == 16);
  CHECK(threadsFor("") == 16);  // no target (tlc check): every test is False
}

TEST_CASE("T.target names a kind or an architecture, as a string") {
  auto error = [](const std::string& arg) {
    std::string text = std::string("def k[N, b=1 if T.target(") + arg +
                       ") else 2](A: Tensor[(N,), float32]):\n"
                       "    with T.Kernel(1, threads=32) as bx:\n"
                       "        A[0] = b * 1.0\n";
    test::Compiled c = test::compileText(text, {{"N", "4"}}, "test.tl", "cuda:sm_90a");
    CHECK_FALSE(c.module);
    return c.rendered();
  };
  std::string text = error("\"sm90\"");
  CHECK(text.find("test.tl:1:26: error: `T.target(\"sm90\")` names no target") != std::string::npos);
  CHECK(text.find("[out-of-range]") != std::string::npos);
  text = error("3");
  CHECK(text.find("`T.target` takes a target kind or architecture as a string") != std::string::npos);
  CHECK(text.find("[type-mismatch]") != std::string::npos);
}
