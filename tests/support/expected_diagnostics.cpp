#include "tests/support/expected_diagnostics.h"

#include <cctype>
#include <regex>
#include <sstream>

namespace tlc::testing {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

}  // namespace

std::vector<ExpectedDiagnostic> parseExpectedDiagnostics(const std::string& text) {
  static const std::regex marker(R"(#\s*expected-(error|warning|note):\s*)");
  std::vector<ExpectedDiagnostic> out;
  std::istringstream in(text);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    std::vector<std::smatch> found;
    for (std::sregex_iterator it(line.begin(), line.end(), marker), end; it != end; ++it) found.push_back(*it);
    for (size_t k = 0; k < found.size(); ++k) {
      size_t from = found[k].position(0) + found[k].length(0);
      size_t to = k + 1 < found.size() ? static_cast<size_t>(found[k + 1].position(0)) : line.size();
      std::string rest = trim(line.substr(from, to - from));
      ExpectedDiagnostic e{n, found[k][1].str(), rest, "", false};
      if (e.severity == "note") {
        e.kind.clear();
        e.substring = rest;
      } else if (size_t c = rest.find(": "); c != std::string::npos) {
        e.kind = rest.substr(0, c);
        e.substring = rest.substr(c + 2);
      }
      out.push_back(e);
    }
  }
  return out;
}

void matchExpectedNotes(std::vector<ExpectedDiagnostic>& expected, const std::vector<Diagnostic>& diags, uint32_t file) {
  for (const Diagnostic& d : diags)
    for (const DiagNote& note : d.notes)
      for (ExpectedDiagnostic& e : expected)
        if (e.severity == "note" && note.loc.file == file && note.loc.line == e.line &&
            note.message.find(e.substring) != std::string::npos)
          e.matched = true;
}

}  // namespace tlc::testing
