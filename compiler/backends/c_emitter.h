// A C-like source emitter shared by the GPU backends (CUDA now, HIP later).
//
// It prints tile-IR expressions as C expressions and manages indentation and
// unique identifiers. A backend subclasses it and supplies its spellings in
// small tables: scalar type names, how a buffer element is addressed, and
// how a builtin call is written. Semantics it guarantees: integer `//` and
// `%` are floor division / floor modulo (plain `/` `%` only when both sides
// are provably non-negative); arithmetic on 16-bit and 8-bit floats is
// computed in float and rounded to the result type after every operation,
// except +, - and * of two float16 or two bfloat16 values, which are the
// helpers hadd / hsub / hmul: one native operation rounded to nearest, the
// same value (float holds the exact result of such an operation to more than
// twice the 16-bit type's significand plus two bits, so rounding it once
// more cannot change it).
#pragma once

#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/ir.h"

namespace tlc::backend {

class CEmitter {
 public:
  CEmitter();
  virtual ~CEmitter() = default;

  // The C spelling of a scalar type ("float", "__half", ...).
  virtual std::string typeName(DType t) const = 0;
  std::string expr(const ir::Expr& e);

 protected:
  // Spelling of a Load (the backend knows where the buffer lives).
  virtual std::string loadExpr(const ir::Load* l) = 0;
  // Spelling of a call; the default handles the portable builtins through
  // `helperNamespace()` functions (exp, min, ceildiv, if_then_else, ...).
  virtual std::string callExpr(const ir::Call* c);
  virtual std::string helperNamespace() const { return "tlc::"; }
  // A value of dtype `from` converted to `to`.
  std::string cast(DType to, DType from, const std::string& value) const;
  std::string literal(const ir::Expr& e) const;
  bool isLowPrecisionFloat(DType t) const;

  // Identifiers: one unique C name per variable / buffer node, spelled from
  // the user's name through backend::cName (c_names.h), with `_1`, `_2`, ...
  // appended when a name is taken.
  std::string nameOf(const void* node, const std::string& userName);
  // Keeps the variable alive so its address is never reused by another node.
  std::string varName(const ir::Var& v) {
    keepAlive_.push_back(v);
    return nameOf(v.get(), v->name);
  }
  // A new identifier for the emitter's own use: `hint` (a C identifier that is
  // no C or CUDA reserved word, possibly built from names this emitter gave)
  // or, when taken, `hint_1`, `hint_2`, ...
  std::string fresh(const std::string& hint);
  // Keeps `name` from ever being given to a variable: for the identifiers
  // the emitter writes literally (loop counters, `tid`, helpers it calls
  // unqualified).
  void reserveName(const std::string& name) { used_.insert(name); }
  // Gives `node` exactly the identifier `exact` (for fixed names such as tid).
  void bindName(const void* node, const std::string& exact) {
    names_[node] = exact;
    used_.insert(exact);
  }

  // Non-negativity facts used to print fast division.
  void markNonNegative(const ir::Var& v) {
    keepAlive_.push_back(v);
    nonNeg_.insert(v.get());
  }
  bool isNonNegative(const ir::Expr& e) const;
  int powerOfTwoShift(const ir::Expr& divisor) const;
  std::string unsignedDivMod(DType t, const std::string& x, const char* op, const std::string& y) const;

  // Source attribution. With a SourceManager set, each emitted line is
  // preceded by `#line N "file"` for the statement being emitted (the
  // innermost LocationScope), so the compiler's line table, profilers and
  // the emulator's findings name the .tl line (backend::lineDirective spells
  // the file name).
  void setLineSources(const SourceManager* sources) { lineSources_ = sources; }
  class LocationScope {
   public:
    LocationScope(CEmitter& e, SourceLoc loc) : e_(e), saved_(e.loc_) {
      if (loc.known()) e_.loc_ = loc;
    }
    ~LocationScope() { e_.loc_ = saved_; }

   private:
    CEmitter& e_;
    SourceLoc saved_;
  };

  // Output with indentation.
  void line(const std::string& s);
  void open(const std::string& head);  // "head {" and indent
  void close(const std::string& tail = "}");
  std::ostringstream out_;
  int indent_ = 0;

 private:
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_set<const ir::VarNode*> nonNeg_;
  std::vector<ir::Var> keepAlive_;
  const SourceManager* lineSources_ = nullptr;
  SourceLoc loc_;
};

}  // namespace tlc::backend
