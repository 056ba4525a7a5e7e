// Compile-time integers fold exactly (docs/language.md, Integer ranges): the
// values that reach the IR, where folding used to wrap.
#include <doctest/doctest.h>

#include "tests/sema/sema_test_util.h"

using namespace tlc;
using namespace tlc::test;

namespace {

// The constant grid extents of the first kernel.
std::vector<int64_t> grid(const Compiled& c) {
  auto kernels = collect<ir::KernelStmt>(c.func().body);
  REQUIRE(kernels.size() == 1);
  std::vector<int64_t> out;
  for (const ir::Expr& g : kernels[0]->grid) {
    auto* i = ir::as<ir::IntImm>(g);
    REQUIRE(i);
    out.push_back(i->value);
  }
  return out;
}

}  // namespace

TEST_CASE("T.ceildiv of constants does not overflow through its intermediate sum") {
  Compiled c = compileText(R"(def k[M, N, block=32](A: Tensor[(M, N), float16]):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), T.ceildiv(M, 2147483647)) as (bx, by, bz):
        pass
)",
                           {{"M", "2147483647"}, {"N", "2147483617"}});
  INFO(c.rendered());
  REQUIRE(c.module);
  CHECK(grid(c) == std::vector<int64_t>{67108864, 67108864, 1});
  CHECK(c.func().params[0].buffer->shape.size() == 2);
}

TEST_CASE("compile-time numbers widen to int64 instead of wrapping") {
  Compiled c = compileText(R"(def k[a=65536, b=2147483647](A: Tensor[(4,), int64]):
    with T.Kernel(1) as bx:
        A[0] = a * a
        A[1] = b + 1
        A[2] = 2 ** 40
        A[3] = (a * a) // 65536
)");
  INFO(c.rendered());
  REQUIRE(c.module);
  std::vector<int64_t> stored;
  for (const ir::StoreStmt* s : collect<ir::StoreStmt>(c.func().body)) {
    auto* v = ir::as<ir::IntImm>(s->value);
    REQUIRE(v);
    stored.push_back(v->value);
  }
  CHECK(stored == std::vector<int64_t>{int64_t(1) << 32, int64_t(2147483648), int64_t(1) << 40, 65536});
}

TEST_CASE("runtime arithmetic keeps its type: only constants that do not fit are errors") {
  Compiled ok = compileText(R"(def k[N](A: Tensor[(N,), int32], n: int32):
    with T.Kernel(1) as bx:
        A[0] = n * 2147483647
        A[1] = T.cast(300, int8) + n
)");
  INFO(ok.rendered());
  CHECK(ok.module);
  CHECK_FALSE(ok.diags->hasErrors());
}
