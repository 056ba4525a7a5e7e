// A small FileCheck for tests on textual IR.
//
// Check lines live in the test file as comments:
//   // CHECK: text        the next line (after the previous match) containing `text`
//   // CHECK-NEXT: text   the line right after the previous match contains `text`
//   // CHECK-NOT: text    no line between the previous match and the next match
//                         (or the end of the input) contains `text`
//   // CHECK-LABEL: text  like CHECK, but the input is first cut at every label,
//                         so the checks after a label only see its section
// Matching is by substring, line by line, after trimming the pattern; runs of
// spaces in the pattern and the input compare as one space.
#pragma once

#include <string>
#include <string_view>

namespace tlc::testing {

struct FileCheckResult {
  bool ok = true;
  std::string message;  // on failure: which check failed, and the input with line numbers
};

// Checks `input` against the check lines found in `checkFile` (with the given prefix).
FileCheckResult fileCheck(std::string_view input, std::string_view checkFile, std::string_view prefix = "CHECK");

}  // namespace tlc::testing
