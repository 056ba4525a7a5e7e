// Kernel metadata round trip, generated headers compiled as C99 and C++17 by
// the system compilers, and an embedded module linked into a C program that
// launches it through the generated header.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "compiler/backends/metadata.h"
#include "compiler/driver/header_gen.h"
#include "tests/runtime/build_helpers.h"
#include "tlc/runtime.h"

using namespace tlc;

namespace {

int sh(const std::string& cmd) {
  INFO(cmd);
  return std::system((cmd + " 2>&1").c_str());
}

const std::string kRuntimeInclude = std::string(TLC_SOURCE_DIR) + "/runtime/include";
const std::string kRuntimeLibDir = std::string(TLC_BINARY_DIR) + "/runtime";

}  // namespace

TEST_CASE("metadata round trip: parameters, symbols, bindings, grid") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = test::compileTl(sources, diags, "examples/gemm/gemm.tl", {"K=64", "dtype=float32"});
  INFO(diags.renderAll());
  REQUIRE(m);
  meta::MetadataOptions o;
  o.symbolFor = [](const std::string& n) { return "tlc_" + n; };
  o.sources = &sources;
  std::string json = meta::moduleMetadataJson(*m, o, 2);
  meta::ParsedModule pm;
  std::string err;
  REQUIRE(meta::parseModuleMetadata(json, &pm, &err));
  CHECK(pm.target == "cpu");
  CHECK(pm.binary == "so");
  CHECK(pm.tlcVersion == meta::tlcVersion());
  REQUIRE(pm.kernels.size() == 1);
  const auto& k = pm.kernels[0];
  CHECK(k.name == "gemm");
  CHECK(k.symbol == "tlc_gemm");
  REQUIRE(k.params.size() == 3);
  CHECK(k.params[0].name == "A");
  CHECK(k.params[0].isTensor);
  CHECK(k.params[0].dtype == "float32");
  // What the kernel does with each tensor: C is an output only.
  CHECK(k.params[0].access == "read");
  CHECK(k.params[1].access == "read");
  CHECK(k.params[2].access == "write");
  REQUIRE(k.params[0].shape.size() == 2);
  CHECK(k.params[0].shape[0].kind == meta::ParsedDim::Kind::Symbol);
  CHECK(k.params[0].shape[0].symbol == "M");
  CHECK(k.params[0].shape[1].kind == meta::ParsedDim::Kind::Const);
  CHECK(k.params[0].shape[1].value == 64);
  CHECK(k.params[0].shape[1].boundName == "K");
  CHECK(k.shapeSymbols == std::vector<std::string>{"M", "N"});
  bool sawK = false, sawBlock = false;
  for (auto& [n, v] : k.bindings) {
    sawK |= n == "K" && v == "64";
    sawBlock |= n == "block_M" && v == "128";
  }
  CHECK(sawK);
  CHECK(sawBlock);
  REQUIRE(k.grid.size() == 2);
  CHECK(!k.grid[0].empty());
  CHECK(k.threads == 128);

  std::string bad;
  CHECK(!meta::parseModuleMetadata("[]", &pm, &bad));
  CHECK(!meta::parseModuleMetadata(R"({"format":"tlc-module-metadata","format_version":1})", &pm, &bad));
  CHECK(bad.find("malformed") != std::string::npos);
}

TEST_CASE("RPN of index expressions and what cannot be serialized") {
  ir::Var n = ir::makeVar("N");
  ir::Expr e = ir::floorDiv(ir::add(ir::makeVarRef(n), ir::makeInt(127)), ir::makeInt(128));
  auto rpn = meta::exprToRpn(e);
  REQUIRE(rpn);
  CHECK(*rpn == "N 127 + 128 //");
  CHECK(meta::exprToText(e) == "(N + 127) // 128");
  CHECK(!meta::exprToRpn(ir::makeFloat(1.5)));
}

