// The floating-point work of the gemms in a statement: 2 * M * N * K per
// gemm execution, times the trip counts of the loops and kernel grids around
// it. Used by the benchmarks of every target to print TFLOP/s.
#pragma once

#include <functional>
#include <optional>

#include "compiler/ir/ir.h"

namespace tlc::ir {

// `eval` gives the value of a shape or extent expression (nullopt: unknown).
// Nullopt when the statement has no gemm or some extent is unknown. M * N is
// the size of C's region, M * K of A's and K * N of B's, whatever the
// transposes and unit dimensions: K = sqrt(|A| * |B| / |C|).
std::optional<double> gemmFlops(const Stmt& s, const std::function<std::optional<double>(const Expr&)>& eval);

}  // namespace tlc::ir
