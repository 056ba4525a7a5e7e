// Negative tests of the .tir parser and verifier, driven by the files in
// tests/ir_diagnostics/: a line carrying `// expected-error: <kind>` must get
// an error of that kind, and no other line may get one. Every "ir-*" kind
// registered in compiler/ir/ir_diagnostics.def must be produced by some file.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> diagnosticFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TLC_SOURCE_DIR) / "tests" / "ir_diagnostics"))
    if (entry.path().extension() == ".tir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// (line, kind) pairs from `// expected-error: kind` comments.
std::set<std::pair<uint32_t, std::string>> expectedErrors(const std::string& text) {
  std::set<std::pair<uint32_t, std::string>> out;
  std::istringstream in(text);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    static const std::string marker = "// expected-error: ";
    size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    std::string kind = line.substr(at + marker.size());
    while (!kind.empty() && std::isspace(static_cast<unsigned char>(kind.back()))) kind.pop_back();
    out.insert({n, kind});
  }
  return out;
}

}  // namespace

TEST_CASE("every .tir negative test gets exactly its expected errors, and every ir-* kind is exercised") {
  std::set<std::string> covered;
  std::vector<fs::path> files = diagnosticFiles();
  REQUIRE(!files.empty());
  for (const fs::path& path : files) {
    std::string text = readFile(path);
    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer(path.filename().string(), text);
    auto module = parseIRModule(sources, diags, file);
    INFO("file: " << path.filename().string() << "\ndiagnostics:\n" << diags.renderAll());
    CHECK(!module.has_value());
    auto expected = expectedErrors(text);
    REQUIRE(!expected.empty());
    std::set<std::pair<uint32_t, std::string>> got;
    for (const Diagnostic& d : diags.diagnostics()) {
      if (d.severity != Severity::Error) continue;
      std::string kind = diagKindInfo(d.kind).printed;
      CHECK_MESSAGE(d.loc.known(), "diagnostic without a location: " << d.message);
      CHECK_MESSAGE(d.loc.file == file, "diagnostic outside the .tir file: " << d.message);
      got.insert({d.loc.line, kind});
      covered.insert(kind);
    }
    for (const auto& [line, kind] : expected)
      CHECK_MESSAGE(got.count({line, kind}), "line " << line << ": expected " << kind << " was not reported");
    for (const auto& [line, kind] : got)
      CHECK_MESSAGE(expected.count({line, kind}), "line " << line << ": unexpected " << kind);
  }
  for (const DiagKindInfo& info : allDiagKinds()) {
    std::string name = info.printed;
    if (name.rfind("ir-", 0) != 0) continue;
    CHECK_MESSAGE(covered.count(name), "no file under tests/ir_diagnostics/ produces " << name);
  }
}