TEST_CASE("generated headers compile as C99 and C++17 for every example") {
  auto dir = test::scratchDir("headers");
  for (std::string ex : {"examples/gemm/gemm.tl", "examples/softmax/softmax.tl", "examples/elementwise_add/add.tl",
                         "examples/rmsnorm/rmsnorm.tl", "examples/row_reduce/row_sum.tl", "tests/runtime/data/scale.tl"}) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto m = test::compileTl(sources, diags, ex, {});
    INFO(ex << "\n" << diags.renderAll());
    REQUIRE(m);
    for (bool embedded : {false, true}) {
      driver::HeaderOptions h;
      h.moduleName = "mod-" + std::filesystem::path(ex).stem().string();
      h.embedded = embedded;
      std::string header = driver::generateHeader(*m, h);
      std::string hp = (dir / "k.h").string();
      std::ofstream(hp) << header;
      std::string c = (dir / "use.c").string(), cpp = (dir / "use.cpp").string();
      std::ofstream(c) << "#include \"k.h\"\nint main(void) { return 0; }\n";
      std::ofstream(cpp) << "#include \"k.h\"\nint main() { return 0; }\n";
      std::string flags = " -Wall -Wextra -Werror -pedantic -fsyntax-only -I" + kRuntimeInclude + " -I" + dir.string();
      CHECK(sh("cc -std=c99" + flags + " " + c) == 0);
      CHECK(sh("c++ -std=c++17" + flags + " " + cpp) == 0);
    }
  }
}

TEST_CASE("the gemm header declares typed pointers, const inputs, the shape symbols and the stream") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = test::compileTl(sources, diags, "examples/gemm/gemm.tl", {"K=64", "dtype=float32"});
  REQUIRE(m);
  driver::HeaderOptions h;
  h.moduleName = "gemm";
  h.embedded = true;
  std::string header = driver::generateHeader(*m, h);
  CHECK(header.find("TLC_LAUNCH_LINKAGE_ tlc_status gemm_launch(tlc_module* module,\n    const float* A,\n    const float* B,\n"
                    "    float* C,\n    int64_t M,\n    int64_t N,\n    void* stream)") != std::string::npos);
  CHECK(header.find("tlc_module* gemm_module(void);") != std::string::npos);
}

TEST_CASE("an embedded CPU module linked into a C program runs gemm through the header") {
  auto dir = test::scratchDir("embed");
  std::string so = (dir / "gemm.so").string();
  test::buildCpuModule("examples/gemm/gemm.tl", {"dtype=float32", "block_M=32", "block_N=32", "block_K=16"}, so);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = test::compileTl(sources, diags, "examples/gemm/gemm.tl", {"dtype=float32", "block_M=32", "block_N=32", "block_K=16"});
  REQUIRE(m);
  std::string err;
  REQUIRE(driver::writeHostFiles(*m, so, (dir / "gemm.h").string(), (dir / "gemm_embed.c").string(), &err));
  std::filesystem::remove(so);  // nothing on disk at run time
  std::ofstream(dir / "main.c") << R"(#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "gemm.h"
int main(void) {
  const int64_t M = 70, N = 33, K = 45;
  float* A = malloc(sizeof(float) * M * K);
  float* B = malloc(sizeof(float) * K * N);
  float* C = malloc(sizeof(float) * M * N);
  for (int64_t i = 0; i < M * K; ++i) A[i] = (float)((i * 7) % 13) - 6.0f;
  for (int64_t i = 0; i < K * N; ++i) B[i] = (float)((i * 5) % 11) - 5.0f;
  tlc_status st = gemm_launch(gemm_module(), A, B, C, M, K, N, NULL);
  if (st != TLC_SUCCESS) { fprintf(stderr, "launch: %s\n", tlcGetLastError()); return 2; }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += A[i * K + k] * B[k * N + j];
      if (fabsf(ref - C[i * N + j]) > 1e-3f) { fprintf(stderr, "mismatch at %ld %ld\n", (long)i, (long)j); return 3; }
    }
  st = gemm_launch(gemm_module(), NULL, B, C, M, K, N, NULL);
  if (st != TLC_ERROR_NULL_POINTER) return 4;
  printf("ok: %s\n", tlcGetLastError());
  return 0;
}
)";
  std::string exe = (dir / "main").string();
  REQUIRE(sh("cc -std=c99 -O1 -I" + kRuntimeInclude + " -I" + dir.string() + " -o " + exe + " " +
             (dir / "main.c").string() + " " + (dir / "gemm_embed.c").string() + " -L" + kRuntimeLibDir +
             " -ltlc_runtime -Wl,-rpath," + kRuntimeLibDir + " -lm") == 0);
  CHECK(sh(exe) == 0);
}

