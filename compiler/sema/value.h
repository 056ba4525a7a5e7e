// The values sema computes while it walks the AST.
//
// Sema evaluates every AST expression to a Value: a scalar IR expression
// (compile-time constants are IntImm/FloatImm, folded as they are built), a
// buffer, a region of a buffer, a dtype, a tuple, a string, a module, a
// macro, a builtin or a layout (for T.annotate_layout). An Error value stands
// for an expression whose error was already reported; operations on it yield
// Error again without new diagnostics, so one mistake gives one message.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/parser/ast.h"

namespace tlc::sema {

struct BuiltinInfo;
struct ModuleInfo;
class Scope;

// A region argument of a tile operation before its extents are known:
// `A[i, j]` (a point: every extent null, the extents come from the other
// operand) or `A[a:b, j]` (a slice: a scalar index has extent 1).
struct RegionValue {
  ir::Buffer buffer;
  std::vector<ir::Expr> mins;
  std::vector<ir::Expr> extents;  // null entries for a point access
  bool isPoint = false;
};

enum class ValueKind { Error, Expr, Buffer, Region, DType, Tuple, String, None, Module, Macro, Builtin, Layout };

struct Value {
  ValueKind kind = ValueKind::Error;
  SourceLoc loc;
  // Expr: the scalar; `weak` marks a literal or a compile-time number whose
  // type adapts to the other operand (Python-number semantics).
  ir::Expr expr;
  bool weak = false;
  ir::Buffer buffer;     // Buffer
  RegionValue region;    // Region
  DType dtype = DType::Int32;  // DType
  std::vector<Value> elems;    // Tuple
  std::string str;             // String
  const ModuleInfo* module = nullptr;   // Module (null: the builtin namespace `T`)
  const ast::FuncDef* func = nullptr;   // Macro (or a kernel def, which is not callable)
  const ModuleInfo* funcModule = nullptr;  // the module that defines `func`
  // A macro defined in a kernel factory: the factory's scope, which its body
  // sees (null: the module's scope).
  Scope* funcScope = nullptr;
  const BuiltinInfo* builtin = nullptr;    // Builtin
  ir::LayoutSpec layout;                   // Layout (T.swizzled_layout(), T.row_groups(8, 4), ...)
  // Layout: from `make_swizzled_layout(buf)`, which on a buffer it cannot
  // swizzle is ignored with a warning rather than an error.
  bool layoutBestEffort = false;
  ir::Buffer layoutFor;  // Layout: the buffer `make_swizzled_layout` was given

  bool isError() const { return kind == ValueKind::Error; }
  bool isExpr() const { return kind == ValueKind::Expr; }

  static Value error(SourceLoc l = {}) { Value v; v.loc = l; return v; }
  static Value ofExpr(ir::Expr e, SourceLoc l, bool weak = false) {
    Value v;
    v.kind = ValueKind::Expr;
    v.expr = std::move(e);
    v.loc = l;
    v.weak = weak;
    return v;
  }
  static Value ofBuffer(ir::Buffer b, SourceLoc l) {
    Value v;
    v.kind = ValueKind::Buffer;
    v.buffer = std::move(b);
    v.loc = l;
    return v;
  }
  static Value ofDType(DType t, SourceLoc l) {
    Value v;
    v.kind = ValueKind::DType;
    v.dtype = t;
    v.loc = l;
    return v;
  }
};

// A short description of a value's kind for messages: "a buffer", "a dtype".
std::string describeValue(const Value& v);

}  // namespace tlc::sema
