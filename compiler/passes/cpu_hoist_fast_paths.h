// Pass cpu-hoist-fast-paths: the likely tests of a statement list become one.
//
// A copy lowers to `if [likely] inside { fast loops } else { masked loops }`
// (cpu-lower-copy-fill). In a statement list holding such tests, whose
// conditions read no memory, and where another statement of the list uses a
// block-local buffer that a fast branch uses too, the tests combine:
//
//   the statements before the first test
//   the later statements that hold no test and touch nothing that a
//     statement left behind them reads or writes (e.g. the copy of a
//     parameter every block reads alike), in order
//   if [likely] c1 and c2 { the rest, each test replaced by its fast branch }
//   else { the rest as it was }
//
// so that the fast loops of the copies stand next to the loops that read or
// write the same buffers, where cpu-inline-producers can fuse them, while
// statements that do not depend on the tests stay at the top of the kernel
// (where the backend can run them once per chunk of blocks). The statements
// of a list bind no variables for their siblings, so a condition means the
// same in front of the list; it reads no memory, so it may be evaluated
// earlier. Inner lists are combined first.
//
// Assumes: a verified module. Guarantees: the same results; code grows by
// one copy of each list that was combined.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module hoistFastPaths(const ir::Module& m);

}  // namespace tlc::cpu
