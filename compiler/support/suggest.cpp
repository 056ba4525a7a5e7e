#include "compiler/support/suggest.h"

#include <algorithm>
#include <cctype>

namespace tlc {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closestMatch(const std::string& word, std::vector<std::string> candidates) {
  std::sort(candidates.begin(), candidates.end());
  if (std::find(candidates.begin(), candidates.end(), word) != candidates.end()) return "";
  std::string lowered = lower(word);
  for (const std::string& c : candidates)
    if (lower(c) == lowered) return c;
  std::string best;
  size_t bestDist = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    if (c.size() > word.size() + bestDist || word.size() > c.size() + bestDist) continue;
    size_t d = editDistance(word, c);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best = closestMatch(word, candidates);
  return best.empty() ? "" : "; did you mean `" + best + "`?";
}

}  // namespace tlc
