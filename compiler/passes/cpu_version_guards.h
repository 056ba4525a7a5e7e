// Pass cpu-version-guards: a guarded Parallel nest gets a fast version for
// the blocks whose tile lies inside the tensors.
//
// Users guard the elements of a Parallel nest that fall outside a tensor:
//
//   for j, i in T.Parallel(block_N, block_M):
//       if bx * block_N + j < N and by * block_M + i < M:
//           Y[b, bx * block_N + j, by * block_M + i] = s[i, j]
//
// Every block but those at the tensor's edges passes every test. Left as it
// is, the nest's loops get bounds that depend on the block
// (cpu-guards-to-bounds), so it cannot be a transpose through registers, its
// stores cannot stream and its rows are not whole vectors. For a nest of
// Parallel loops with constant ranges whose body (after lets) is an `if`
// without `else`, each conjunct of the condition of the form `A + v < B`
// (or <=, >, >=, either side), with v one of the nest's variables and A, B
// free of the nest's variables, of loads and of divisions by variables, holds
// for every v of the range when it holds at v's last value (first value for
// a lower bound). The nest becomes
//
//   if [likely] <those conjuncts at the range's ends> { the nest without them }
//   else { the nest as it was }
//
// which cpu-hoist-fast-paths then combines with the copies' fast paths.
//
// Assumes: a verified module, before cpu-hoist-fast-paths (Parallel loops
// not yet mapped). Guarantees: the same results; the else branch is the
// original nest, and the then branch runs only where the removed conjuncts
// are true for every iteration.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module versionGuardedNests(const ir::Module& m);

}  // namespace tlc::cpu
