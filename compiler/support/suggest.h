// "Did you mean" hints: the one rule for suggesting a name close to a
// misspelled one, used for undefined names, builtins, keyword arguments and
// command-line option values.
#pragma once

#include <string>
#include <vector>

namespace tlc {

// Levenshtein distance (insertions, deletions, substitutions).
size_t editDistance(const std::string& a, const std::string& b);

// The candidate closest to `word`: one equal but for letter case, else the
// nearest within max(1, |word| / 3) edits (ties go to the earliest in
// sorted order). Empty when none is close enough or `word` is a candidate.
std::string closestMatch(const std::string& word, std::vector<std::string> candidates);

// "; did you mean `X`?" for closestMatch, or "".
std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tlc
