// Data-driven tests of the CUDA backend's pipeline expansion on textual IR:
// every tests/cuda/pipelines/*.tir is parsed, compiled by generateCuda for
// sm_80 (the passes the backend runs, then emission, without #line
// directives), and the CUDA C it emits, followed by its diagnostics as
//   warning|error <line>:<col>: <message>
// is checked against the file's CHECK lines.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/ir/ir_parser.h"
#include "tests/support/filecheck.h"

using namespace tlc;
namespace fs = std::filesystem;

TEST_CASE("every tests/cuda/pipelines/*.tir file expands as its CHECK lines expect") {
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(fs::path(TLC_SOURCE_DIR) / "tests" / "cuda" / "pipelines"))
    if (e.path().extension() == ".tir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const fs::path& path : files) {
    INFO("file: " << path.filename().string());
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer(path.filename().string(), text.str());
    auto module = ir::parseIRModule(sources, diags, file);
    REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
    cuda::CudaOptions options;
    options.arch = "sm_80";
    options.lineDirectives = false;
    auto generated = cuda::generateCuda(*module, options, diags);
    std::string printed = generated ? generated->source : "";
    for (const Diagnostic& d : diags.diagnostics())
      printed += std::string(d.severity == Severity::Error ? "error " : "warning ") + std::to_string(d.loc.line) + ":" +
                 std::to_string(d.loc.col) + ": " + d.message + "\n";
    auto check = testing::fileCheck(printed, text.str());
    CHECK_MESSAGE(check.ok, check.message);
  }
}
