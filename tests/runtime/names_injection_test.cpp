// Text that reaches generated code stays text: quoted .tir function names
// that try to close a kernel signature or the header's string literal, and
// source file names with quotes and line breaks in the CUDA #line directives.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler/backends/metadata.h"
#include "compiler/driver/cpu_target.h"
#include "compiler/driver/header_gen.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/sema/frontend.h"
#include "tests/runtime/build_helpers.h"
#ifdef TLC_TEST_HAVE_CUDA
#include "compiler/driver/cuda_target.h"
#endif

using namespace tlc;

namespace {

std::optional<ir::Module> parseTir(SourceManager& sources, DiagnosticEngine& diags, const std::string& file) {
  std::string error;
  uint32_t id = sources.addFile(std::string(TLC_SOURCE_DIR) + "/tests/runtime/data/" + file, error);
  REQUIRE_MESSAGE(id != 0, error);
  return ir::parseIRModule(sources, diags, id);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kInjectedCudaName = "evil(float* A) { A[0] = 42.0f; } extern \"C\" __global__ void x";
const std::string kInjectedHeaderName = "k\", &kernel_); __builtin_trap(); (void)(\"";

}  // namespace

TEST_CASE("a .tir function name cannot add code to the header: it stays one escaped string literal") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = parseTir(sources, diags, "inject_header.tir");
  INFO(diags.renderAll());
  REQUIRE(m);
  REQUIRE(m->funcs[0]->name == kInjectedHeaderName);
  std::string header = driver::generateHeader(*m, driver::HeaderOptions{});
  CHECK(count(header, "__builtin_trap") == 2);  // in the literal and in the comment, never as code
  CHECK(header.find("tlcGetKernel(module, \"k\\\", &kernel_); __builtin_trap(); (void)(\\\"\", &kernel_);") !=
        std::string::npos);
  auto dir = test::scratchDir("inject-header");
  std::ofstream(dir / "k.h") << header;
  std::ofstream(dir / "use.c") << "#include \"k.h\"\nint main(void) { return 0; }\n";
  std::string cmd = "cd '" + dir.string() + "' && cc -std=c99 -Wall -Werror -pedantic -fsyntax-only -I" +
                    std::string(TLC_SOURCE_DIR) + "/runtime/include use.c";
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("a .tir function name cannot add a kernel: CPU symbols and metadata keep it one kernel") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = parseTir(sources, diags, "inject_cuda.tir");
  INFO(diags.renderAll());
  REQUIRE(m);
  REQUIRE(m->funcs[0]->name == kInjectedCudaName);
  // The metadata keeps the user's name and records the mangled symbol.
  meta::MetadataOptions o;
  o.symbolFor = cpu::cpuKernelSymbol;
  meta::ParsedModule pm;
  std::string err;
  REQUIRE(meta::parseModuleMetadata(meta::moduleMetadataJson(*m, o), &pm, &err));
  REQUIRE(pm.kernels.size() == 1);
  CHECK(pm.kernels[0].name == kInjectedCudaName);
  CHECK(pm.kernels[0].symbol.rfind("tlc_kernel_tlcxevil_28float_2A_20A_29", 0) == 0);
  CHECK(pm.kernels[0].symbol.find_first_of(" (){}*\"") == std::string::npos);
  driver::RunSettings s;
  s.kernel = kInjectedCudaName;
  s.check = true;
  std::ostringstream out;
  s.out = &out;
  CHECK_MESSAGE(driver::runOnCpu(*m, s, cpu::CpuOptions{}, diags) == 0, out.str() << diags.renderAll());
}

#ifdef TLC_TEST_HAVE_CUDA
TEST_CASE("a .tir function name cannot add a kernel to the CUDA C") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = parseTir(sources, diags, "inject_cuda.tir");
  REQUIRE(m);
  driver::CudaOptions options;
  options.arch = "sm_80";
  cuda::CudaModule generated;
  auto cubin = driver::compileForCuda(*m, options, false, diags, &generated);
  std::string rendered = diags.renderAll();
  if (!cubin && rendered.find("cannot load NVRTC") != std::string::npos) return;
  INFO(rendered);
  CHECK(cubin.has_value());
  CHECK(count(generated.source, "__global__") == 1);
  CHECK(generated.source.find("42.0f") == std::string::npos);
  REQUIRE(generated.funcs.size() == 1);
  REQUIRE(generated.funcs[0].kernels.size() == 1);
  CHECK(generated.funcs[0].funcName == kInjectedCudaName);
  CHECK(generated.funcs[0].kernels[0].name ==
        "tlcxevil_28float_2A_20A_29_20_7B_20A_5B0_5D_20_3D_2042_2E0f_3B_20_7D_20extern_20_22C_22_20_5F_5Fglobal_5F_5F_"
        "20void_20x_kernel0");
}

TEST_CASE("source file names with quotes, backslashes and line breaks compile in #line directives") {
  for (std::string name : {"dir/quote\"name.tl", "new\nline.tl", "back\\slash.tl", "per%cent.tl", "caf\xc3\xa9.tl"}) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer(name, "def k(C: Tensor[(64,), float32]):\n"
                                            "    with T.Kernel(1, threads=64) as b:\n"
                                            "        for i in T.Parallel(64):\n"
                                            "            C[i] = 1.0\n");
    auto m = compileSource(sources, diags, file, {});
    REQUIRE(m);
    driver::CudaOptions options;
    options.arch = "sm_80";
    cuda::CudaModule generated;
    auto cubin = driver::compileForCuda(*m, options, false, diags, &generated);
    std::string rendered = diags.renderAll();
    if (!cubin && rendered.find("cannot load NVRTC") != std::string::npos) return;
    CAPTURE(name);
    INFO(rendered);
    CHECK(cubin.has_value());
  }
}
#endif
