#include "compiler/ir/print_format.h"

namespace tlc::ir {

PrintArgKind printArgKind(DType t) {
  if (t == DType::Bool) return PrintArgKind::Bool;
  if (isFloat(t)) return PrintArgKind::Double;
  return isSigned(t) ? PrintArgKind::Int64 : PrintArgKind::UInt64;
}

std::string printValueConversion(DType t) {
  switch (t) {
    case DType::Bool: return "%s";
    case DType::Float64: return "%.17g";
    case DType::Float32: return "%.9g";
    case DType::Float16: return "%.5g";
    case DType::BFloat16: return "%.4g";
    case DType::Float8E4M3:
    case DType::Float8E5M2: return "%.3g";
    default: return isSigned(t) ? "%lld" : "%llu";
  }
}

std::string PrintLine::format() const {
  std::string out;
  for (const PrintPiece& p : pieces) {
    for (char c : p.text) out += c == '%' ? std::string("%%") : std::string(1, c);
    out += p.conversion;
  }
  return out;
}

PrintLine printLine(const PrintStmt& p, size_t gridRank, bool withThread, const std::string& element, size_t indexCount,
                    DType valueType) {
  PrintLine line;
  std::string text = p.at.empty() ? "block " : p.at + ": block ";
  auto integer = [&](const std::string& after) {
    line.pieces.push_back({text, "%lld", PrintArgKind::Int64});
    text = after;
  };
  if (gridRank > 1) text += "(";
  for (size_t d = 0; d < gridRank; ++d) integer(d + 1 < gridRank ? ", " : gridRank > 1 ? ")" : "");
  if (withThread) {
    text += ", thread ";
    integer("");
  }
  for (const PrintTag& t : p.iteration) {
    text += ", " + t.name + "=";
    integer("");
  }
  text += ": ";
  if (!p.message.empty()) text += p.message + ": ";
  if (!element.empty()) {
    text += element + "[";
    for (size_t k = 0; k < indexCount; ++k) integer(k + 1 < indexCount ? ", " : "");
    text += "] = ";
  }
  line.pieces.push_back({text, printValueConversion(valueType), printArgKind(valueType)});
  line.pieces.push_back({"\n", "", PrintArgKind::Int64});
  return line;
}

}  // namespace tlc::ir
