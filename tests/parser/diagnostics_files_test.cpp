// The lexer's and parser's negative tests (tests/diagnostics/lexer_*.tl and
// parser_*.tl) checked against lex + parse alone, so a front-end syntax
// regression shows up here even before sema runs: every
// `# expected-error: <kind>` comment of a lexer or parser kind must be
// matched on its line, no other lexer or parser error may appear, and every
// lexer and parser kind must be exercised by some file. (The full runner over
// the directory, through compileSource, is tests/sema/diagnostics_test.cpp.)
#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "compiler/parser/parser.h"
#include "tests/lexer/golden.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

std::set<std::string> syntaxKinds() {
  return {
#define DIAG(Name, Sev, Printed) Printed,
#include "compiler/lexer/lexer_diagnostics.def"
#include "compiler/parser/parser_diagnostics.def"
#undef DIAG
  };
}

struct Expected {
  uint32_t line;
  std::string kind;
  bool matched = false;
};

std::vector<Expected> expectations(const std::string& text, const std::set<std::string>& kinds) {
  std::vector<Expected> out;
  std::istringstream in(text);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    size_t at = line.find("# expected-error: ");
    if (at == std::string::npos) continue;
    std::string rest = line.substr(at + 18);
    std::string kind = rest.substr(0, rest.find_first_of(": \r"));
    if (kinds.count(kind)) out.push_back({n, kind});
  }
  return out;
}

}  // namespace

TEST_CASE("lexer and parser negative tests report exactly their expected syntax errors") {
  std::set<std::string> kinds = syntaxKinds();
  std::set<std::string> exercised;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(TLC_SOURCE_DIR) / "tests/diagnostics")) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".tl" || !(name.starts_with("lexer_") || name.starts_with("parser_"))) continue;
    ++files;
    SourceManager sm;
    DiagnosticEngine diags(sm);
    uint32_t file = testing::addInput(sm, entry.path());
    std::vector<Expected> expected = expectations(sm.text(file), kinds);
    parseModule(sm, diags, file);
    INFO("file: " << name << "\n" << diags.renderAll());
    CHECK(!expected.empty());
    for (const Diagnostic& d : diags.diagnostics()) {
      std::string kind = diagKindInfo(d.kind).printed;
      bool ok = false;
      for (Expected& e : expected) {
        if (e.line == d.loc.line && e.kind == kind) ok = e.matched = true;
      }
      CHECK_MESSAGE(ok, "line " << d.loc.line << ": unexpected [" << kind << "] " << d.message);
      exercised.insert(kind);
    }
    for (const Expected& e : expected)
      CHECK_MESSAGE(e.matched, "line " << e.line << ": expected [" << e.kind << "] was not reported");
  }
  CHECK(files >= 10);
  for (const std::string& k : kinds) CHECK_MESSAGE(exercised.count(k), "no negative test reports [" << k << "]");
}
