// Negative tests of the front end, driven by the files in tests/diagnostics/.
//
// Each `.tl` file there is compiled with compileSource. A comment
//   # expected-error: <kind>
//   # expected-error: <kind>: <part of the message>
// (or expected-warning) on a line must be matched by a diagnostic of that
// printed kind located on that line, and every error must be expected on its
// line; `# expected-note: <part of the message>` must be matched by a note
// on its line (tests/support/expected_diagnostics.h). A diagnostic located in another file (an imported module) counts on
// the line of its first note in the test file (the macro call); one about a
// -D binding counts on the line of the `# defines: NAME=VALUE ...` comment
// that passes the bindings.
//
// A second test fails when some registered diagnostic kind has no negative
// test: front-end kinds (lexer, parser, sema, defines) need a .tl file here;
// the others need a test file under tests/ that names them as expected.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/sema/sema_test_util.h"
#include "tests/support/expected_diagnostics.h"

using namespace tlc;
using namespace tlc::test;
namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> diagnosticFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TLC_SOURCE_DIR) / "tests" / "diagnostics"))
    if (e.is_regular_file() && e.path().extension() == ".tl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The `# defines: NAME=VALUE ...` comment of a test file: the bindings and its line.
void parseDefines(const std::string& text, std::vector<Define>& defines, uint32_t& definesLine) {
  std::istringstream in(text);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    size_t at = line.find("# defines:");
    if (at == std::string::npos) continue;
    definesLine = n;
    std::istringstream words(line.substr(at + 10));
    std::string w;
    while (words >> w) {
      if (w == "#") break;
      size_t eq = w.find('=');
      if (eq == std::string::npos) break;
      defines.push_back({w.substr(0, eq), w.substr(eq + 1)});
    }
  }
}

// The line of the test file a diagnostic counts on (0: none).
uint32_t lineInFile(const Diagnostic& d, uint32_t file, uint32_t definesLine, const SourceManager& sm) {
  if (d.loc.file == file) return d.loc.line;
  if (d.loc.known() && sm.name(d.loc.file) == "<command line>") return definesLine;
  for (const DiagNote& n : d.notes)
    if (n.loc.file == file) return n.loc.line;
  return 0;
}

// Printed names of the kinds the front end reports.
std::set<std::string> frontEndKinds() {
  return {
#define DIAG(Name, Sev, Printed) Printed,
#include "compiler/lexer/lexer_diagnostics.def"
#include "compiler/parser/parser_diagnostics.def"
#include "compiler/sema/sema_diagnostics.def"
#undef DIAG
      "bad-define", "file-not-readable"};
}

}  // namespace

TEST_CASE("each negative test in tests/diagnostics gets exactly its expected diagnostics") {
  std::vector<fs::path> files = diagnosticFiles();
  REQUIRE(!files.empty());
  for (const fs::path& path : files) {
    std::string text = readFile(path);
    std::vector<testing::ExpectedDiagnostic> expected = testing::parseExpectedDiagnostics(text);
    std::vector<Define> defines;
    uint32_t definesLine = 0;
    parseDefines(text, defines, definesLine);
    // Compile from the real path so that imports next to the file resolve.
    Compiled c = compileFile(path.string(), defines);
    INFO("file: " << path.filename().string() << "\ndiagnostics:\n" << c.rendered());
    REQUIRE(c.file != 0);
    CHECK_MESSAGE(!expected.empty(), "a negative test needs at least one `# expected-error: <kind>` comment");
    bool anyError = false;
    for (const Diagnostic& d : c.diags->diagnostics()) {
      if (d.severity == Severity::Note) continue;
      anyError = anyError || d.severity == Severity::Error;
      std::string kind = diagKindInfo(d.kind).printed;
      std::string severity = d.severity == Severity::Error ? "error" : "warning";
      CHECK_MESSAGE(d.loc.known(), "diagnostic without a location: " << d.message);
      uint32_t line = lineInFile(d, c.file, definesLine, *c.sources);
      bool ok = false;
      for (testing::ExpectedDiagnostic& e : expected) {
        if (e.line == line && e.kind == kind && e.severity == severity &&
            d.message.find(e.substring) != std::string::npos) {
          e.matched = true;
          ok = true;
        }
      }
      CHECK_MESSAGE(ok, "line " << line << ": unexpected " << severity << " [" << kind << "] " << d.message);
    }
    testing::matchExpectedNotes(expected, c.diags->diagnostics(), c.file);
    for (const testing::ExpectedDiagnostic& e : expected)
      CHECK_MESSAGE(e.matched, "line " << e.line << ": expected " << e.severity << " [" << e.kind << "]"
                                       << (e.substring.empty() ? "" : " containing \"" + e.substring + "\"")
                                       << " was not reported");
    if (anyError) CHECK(!c.module.has_value());
  }
}

TEST_CASE("every registered diagnostic kind has a negative test") {
  std::set<std::string> frontEnd = frontEndKinds();
  std::string frontEndTexts;
  for (const fs::path& p : diagnosticFiles()) frontEndTexts += readFile(p);
  // Other phases keep their negative tests next to their own tests
  // (tests/ir_diagnostics/*.tir, pass tests, ...): any test file that names
  // the kind as an expected diagnostic counts.
  std::string otherTexts;
  fs::path self = fs::path(TLC_SOURCE_DIR) / "tests" / "sema" / "diagnostics_test.cpp";
  for (const auto& e : fs::recursive_directory_iterator(fs::path(TLC_SOURCE_DIR) / "tests")) {
    if (!e.is_regular_file() || e.path() == self || e.file_size() > (1 << 20)) continue;
    otherTexts += readFile(e.path());
  }
  std::vector<std::string> missing;
  for (const DiagKindInfo& info : allDiagKinds()) {
    std::string name = info.printed;
    std::string sev = info.severity == Severity::Warning ? "warning" : info.severity == Severity::Note ? "note" : "error";
    std::string mention = "expected-" + sev + ": " + name;
    bool covered = frontEnd.count(name) ? frontEndTexts.find(mention) != std::string::npos
                                        : otherTexts.find(mention) != std::string::npos;
    if (!covered) missing.push_back(name);
  }
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  CHECK_MESSAGE(missing.empty(), "diagnostic kinds without a negative test:" << list
                                     << " (front-end kinds need a tests/diagnostics/*.tl file with `# expected-error: "
                                        "<kind>`; other kinds a test file under tests/ naming them)");
}
