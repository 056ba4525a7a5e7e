// Evaluation of integer shape expressions (tensor dimensions, grid extents)
// outside a running kernel, given values for the variables they use.
//
// Handles integer immediates, variables, + - * // % min max, casts between
// integer types and the `ceildiv` / `min` / `max` builtins, with the
// language's floor division. Returns nullopt (and names the problem in
// `*why`) for anything else: an unbound variable, division by zero, loads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "compiler/ir/ir.h"

namespace tlc::interp {

using VarValues = std::map<const ir::VarNode*, int64_t>;

std::optional<int64_t> evalShapeExpr(const ir::Expr& e, const VarValues& vars, std::string* why = nullptr);

}  // namespace tlc::interp
