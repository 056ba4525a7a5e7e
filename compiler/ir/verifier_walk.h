// The tile-IR verifier's walk (verifier.h's verifyFunc runs one per
// function): scopes and bindings, then every statement and expression.
// Its members live in two files: verifier.cpp (functions, scopes,
// statements) and verifier_exprs.cpp (expressions, regions, gemm operands,
// layout annotations, prints).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/int_arith.h"
#include "compiler/ir/verifier.h"

namespace tlc::ir {

class Verifier {
 public:
  Verifier(DiagnosticEngine& diags, const VerifyOptions& options) : diags_(diags), options_(options) {}

  void func(const PrimFunc& f);

 private:
  static std::string dt(DType t) { return std::string(dtypeName(t)); }
  // Whether integer `v` is a value of type `t`.
  static bool fitsDType(int64_t v, DType t) {
    if (t == DType::Bool) return v == 0 || v == 1;
    int bits = dtypeBits(t);
    if (bits >= 64) return true;
    if (!isSigned(t)) return v >= 0 && v < (int64_t(1) << bits);
    return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
  }
  DiagnosticEngine& diags_;
  VerifyOptions options_;
  // Binding counts (a node may be bound again in a nested scope by a pass that copies code).
  std::unordered_map<const VarNode*, int> vars_;
  std::unordered_map<const BufferNode*, int> buffers_;
  // What each open scope bound, to unbind when it closes.
  struct Frame {
    std::vector<const VarNode*> vars;
    std::vector<const BufferNode*> buffers;
  };
  std::vector<Frame> frames_;
  std::unordered_set<const void*> reportedUnbound_;
  int kernelDepth_ = 0;
  int specializeDepth_ = 0;  // roles of a warp_specialize around the statement
  int loopDepth_ = 0;
  // The kinds of the loops around the statement, innermost last (a kernel
  // starts a new list: no jump leaves a kernel).
  std::vector<ForKind> loopKinds_;
  // Nesting of the expression and statement being checked (limits.h).
  int exprDepth_ = 0;
  int stmtDepth_ = 0;
  bool reportedDeep_ = false;
  // The layout annotation of each annotated buffer (one per buffer).
  std::unordered_map<const BufferNode*, SourceLoc> annotated_;
  // Buffers allocated with several versions, and how many VersionStmts
  // around the statement name each.
  std::unordered_map<const BufferNode*, int64_t> versions_;
  std::unordered_map<const BufferNode*, int> selected_;

  void report(DiagKind k, SourceLoc loc, const std::string& msg) { diags_.report(k, loc, msg); }

  void bindVar(const Var& v);
  void bindBuffer(const Buffer& b);
  void popFrame();

  // `access`: the statement reads or writes elements (a layout annotation does not).
  void useBuffer(const Buffer& b, SourceLoc loc, bool access = true);

  // copy_async, commit_group and wait_group are block-level statements of a kernel.
  void asyncStatement(SourceLoc loc, const char* what);
  void version(const VersionStmt* v);
  // Barrier buffers: their allocation, and each operand naming one.
  void barrierAlloc(const AllocStmt* a);
  void barrierOperand(const BarrierRef& b, SourceLoc loc);
  void warpSpecialize(const WarpSpecializeStmt* w, const Stmt& s);

  // ------------------------------------------------------------ expressions

  void integer(const Expr& e, const std::string& what);
  void dimension(const Expr& e, const std::string& buffer);
  void indices(const Buffer& b, const std::vector<Expr>& idx, SourceLoc loc);
  void sameDType(const Expr& value, DType want, SourceLoc loc, const std::string& what);

  // Reports IR nested past a limit of limits.h, once per function.
  void tooDeep(SourceLoc loc, const std::string& msg);
  void expr(const Expr& e);
  void exprNode(const Expr& e);

  // A call names an intrinsic of the table (intrinsics.h) and fits its rule.
  void call(const Call* c);
  void binary(const Binary* b);

  // ------------------------------------------------------------ regions

  // Extents made of constants only (`16 + 16`) are checked like literals.
  static std::optional<int64_t> constValue(const Expr& e) {
    if (e && e->dtype == DType::Bool) return std::nullopt;
    return evalConstInt(e);
  }

  // The constant extents of a region, if all are constant.
  static std::optional<std::vector<int64_t>> constExtents(const Region& r) {
    std::vector<int64_t> out;
    for (const Range& rg : r.ranges) {
      auto v = constValue(rg.extent);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  static std::string shapeText(const std::vector<int64_t>& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
    return out.empty() ? "a scalar" : out;
  }

  void region(const Region& r, const char* role);

  // A gemm operand as a matrix: its last two extents (other dimensions must be 1).
  std::optional<std::pair<int64_t, int64_t>> matrix(const Region& r, const char* role);
  static std::vector<int64_t> dropUnit(const std::vector<int64_t>& s) {
    std::vector<int64_t> out;
    for (int64_t v : s)
      if (v != 1) out.push_back(v);
    return out;
  }

  // A and B share one dtype; C accumulates in the same family (float for
  // float operands, integer for integer ones).
  void gemmDTypes(const GemmStmt* g);

  // ------------------------------------------------------------ layout annotations

  static bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

  // A kernel-level declaration about a shared or fragment buffer in scope:
  // the layout kind fits the buffer's scope and shape, once per buffer.
  void annotation(const AnnotateLayoutStmt* a);
  void print(const PrintStmt* p);

  // ------------------------------------------------------------ statements

  void body(const Stmt& s);
  void stmt(const Stmt& s);
  void stmtNode(const Stmt& s);
};

}  // namespace tlc::ir
