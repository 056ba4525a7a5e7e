// Negative tests of the CUDA backend written as .tl programs: every
// tests/cuda/diagnostics/*.tl compiles cleanly through the front end, then
// the CUDA backend (sm_90a) must report exactly the errors and warnings its
// `# expected-error: <kind>[: <part of the message>]` comments name, on
// their lines, with the notes its `# expected-note: <text>` comments name
// (tests/support/expected_diagnostics.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/sema/frontend.h"
#include "tests/support/expected_diagnostics.h"
#include "tests/support/test_files.h"

using namespace tlc;
namespace fs = std::filesystem;

TEST_CASE("every tests/cuda/diagnostics/*.tl gets exactly its expected CUDA backend diagnostics") {
  auto files = testing::readTestFiles(fs::path(TLC_SOURCE_DIR) / "tests" / "cuda" / "diagnostics", ".tl");
  REQUIRE(!files.empty());
  for (const testing::TestFile& f : files) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    std::string error;
    uint32_t file = sources.addFile(f.path.string(), error);
    REQUIRE_MESSAGE(file != 0, error);
    std::vector<testing::ExpectedDiagnostic> expected = testing::parseExpectedDiagnostics(std::string(sources.text(file)));
    auto module = compileSource(sources, diags, file, {});
    INFO("file: " << f.name << "\ndiagnostics:\n" << diags.renderAll());
    REQUIRE(module);
    REQUIRE(diags.diagnostics().empty());
    cuda::CudaOptions options;
    options.arch = "sm_90a";
    auto cu = cuda::generateCuda(*module, options, diags);
    bool anyError = false;
    for (const Diagnostic& d : diags.diagnostics()) {
      if (d.severity == Severity::Note) continue;
      anyError = anyError || d.severity == Severity::Error;
      std::string kind = diagKindInfo(d.kind).printed;
      std::string severity = d.severity == Severity::Error ? "error" : "warning";
      CHECK_MESSAGE(d.loc.file == file, "diagnostic outside the test file: " << d.message);
      bool ok = false;
      for (testing::ExpectedDiagnostic& e : expected)
        if (e.line == d.loc.line && e.kind == kind && e.severity == severity &&
            d.message.find(e.substring) != std::string::npos)
          ok = e.matched = true;
      CHECK_MESSAGE(ok, "line " << d.loc.line << ": unexpected " << severity << " [" << kind << "] " << d.message);
    }
    testing::matchExpectedNotes(expected, diags.diagnostics(), file);
    for (const testing::ExpectedDiagnostic& e : expected)
      CHECK_MESSAGE(e.matched, "line " << e.line << ": expected " << e.severity
                                       << (e.kind.empty() ? "" : " [" + e.kind + "]") << " containing \""
                                       << e.substring << "\" was not reported");
    if (anyError) CHECK_FALSE(cu.has_value());
  }
}
