// T.print in the interpreter: each line is formatted piece by piece with the
// conversions of compiler/ir/print_format.h (the bytes the compiled targets'
// printf calls write) and written with one call, so lines never interleave.
// A whole buffer prints its elements in row-major order; reading one never
// written warns as any read does (uninitialized-read).
#include <cmath>
#include <cstdio>

#include "compiler/interp/machine.h"
#include "compiler/ir/print_format.h"

namespace tlc::interp {

using namespace ir;

namespace {

std::string conversion(const PrintPiece& p, int64_t i, double f, const char* s) {
  char buf[64];
  switch (p.kind) {
    case PrintArgKind::Int64: std::snprintf(buf, sizeof buf, p.conversion.c_str(), static_cast<long long>(i)); break;
    case PrintArgKind::UInt64:
      std::snprintf(buf, sizeof buf, p.conversion.c_str(), static_cast<unsigned long long>(i));
      break;
    case PrintArgKind::Double: std::snprintf(buf, sizeof buf, p.conversion.c_str(), std::isnan(f) ? NAN : f); break;
    case PrintArgKind::Bool: std::snprintf(buf, sizeof buf, p.conversion.c_str(), s); break;
  }
  return buf;
}

// The line with the integers `ints` (block, iteration, element index) and the value `v` of dtype `t`.
std::string formatLine(const PrintLine& line, const std::vector<int64_t>& ints, Value v, DType t) {
  std::string out;
  size_t next = 0;
  for (const PrintPiece& p : line.pieces) {
    out += p.text;
    if (p.conversion.empty()) continue;
    if (next < ints.size()) {
      out += conversion(p, ints[next++], 0, nullptr);
    } else {
      out += conversion(p, v.i, isFloat(t) ? v.f : 0, v.i ? "True" : "False");
    }
  }
  return out;
}

}  // namespace

void Machine::execPrint(const CStmt& s) {
  auto* p = static_cast<const PrintStmt*>(s.node);
  std::vector<int64_t> ints = block_;
  size_t k = p->value ? 1 : 0;
  for (size_t n = 0; n < p->iteration.size() + p->index.size(); ++n) ints.push_back(evalInt(*s.exprs[k++]));
  auto write = [&](const std::string& text) {
    if (printTo_) std::fputs(text.c_str(), printTo_);
  };
  if (p->value) {
    Value v = eval(*s.exprs[0]);
    DType t = p->value->dtype;
    write(formatLine(printLine(*p, block_.size(), false, p->element, p->index.size(), t), ints, v, t));
    return;
  }
  BufferState& b = bufs_[s.slot];
  const BufferNode* node = prog_.buffers[s.slot].buffer;
  if (!b.live) fail(DiagKind::InterpInvalidProgram, s.node->loc, "buffer `" + node->name + "` is printed before it is allocated", node);
  PrintLine line = printLine(*p, block_.size(), false, node->name, b.shape.size(), node->dtype);
  int64_t total = 1;
  for (int64_t n : b.shape) total *= n;
  std::vector<int64_t> idx(b.shape.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    int64_t off = 0, rest = e;
    for (size_t d = b.shape.size(); d-- > 0;) {
      idx[d] = rest % b.shape[d];
      rest /= b.shape[d];
      off += idx[d] * b.strides[d];
    }
    std::vector<int64_t> all = ints;
    all.insert(all.end(), idx.begin(), idx.end());
    write(formatLine(line, all, loadElement(b, node, off, s.node->loc), node->dtype));
  }
}

}  // namespace tlc::interp
