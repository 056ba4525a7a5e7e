// The .tir parser on hand-written text: what it accepts, where its errors
// point, how it recovers, and that no input makes it crash.
#include <random>

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;
using namespace tlc::ir::testing;

namespace {

const char* kGemmText = R"(// A hand-written tile GEMM.
func @gemm[M, N, K](A: float16[M, K], B: float16[K, N], C: float16[M, N]) bind(block_M = "128") {
  kernel grid(floordiv(N + 127, 128), floordiv(M + 127, 128)) threads(128) as (bx, by) {
    alloc A_s: shared float16[128, 32]
    alloc B_s: shared float16[32, 128]
    alloc C_f: fragment float32[128, 128]
    fill(C_f, 0.0)
    for k in pipelined(0 : +floordiv(K + 31, 32), num_stages=3) {
      copy(A[by * 128 : +128, k * 32 : +32], A_s)
      copy(B[k * 32 : +32, bx * 128 : +128], B_s)
      gemm(A_s, B_s, C_f)
    }
    for i in parallel(0 : +128) {
      for j in parallel(0 : +128) {
        C_f[i, j] = max(C_f[i, j], 0.0)
      }
    }
    copy(C_f, C[by * 128 : +128, bx * 128 : +128])
  }
}
)";

std::string firstError(const Parsed& p) {
  for (const Diagnostic& d : p.diags.diagnostics())
    if (d.severity == Severity::Error) return diagKindInfo(d.kind).printed;
  return "";
}

}  // namespace

TEST_CASE("hand-written text parses and prints in normal form") {
  auto p = parseText(kGemmText);
  INFO(p->diags.renderAll());
  REQUIRE(p->module);
  std::string printed = printModule(*p->module);
  // The comment is gone; everything else is already in normal form.
  CHECK(printed == std::string(kGemmText).substr(std::string(kGemmText).find('\n') + 1));
}

TEST_CASE("sibling scopes may reuse a name; the printer makes names unique") {
  auto p = parseText(R"(func @f(out: int32[4]) {
  for i in serial(0 : +4) { out[i] = i }
  for i in serial(0 : +4) { out[i] = i * 2 }
  let t = 3
  if t > 2 { out[0] = t } else if t < 0 { out[1] = t } else { out[2] = -t }
})");
  INFO(p->diags.renderAll());
  REQUIRE(p->module);
  CHECK(printModule(*p->module) ==
        "func @f(out: int32[4]) {\n"
        "  for i in serial(0 : +4) {\n    out[i] = i\n  }\n"
        "  for i_1 in serial(0 : +4) {\n    out[i_1] = i_1 * 2\n  }\n"
        "  let t: int32 = 3\n"
        "  if t > 2 {\n    out[0] = t\n  } else if t < 0 {\n    out[1] = t\n  } else {\n    out[2] = -t\n  }\n"
        "}\n");
}

TEST_CASE("a let without a written dtype takes its value's; a written one is kept") {
  auto p = parseText("func @f(x: float16) {\n  let a = x * 2.0f16\n  let b: float16 = a\n}\n");
  INFO(p->diags.renderAll());
  REQUIRE(p->module);
  CHECK(printModule(*p->module).find("let a: float16 = x * 2.0f16\n  let b: float16 = a") != std::string::npos);
}

TEST_CASE("errors point at the offending token with a helpful message") {
  auto p = parseText("func @f(A: float32[4]) {\n  A[0] = A[0] + 1\n}\n");
  REQUIRE(!p->module);
  REQUIRE(p->diags.diagnostics().size() == 1);
  const Diagnostic& d = p->diags.diagnostics()[0];
  CHECK(firstError(*p) == "ir-dtype-mismatch");
  CHECK(d.loc.line == 2);
  CHECK(d.loc.col == 15);
  CHECK(d.message.find("float32 and int32") != std::string::npos);
  std::string rendered = p->diags.renderAll();
  CHECK(rendered.find("test.tir:2:15: error:") != std::string::npos);
  CHECK(rendered.find("[ir-dtype-mismatch]") != std::string::npos);
}

TEST_CASE("the parser reports one error per function and goes on with the next") {
  auto p = parseText(R"(func @a() { for }
func @b() { x[0] = 1 }
func @c(A: int32[1]) { A[0] = 1 }
bogus
func @d() { fill(1, 2) }
)");
  REQUIRE(!p->module);
  std::vector<std::pair<uint32_t, std::string>> got;
  for (const Diagnostic& d : p->diags.diagnostics()) got.push_back({d.loc.line, diagKindInfo(d.kind).printed});
  std::vector<std::pair<uint32_t, std::string>> want = {
      {1, "ir-syntax-error"}, {2, "ir-unbound-name"}, {4, "ir-syntax-error"}, {5, "ir-syntax-error"}};
  CHECK(got == want);
}

