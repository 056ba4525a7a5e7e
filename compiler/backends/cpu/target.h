// The LLVM target for CPU code generation: host CPU name and features (or
// the user's --cpu/--features), the TargetMachine, the O0-O3 optimization
// pipeline, and the vector shape the gemm micro-kernel generator plans for.
#pragma once

#include <memory>
#include <string>

#include "compiler/backends/cpu/cpu_backend.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tlc::cpu {

struct VectorShape {
  int vectorBits = 128;   // widest profitable vector register
  int vectorRegs = 16;    // architectural vector registers
  bool hasFma = false;
};

struct CpuTarget {
  std::string triple;
  std::string cpu;
  std::string features;  // comma-separated +feat/-feat
  VectorShape vectors;
  std::unique_ptr<llvm::TargetMachine> machine;
};

// Resolves the target for `options`. Returns null and sets *error on failure.
std::unique_ptr<CpuTarget> createCpuTarget(const CpuOptions& options, std::string* error);

// Sets the module's triple/data layout and the target attributes of every
// function, then runs the default LLVM pipeline at optLevel.
void optimizeModule(llvm::Module& m, CpuTarget& target, int optLevel);

// Target attributes given to each generated function.
void applyTargetAttributes(llvm::Module& m, const CpuTarget& target);

}  // namespace tlc::cpu
