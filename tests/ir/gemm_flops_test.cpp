// gemmFlops: 2 * M * N * K per gemm, times enclosing trip counts, for any
// transposes and unit dimensions.
#include <doctest/doctest.h>

#include "compiler/ir/gemm_flops.h"
#include "compiler/ir/ir_parser.h"

using namespace tlc;

namespace {

std::optional<double> flopsOf(const std::string& text) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("g.tir", text);
  auto module = ir::parseIRModule(sources, diags, file);
  REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
  return ir::gemmFlops(module->funcs[0]->body, [](const ir::Expr& e) -> std::optional<double> {
    int64_t v;
    if (ir::constInt(e, &v)) return double(v);
    return std::nullopt;
  });
}

}  // namespace

TEST_CASE("gemm work counts loops, grids and transposed operands") {
  auto f = flopsOf(
      "func @g(A: float16[64, 32], B: float16[16, 32], C: float32[64, 16]) {\n"
      "  kernel grid(3, 2) threads(128) as (bx, by) {\n"
      "    alloc C_f: fragment float32[64, 16]\n"
      "    for k in serial(0 : +5) {\n"
      "      gemm(A, B, C_f, transpose_B=true)\n"
      "    }\n"
      "  }\n"
      "}\n");
  REQUIRE(f);
  CHECK(*f == doctest::Approx(2.0 * 64 * 16 * 32 * 5 * 6));
}

TEST_CASE("no gemm, or an unknown extent, gives no count") {
  CHECK_FALSE(flopsOf("func @f(A: float32[4]) {\n  kernel grid(1) threads(32) as (bx) {\n  }\n}\n"));
  CHECK_FALSE(flopsOf(
      "func @g[K](A: float16[64, 32], B: float16[32, 16], C: float32[64, 16]) {\n"
      "  kernel grid(1) threads(128) as (bx) {\n"
      "    alloc C_f: fragment float32[64, 16]\n"
      "    for k in serial(0 : +K) {\n"
      "      gemm(A, B, C_f)\n"
      "    }\n"
      "  }\n"
      "}\n"));
}
