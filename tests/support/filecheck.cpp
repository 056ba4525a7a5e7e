#include "tests/support/filecheck.h"

#include <optional>
#include <sstream>
#include <vector>

namespace tlc::testing {

namespace {

enum class CheckKind { Plain, Next, Not, Label };

struct Check {
  CheckKind kind;
  std::string pattern;
  size_t fileLine;  // 1-based line in the check file
};

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::string squeeze(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    bool isSpace = c == ' ' || c == '\t';
    if (isSpace && space) continue;
    out += isSpace ? ' ' : c;
    space = isSpace;
  }
  size_t b = out.find_first_not_of(' '), e = out.find_last_not_of(' ');
  return b == std::string::npos ? "" : out.substr(b, e - b + 1);
}

std::vector<Check> parseChecks(std::string_view file, std::string_view prefix) {
  std::vector<Check> checks;
  std::vector<std::string> lines = splitLines(file);
  const std::pair<std::string, CheckKind> kinds[] = {{"-NEXT:", CheckKind::Next},
                                                     {"-NOT:", CheckKind::Not},
                                                     {"-LABEL:", CheckKind::Label},
                                                     {":", CheckKind::Plain}};
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    size_t at = line.find("// " + std::string(prefix));
    if (at == std::string::npos) continue;
    size_t after = at + 3 + prefix.size();
    for (const auto& [suffix, kind] : kinds) {
      if (line.compare(after, suffix.size(), suffix) == 0) {
        checks.push_back({kind, squeeze(line.substr(after + suffix.size())), i + 1});
        break;
      }
    }
  }
  return checks;
}

const char* kindName(CheckKind k) {
  switch (k) {
    case CheckKind::Plain: return "CHECK";
    case CheckKind::Next: return "CHECK-NEXT";
    case CheckKind::Not: return "CHECK-NOT";
    case CheckKind::Label: return "CHECK-LABEL";
  }
  return "CHECK";
}

std::string numbered(const std::vector<std::string>& lines, size_t mark) {
  std::ostringstream out;
  for (size_t i = 0; i < lines.size(); ++i)
    out << (i == mark ? ">" : " ") << (i + 1 < 10 ? "   " : i + 1 < 100 ? "  " : " ") << i + 1 << " | " << lines[i]
        << "\n";
  return out.str();
}

}  // namespace

FileCheckResult fileCheck(std::string_view input, std::string_view checkFile, std::string_view prefix) {
  std::vector<Check> checks = parseChecks(checkFile, prefix);
  std::vector<std::string> lines = splitLines(input);
  std::vector<std::string> squeezed;
  for (const std::string& l : lines) squeezed.push_back(squeeze(l));
  auto contains = [&](size_t line, const std::string& pattern) {
    return squeezed[line].find(pattern) != std::string::npos;
  };
  auto failure = [&](const Check& c, const std::string& what, size_t mark) {
    FileCheckResult r;
    r.ok = false;
    r.message = "check file line " + std::to_string(c.fileLine) + ": " + kindName(c.kind) + ": " + c.pattern + "\n" +
                what + "\ninput (> marks where the search started):\n" + numbered(lines, mark);
    return r;
  };
  if (checks.empty()) {
    FileCheckResult r;
    r.ok = false;
    r.message = "no " + std::string(prefix) + " lines in the check file";
    return r;
  }

  // Labels cut the input into sections, found first and in order.
  std::vector<size_t> labelLine(checks.size(), 0);
  size_t searchFrom = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    if (checks[i].kind != CheckKind::Label) continue;
    size_t l = searchFrom;
    while (l < lines.size() && !contains(l, checks[i].pattern)) ++l;
    if (l == lines.size()) return failure(checks[i], "label not found", searchFrom);
    labelLine[i] = l;
    searchFrom = l + 1;
  }

  size_t pos = 0;                     // first line a positive check may match
  std::optional<size_t> lastMatch;    // line of the previous positive match
  size_t sectionEnd = lines.size();   // end of the current label's section
  std::vector<const Check*> pendingNots;
  auto nextLabelAfter = [&](size_t i) {
    for (size_t j = i + 1; j < checks.size(); ++j)
      if (checks[j].kind == CheckKind::Label) return labelLine[j];
    return lines.size();
  };
  sectionEnd = nextLabelAfter(static_cast<size_t>(-1));
  auto checkNots = [&](size_t from, size_t to) -> std::optional<FileCheckResult> {
    for (const Check* n : pendingNots)
      for (size_t l = from; l < to && l < lines.size(); ++l)
        if (contains(l, n->pattern)) return failure(*n, "found on input line " + std::to_string(l + 1), l);
    pendingNots.clear();
    return std::nullopt;
  };

  for (size_t i = 0; i < checks.size(); ++i) {
    const Check& c = checks[i];
    switch (c.kind) {
      case CheckKind::Not: pendingNots.push_back(&c); break;
      case CheckKind::Label: {
        if (auto f = checkNots(pos, labelLine[i])) return *f;
        lastMatch = labelLine[i];
        pos = labelLine[i] + 1;
        sectionEnd = nextLabelAfter(i);
        break;
      }
      case CheckKind::Next: {
        if (!lastMatch) return failure(c, "CHECK-NEXT needs a previous match", 0);
        size_t l = *lastMatch + 1;
        if (l >= lines.size() || !contains(l, c.pattern))
          return failure(c, "not found on the line after the previous match (input line " + std::to_string(*lastMatch + 1) + ")",
                         l < lines.size() ? l : lines.size() - 1);
        if (auto f = checkNots(pos, l)) return *f;
        lastMatch = l;
        pos = l + 1;
        break;
      }
      case CheckKind::Plain: {
        size_t l = pos;
        while (l < sectionEnd && !contains(l, c.pattern)) ++l;
        if (l >= sectionEnd) return failure(c, "not found", pos < lines.size() ? pos : lines.size() - 1);
        if (auto f = checkNots(pos, l)) return *f;
        lastMatch = l;
        pos = l + 1;
        break;
      }
    }
  }
  if (auto f = checkNots(pos, sectionEnd)) return *f;
  return {};
}

}  // namespace tlc::testing
