// Pass cpu-lower-atomics: Atomic statements become atomic read-modify-write
// intrinsic calls (cpu.atomic_add / _max / _min, see cpu_intrinsics.h).
//
// Assumes: a verified module.
// Guarantees: no Atomic statement remains; the value is converted to the
// buffer's dtype. An atomic that keeps its previous value becomes
// `prev[i] = cpu.atomic_*(...)`, a store whose value is the intrinsic's
// result. The backend emits an LLVM atomicrmw (sequentially
// consistent), so concurrent blocks on different threads combine correctly.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::cpu {

ir::Module lowerAtomics(const ir::Module& m);

}  // namespace tlc::cpu