TEST_CASE("TLC_LAUNCH_EXPORT defines exported launch symbols; the float16 helpers fill and read a float16 gemm") {
  auto dir = test::scratchDir("export");
  std::string so = (dir / "gemm.so").string();
  std::vector<std::string> defines = {"dtype=float16", "block_M=32", "block_N=32", "block_K=16"};
  test::buildCpuModule("examples/gemm/gemm.tl", defines, so);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = test::compileTl(sources, diags, "examples/gemm/gemm.tl", defines);
  REQUIRE(m);
  std::string err;
  REQUIRE(driver::writeHostFiles(*m, so, (dir / "gemm.h").string(), (dir / "gemm_embed.c").string(), &err));
  std::ofstream(dir / "export.c") << "#define TLC_LAUNCH_EXPORT\n#include \"gemm.h\"\n";
  std::ofstream(dir / "main.c") << R"(#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define TLC_LAUNCH_EXTERN
#include "gemm.h"
int main(void) {
  const int64_t M = 37, N = 21, K = 50;
  tlc_float16 *A = malloc(2 * M * K), *B = malloc(2 * K * N), *C = malloc(2 * M * N);
  float* ref = calloc(M * N, sizeof(float));
  uint32_t h;
  /* Known bit patterns, then every float16 through float and back. */
  if (tlc_float_to_float16(1.0f) != 0x3c00 || tlc_float_to_float16(-2.0f) != 0xc000 ||
      tlc_float_to_float16(65504.0f) != 0x7bff || tlc_float_to_float16(65520.0f) != 0x7c00 ||
      tlc_float_to_float16(ldexpf(1.0f, -24)) != 0x0001 || tlc_float_to_float16(0.1f) != 0x2e66 ||
      tlc_float16_to_float(0x0001) != ldexpf(1.0f, -24) || tlc_float_to_bfloat16(1.0f) != 0x3f80 ||
      tlc_float_to_bfloat16(1.00390625f) != 0x3f80 || tlc_float_to_bfloat16(1.01171875f) != 0x3f82 ||
      tlc_bfloat16_to_float(0x4049) != 3.140625f) return 5;
  for (h = 0; h < 0x10000u; ++h) {
    int is_nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    if (is_nan ? !isnan(tlc_float16_to_float((tlc_float16)h)) : tlc_float_to_float16(tlc_float16_to_float((tlc_float16)h)) != h) {
      fprintf(stderr, "float16 %04x does not round-trip\n", h);
      return 6;
    }
    if (!isnan(tlc_bfloat16_to_float((tlc_bfloat16)h)) && tlc_float_to_bfloat16(tlc_bfloat16_to_float((tlc_bfloat16)h)) != h)
      return 7;
  }
  for (int64_t i = 0; i < M * K; ++i) A[i] = tlc_float_to_float16((float)((i * 7) % 13) / 4.0f - 1.5f);
  for (int64_t i = 0; i < K * N; ++i) B[i] = tlc_float_to_float16((float)((i * 5) % 11) / 4.0f - 1.25f);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) ref[i * N + j] += tlc_float16_to_float(A[i * K + k]) * tlc_float16_to_float(B[k * N + j]);
  tlc_status st = gemm_launch(gemm_module(), A, B, C, M, K, N, NULL);
  if (st != TLC_SUCCESS) { fprintf(stderr, "launch: %s\n", tlcGetLastError()); return 2; }
  for (int64_t i = 0; i < M * N; ++i)
    if (fabsf(tlc_float16_to_float(C[i]) - ref[i]) > 1e-3f * fabsf(ref[i]) + 0.05f) { fprintf(stderr, "C[%ld]\n", (long)i); return 3; }
  printf("ok\n");
  return 0;
}
)";
  std::string lib = (dir / "libgemmlaunch.so").string();
  std::string inc = " -I" + kRuntimeInclude + " -I" + dir.string();
  std::string rt = " -L" + kRuntimeLibDir + " -ltlc_runtime -Wl,-rpath," + kRuntimeLibDir;
  // Hidden by default: only what the header marks exported is visible.
  std::string obj = (dir / "export.o").string(), embedObj = (dir / "embed.o").string();
  REQUIRE(sh("cc -std=c99 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -O1 -c" + inc + " -o " + obj + " " +
             (dir / "export.c").string()) == 0);
  REQUIRE(sh("cc -std=c99 -fPIC -O1 -c" + inc + " -o " + embedObj + " " + (dir / "gemm_embed.c").string()) == 0);
  REQUIRE(sh("cc -shared -o " + lib + " " + obj + " " + embedObj + rt) == 0);
  CHECK(sh("nm -D --defined-only " + lib + " | grep -qw gemm_launch") == 0);
  std::string exe = (dir / "main").string();
  REQUIRE(sh("cc -std=c99 -Wall -Wextra -Werror -O1" + inc + " -o " + exe + " " + (dir / "main.c").string() + " -L" +
             dir.string() + " -lgemmlaunch -Wl,-rpath," + dir.string() + rt + " -lm") == 0);
  CHECK(sh(exe) == 0);
}
