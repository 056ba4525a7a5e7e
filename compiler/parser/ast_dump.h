// A readable dump of the AST: one node per line, indented by depth, each
// with its `line:col`. Used by `tlc emit --stage=ast` and golden tests.
#pragma once

#include <string>

#include "compiler/parser/ast.h"

namespace tlc {

std::string dumpAst(const ast::Module& module);
std::string dumpExpr(const ast::Expr& expr);

}  // namespace tlc
