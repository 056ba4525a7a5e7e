// Substitution of expressions for variables in the tile IR.
//
// Replaces every use of a mapped variable (by identity) with its expression.
// Bindings inside the tree (loops, lets, kernel block variables) are left
// alone: a binding of a mapped variable shadows the mapping in its body. A
// buffer allocated inside the tree whose shape mentions a substituted
// variable is re-created with the new shape, and every later use of it refers
// to the new buffer. Unchanged subtrees are returned as the same nodes.
#pragma once

#include <unordered_map>

#include "compiler/ir/ir.h"

namespace tlc::ir {

using VarMap = std::unordered_map<const VarNode*, Expr>;
using BufferMap = std::unordered_map<const BufferNode*, Buffer>;

Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);
Expr substitute(const Expr& e, const Var& var, const Expr& value);
Stmt substitute(const Stmt& s, const Var& var, const Expr& value);
// Also replaces buffers: every allocation and use of a mapped buffer refers
// to its image instead (a copy of a statement with buffers of its own).
Stmt substitute(const Stmt& s, const VarMap& map, const BufferMap& buffers);

}  // namespace tlc::ir