TEST_CASE("specific syntax errors") {
  struct Case {
    const char* text;
    const char* kind;
  } cases[] = {
      {"func @f() { evaluate @g() }", "ir-syntax-error"},              // a call without arguments needs a dtype
      {"func @f(A: float32[4]) { evaluate A }", "ir-syntax-error"},     // a buffer used as a value
      {"func @f(n: int32) { n[0] = 1 }", "ir-syntax-error"},            // a scalar used as a buffer
      {"func @f() { let x = 99999999999999999999 }", "ir-invalid-literal"},
      {"func @f() { let x = -9223372036854775809i64 }", "ir-invalid-literal"},
      {"func @f() { let x = 256u8 }", "ir-invalid-literal"},
      {"func @f() { let x = -1u32 }", "ir-invalid-literal"},
      {"func @f() { let x = 1e999 }", "ir-invalid-literal"},
      {"func @f() { let x = 1.5i32 }", "ir-invalid-literal"},
      {"func @f() { let x = cast<int33>(1) }", "ir-unknown-dtype"},
      {"func @f() { let x = select(1, 2, 3) }", "ir-operand-type"},
      {"func @f() { let x = select(true, 2, 3.0) }", "ir-dtype-mismatch"},
      {"func @f(A: float32[4]) { kernel grid(1) threads(1) as (b) { alloc S: global2 float32[4] } }",
       "ir-syntax-error"},
      {"func @f(A: float32[4]) { for i in sometimes(0 : +4) { } }", "ir-syntax-error"},
      {"func @f(A: float32[4]) { for i in pipelined(0 : +4, num_stages=2, num_stages=3) { } }",
       "ir-invalid-attribute"},
      {"func @f(A: float32[4, 4], B: float32[4]) { kernel grid(1) threads(1) as (b) { reduce_sum(A, B) } }",
       "ir-invalid-attribute"},
      {"func @f(A: float32[4, 4]) { kernel grid(1) threads(1) as (b) { gemm(A, A, A, transpose_C=true) } }",
       "ir-invalid-attribute"},
      {"func @f(A: float32[4, 4]) { copy(A[0 : +4], A) }", "ir-rank-mismatch"},
      {"func @f(A: float32[4]) { atomic_add(A[0, 0], 1.0) }", "ir-rank-mismatch"},
      {"func @f(A: float32[4]) { reduce_mean(A, A, dim=0) }", "ir-syntax-error"},
      {"func @f(A: float32[4]) { atomic_or(A[0], 1.0) }", "ir-syntax-error"},
      {"func @f(A: float32[4]) { A[0] = 1.0 loc(3:4) }", "ir-syntax-error"},
      {"func @f(for: int32) { }", "ir-syntax-error"},
      {"func @f() { let x = 1 + }", "ir-syntax-error"},
      {"func @f() {", "ir-syntax-error"},
      {"func f() { }", "ir-syntax-error"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto p = parseText(c.text);
    INFO(p->diags.renderAll());
    CHECK(!p->module);
    CHECK(firstError(*p) == c.kind);
  }
}

TEST_CASE("deep nesting is an error, not a stack overflow") {
  std::string text = "func @f() { let x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }";
  auto p = parseText(text);
  CHECK(!p->module);
  CHECK(firstError(*p) == "ir-nesting-too-deep");
  std::string blocks = "func @f() { ";
  for (int i = 0; i < 20000; ++i) blocks += "if true { ";
  auto q = parseText(blocks);
  CHECK(!q->module);
  std::string nots = "func @f() { let x = " + std::string(50000, '-') + "1 }";
  CHECK(!parseText(nots)->module);
}

TEST_CASE("random corruptions of valid text never crash the parser") {
  std::string base = kGemmText;
  std::mt19937 rng(1234);
  const std::string alphabet = "(){}[],:=+-*/%<>&|^~@\"0123456789.efiux_abAB \n\t#$";
  int parsedOk = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0: text.erase(at, 1 + rng() % 8); break;
        case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 3: {  // duplicate a random slice
          size_t len = rng() % 40;
          text.insert(at, text.substr(rng() % text.size(), len));
          break;
        }
      }
    }
    CAPTURE(text);
    std::unique_ptr<Parsed> p;
    CHECK_NOTHROW(p = parseText(text));
    if (p && p->module) {
      ++parsedOk;
      // Whatever parses must round-trip.
      std::string printed = printModule(*p->module);
      auto again = parseText(printed);
      REQUIRE(again->module);
      CHECK(printModule(*again->module) == printed);
    } else if (p) {
      CHECK(p->diags.hasErrors());
    }
  }
  CHECK(parsedOk > 0);
}
