// Data-driven tests of the CUDA backend's pipeline expansion on textual IR:
// every tests/cuda/pipelines/*.tir is parsed, compiled by generateCuda for
// sm_80, or the architecture of a `// ARCH: sm_XX` line, persistent gemm
// kernels unless a `// NO-PERSISTENT` line asks for a block per tile (the
// passes the backend runs, then emission, without #line
// directives), and the CUDA C it emits, followed by its diagnostics as
//   warning|error <line>:<col>: <message>
// is checked against the file's CHECK lines.
#include <doctest/doctest.h>

#include <filesystem>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/ir/ir_parser.h"
#include "tests/support/filecheck.h"
#include "tests/support/tir_files.h"

using namespace tlc;
namespace fs = std::filesystem;

TEST_CASE("every tests/cuda/pipelines/*.tir file expands as its CHECK lines expect") {
  testing::forEachTirFile("cuda/pipelines", [](const testing::TestFile& f, const ir::Module& module,
                                                DiagnosticEngine& diags) {
    cuda::CudaOptions options;
    options.arch = "sm_80";
    if (size_t at = f.text.find("// ARCH: "); at != std::string::npos)
      options.arch = f.text.substr(at + 9, f.text.find('\n', at) - at - 9);
    options.lineDirectives = false;
    options.persistent = f.text.find("// NO-PERSISTENT") == std::string::npos;
    auto generated = cuda::generateCuda(module, options, diags);
    std::string printed = generated ? generated->source : "";
    for (const Diagnostic& d : diags.diagnostics())
      printed += std::string(d.severity == Severity::Error ? "error " : "warning ") + std::to_string(d.loc.line) + ":" +
                 std::to_string(d.loc.col) + ": " + d.message + "\n";
    auto check = testing::fileCheck(printed, f.text);
    CHECK_MESSAGE(check.ok, check.message);
  });
}
