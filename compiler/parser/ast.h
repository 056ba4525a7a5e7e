// The abstract syntax tree of a `.tl` file, as the parser produces it.
//
// The AST mirrors the surface syntax (a Python subset): it knows nothing of
// types, scopes or tile semantics; sema resolves names, checks types and
// shapes, and lowers to the tile IR. Every node carries the SourceLoc of the
// text it came from (for a call, the callee's name; for an operator, the
// operator token widened to the whole expression where useful).
//
// Nodes are owned by unique_ptr and never shared; the tree is built once and
// read by later phases.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/support/source.h"

namespace tlc::ast {

struct Expr;
struct Stmt;
struct FuncDef;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

// ---------------------------------------------------------------- expressions

enum class ExprKind {
  Name,       // identifier: `A`, `block_M`, `T`
  Int,        // 123, 0x1f
  Float,      // 1.5, 1e-3
  Bool,       // True / False
  String,     // "..." (annotations such as layout names)
  None,       // None
  Attribute,  // value.attr: `T.copy`, `A.shape`
  Call,       // callee(args, key=value)
  Subscript,  // value[i, j:k]
  Slice,      // lo:hi (only inside a subscript; lo/hi may be null)
  Tuple,      // (a, b) or a bare `a, b`
  Binary,     // a + b, a // b, a < b, a and b, ...
  Unary,      // -a, not a, ~a
  IfElse,     // a if cond else b
  Dict,       // {k: v, ...} (the argument of `T.annotate_layout({buf: layout})`)
  Lambda,     // lambda i, j: body (only in TileLang's index-map layouts, which sema ignores)
};

enum class BinaryOp {
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow,
  Eq, Ne, Lt, Le, Gt, Ge,
  And, Or,
  BitAnd, BitOr, BitXor, Shl, Shr,
};
const char* binaryOpSpelling(BinaryOp op);

enum class UnaryOp { Neg, Pos, Not, Invert, Star };  // Star: `*t` unpacked in a list or tuple display
const char* unaryOpSpelling(UnaryOp op);

struct Keyword {
  std::string name;
  ExprPtr value;
  SourceLoc loc;  // of the name
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;

  // Name / Attribute (attr name) / String (contents, unescaped)
  std::string name;
  // Int
  int64_t intValue = 0;
  // Float
  double floatValue = 0;
  // Bool
  bool boolValue = false;
  // Binary / Unary
  BinaryOp binaryOp = BinaryOp::Add;
  UnaryOp unaryOp = UnaryOp::Neg;
  // Attribute: operands[0] is the object. Call: operands[0] is the callee,
  // then positional arguments. Subscript: operands[0] is the value, then
  // indices. Tuple: the elements. Binary: lhs, rhs. Unary: operand.
  // Slice: lo, hi (either may be null). IfElse: then, cond, else.
  // Dict: key0, value0, key1, value1, ... Lambda: the parameters (Names), then the body.
  std::vector<ExprPtr> operands;
  // Call only.
  std::vector<Keyword> keywords;

  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
};

// ---------------------------------------------------------------- statements

enum class StmtKind {
  Expr,       // a call evaluated for its effect: `T.copy(A, B)`
  Assign,     // targets = value (target: Name, Subscript or Tuple of them)
  AugAssign,  // target op= value
  For,        // for a, b in iter: body
  While,      // while cond: body
  With,       // with T.Kernel(...) as (bx, by): body
  If,         // if cond: body [elif ...] [else: orelse]
  Pass,       // pass
  Break,      // break (innermost serial loop)
  Continue,   // continue (innermost serial loop)
  Return,     // return (only in macros, without a value, or with one)
  Def,        // a nested definition (`@T.prim_func def main(...)` in a kernel factory)
  Assert,     // assert cond[, message]: a compile-time check
};

struct Stmt {
  StmtKind kind;
  SourceLoc loc;

  // Expr: value. Assign: target, value. AugAssign: target, value (op in augOp).
  // For: iter (targets in `names`). While: cond. With: the context expression (names
  // bound by `as` in `names`). If: cond. Return: value (may be null).
  // Assert: value (the condition), target (the message, may be null).
  ExprPtr target;
  ExprPtr value;
  BinaryOp augOp = BinaryOp::Add;
  std::vector<std::string> names;
  std::vector<SourceLoc> nameLocs;
  Block body;
  Block orelse;  // If: the else branch; an `elif` is a nested If here
  std::unique_ptr<FuncDef> def;  // Def only

  Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};

// ---------------------------------------------------------------- top level

// A compile-time parameter in `def f[NAME=default, ...]`.
struct CompileParam {
  std::string name;
  ExprPtr defaultValue;  // null: must be bound by -D or becomes a shape symbol
  SourceLoc loc;
};

// A runtime parameter `name: annotation`, e.g. `A: Tensor[(M, K), dtype]`
// or `n: int32`; in a kernel factory `name [= default]` (a compile-time
// parameter); in a macro `name [: annotation] [= default]`.
struct Param {
  std::string name;
  ExprPtr annotation;    // may be null
  ExprPtr defaultValue;  // may be null
  SourceLoc loc;
};

// `def` (a kernel) or `macro` (a helper inlined at each call). The
// decorators (`@T.prim_func`, `@T.macro`, `@tilelang.jit(...)`) are kept as
// written; sema gives them their meaning.
struct FuncDef {
  bool isMacro = false;
  std::vector<ExprPtr> decorators;
  std::string name;
  std::vector<CompileParam> compileParams;
  std::vector<Param> params;
  Block body;
  SourceLoc loc;  // of the name
};

// `import name` or `from name import a, b`: modules under stdlib/.
struct Import {
  std::string module;               // dotted path, e.g. "math" or "tl.reduce"
  std::vector<std::string> names;   // empty for `import module`; {"*"} for `from module import *`
  std::string alias;                // `import x as y`
  SourceLoc loc;
};

struct Module {
  uint32_t file = 0;
  std::vector<Import> imports;
  std::vector<std::unique_ptr<FuncDef>> funcs;  // kernels and macros in order
  // Module-level `NAME = value` assignments, in order (Python's globals: each
  // kernel sees them as compile-time values, and `-D NAME=...` overrides one).
  Block globals;
};

}  // namespace tlc::ast
