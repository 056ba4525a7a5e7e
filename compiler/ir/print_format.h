// The text of the lines a Print statement writes (T.print), as a printf
// format and the values it takes, so that every target writes the same bytes:
// the interpreter formats each conversion with snprintf, the CPU backend and
// the CUDA code call printf with the whole format.
//
// A line is
//   AT ": block " B [", thread " T] {", " NAME "=" I} ": " [MESSAGE ": "] [ELEMENT "[" J, ... "] = "] VALUE "\n"
// where AT is the statement's `at` (left out with its ": " when empty), B the
// block index (`3` for a one-dimensional grid, `(3, 0)` or `(3, 0, 1)`
// otherwise), T the GPU thread (CUDA targets only), NAME=I the enclosing
// Parallel iteration, ELEMENT[J, ...] the element a buffer print shows.
//
// Values are converted by dtype (printValueConversion): bool as `True` /
// `False`, integers in decimal, floats with enough significant digits to read
// back exactly in their own type (17 for float64, 9 for float32, 5 for
// float16, 4 for bfloat16, 3 for float8), narrow floats widened exactly; NaN
// prints as `nan` whatever its sign and payload, infinities as `inf` / `-inf`.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::ir {

// How a value travels to printf.
enum class PrintArgKind {
  Int64,   // a signed integer passed as long long ("%lld")
  UInt64,  // an unsigned integer passed as unsigned long long ("%llu")
  Double,  // a float passed as double, NaN replaced by a positive quiet NaN
  Bool,    // passed as the string "True" or "False" ("%s")
};

struct PrintPiece {
  std::string text;        // literal text before the conversion (not escaped)
  std::string conversion;  // "%lld", "%.9g", ...; empty for the line's last piece
  PrintArgKind kind = PrintArgKind::Int64;
};

// One line: pieces with a conversion each (block indices, the thread, the
// iteration values, the element indices, then the value) and a last piece
// with the rest of the text, "\n" included.
struct PrintLine {
  std::vector<PrintPiece> pieces;
  // The whole line as one printf format ('%' of the text doubled).
  std::string format() const;
};

PrintArgKind printArgKind(DType t);
// The printf conversion of a value of dtype `t` ("%.9g" for float32).
std::string printValueConversion(DType t);

// The line of print `p` (its value, or an element of its buffer when
// `element` names one, with `indexCount` indices) in a grid of `gridRank`
// dimensions; `withThread` adds the GPU thread. `valueType` is the dtype of
// the value printed.
PrintLine printLine(const PrintStmt& p, size_t gridRank, bool withThread, const std::string& element, size_t indexCount,
                    DType valueType);

}  // namespace tlc::ir
