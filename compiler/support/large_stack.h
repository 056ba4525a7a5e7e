// Runs the compiler on a thread with a large stack.
//
// The IR nests one level per scalar binding (a let scopes over the rest of
// its block), and every walker over the IR recurses once per level, so the
// stack a compilation needs grows with the longest run of straight-line
// code. The front ends bound that nesting (kMaxStmtDepth in
// compiler/ir/limits.h); this stack is sized so the deepest IR they accept
// fits in every walker.
#pragma once

#include <cstddef>
#include <functional>

namespace tlc {

inline constexpr size_t kCompilerStackBytes = size_t(1) << 30;

// Calls `fn` on a fresh thread whose stack is `bytes` (reserved, committed
// as it is touched) and returns its result; calls it directly if no such
// thread can be made. Exceptions thrown by `fn` propagate to the caller.
int runWithStack(size_t bytes, const std::function<int()>& fn);

}  // namespace tlc
