// The plumbing every `tlc run --target=X` shares: choosing the kernel,
// making seeded random arguments, running the reference interpreter as the
// oracle, comparing a target's results with it, and printing a summary.
//
// Arguments: every tensor parameter gets a tensor whose shape comes from its
// declaration, dynamic dimensions taken from RunSettings::dims (`--dim M=100`;
// a missing one is a missing-dim-value error); contents from fillRandom with
// a seed derived from RunSettings::seed and the parameter's position. Scalar
// parameters get small random values (integers in [1, 8], floats in [-1, 1)).
//
// Tolerances (see toleranceFor): float64 1e-9, float32 rtol 1e-4, float16
// 1e-2, bfloat16 2e-2, float8 e4m3 0.125 / e5m2 0.25; integers and bool
// exact. When the kernel accumulates (gemm or reduce), the absolute tolerance
// grows with the reduction length, estimated as the largest dimension of any
// tensor argument. float32 / float64 results of a kernel that rounds computed
// values to float16 or bfloat16 on the way (narrowingRound: softmax
// probabilities stored as float16 for a gemm) are compared at that 16-bit
// type's tolerance.
#pragma once

#include <cstdio>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/interp/host_tensor.h"
#include "compiler/interp/interpreter.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

struct RunSettings {
  std::string kernel;                    // --kernel NAME; empty: the module's first function
  std::map<std::string, int64_t> dims;   // --dim NAME=SIZE for dynamic dimensions
  uint64_t seed = 0;                     // --seed N
  bool check = false;                    // --check: compare with the interpreter
  bool bench = false;                    // --bench: the target times its runs
  // Set by the targets that multiply float32 gemm operands in tf32 (runOnCuda
  // and runCudaEmulated set it for every caller): float32 results of kernels
  // that accumulate are then compared with float16-like tolerances, tf32
  // having float16's 10-bit mantissa.
  bool tf32Gemm = false;
  std::string saveDir;                   // --save DIR: write every tensor as DIR/<param>.npy after
                                         // the run (and DIR/<param>.interp.npy from the oracle)
  std::string loadDir;                   // --load DIR: tensors from DIR/<param>.npy where present
  // --fill NAME=LO:HI: tensor NAME's random contents uniform in [LO, HI)
  // (integer tensors: the whole numbers there), e.g. indices into a table.
  std::map<std::string, std::pair<double, double>> fills;
  std::ostream* out = nullptr;           // summary output (null: std::cout)
};

// Arguments for one function: one entry per parameter, in order.
struct RunArgs {
  std::vector<std::optional<interp::HostTensor>> tensors;  // set for tensor parameters
  std::vector<interp::ArgValue> scalars;                    // set for scalar parameters
  std::map<std::string, int64_t> dims;                      // the dynamic dimensions used
  // ArgValues for interpret() / a backend, pointing into `tensors`.
  std::vector<interp::ArgValue> values();
};

// Parses "NAME=SIZE" (as given to --dim); nullopt when malformed or when
// SIZE is outside 0..2147483647 (dimensions are int32).
std::optional<std::pair<std::string, int64_t>> parseDimSetting(const std::string& text);
// Parses "NAME=LO:HI" (as given to --fill); nullopt when malformed, when a
// bound is not finite or when LO >= HI.
std::optional<std::pair<std::string, std::pair<double, double>>> parseFillSetting(const std::string& text);
// Refills the tensors that `fills` names (RunSettings::fills) uniformly in
// their ranges, seeded as makeArguments seeds them; false after reporting a
// name that is no tensor parameter of `func`.
bool applyFills(const ir::PrimFunc& func, RunArgs& args, const std::map<std::string, std::pair<double, double>>& fills,
                uint64_t seed, DiagnosticEngine& diags);

// The function called `name`, or the first one when `name` is empty.
// Reports unknown-kernel (listing the available names) and returns null.
const ir::PrimFunc* selectKernel(const ir::Module& module, const std::string& name, DiagnosticEngine& diags);

// Seeded random arguments for `func`; nullopt after reporting a missing or
// unknown dimension, or a shape that cannot be evaluated.
std::optional<RunArgs> makeArguments(const ir::PrimFunc& func, const std::map<std::string, int64_t>& dims,
                                     uint64_t seed, DiagnosticEngine& diags);

// A deep copy (the oracle runs on its own tensors).
RunArgs cloneArguments(const RunArgs& args);

// Runs the reference interpreter on `args` in place; the lines of T.print go
// to `printTo` (null, for --check references: nowhere).
bool runOracle(const ir::PrimFunc& func, RunArgs& args, DiagnosticEngine& diags, std::FILE* printTo = nullptr);

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
Tolerance toleranceFor(DType dtype, int64_t reductionLength);
// The 16-bit float type (bfloat16 before float16) that `func` rounds computed
// values to: a copy into it from a wider float buffer, or a store of anything
// but an element of its own type; nullopt when it does neither.
std::optional<DType> narrowingRound(const ir::PrimFunc& func);
// The reduction length used for tolerances: 1 when `func` has no gemm or
// reduce, else the largest dimension among the tensor arguments.
int64_t reductionLengthHint(const ir::PrimFunc& func, const RunArgs& args);

// Which tensor parameters the function writes (Store, Copy/Fill/Gemm/Reduce
// destinations, Atomic); parallel to func.params.
std::vector<bool> writtenParams(const ir::PrimFunc& func);

// Prints one row per tensor parameter (name, role, shape, dtype, checksum,
// mean, min, max) and, when `oracle` is given, the max abs/rel error against
// it and PASS/FAIL. Returns false when any comparison fails.
bool printSummary(std::ostream& os, const ir::PrimFunc& func, const RunArgs& got, const RunArgs* oracle,
                  const std::string& target, uint64_t seed, bool tf32Gemm = false);

// A target's way of running a function on arguments in place; reports its own
// errors and returns false on failure.
using TargetRunner = std::function<bool(const ir::PrimFunc&, RunArgs&, const RunSettings&, DiagnosticEngine&)>;

// The whole of `tlc run --target=X`: select the kernel, make arguments, run
// the target (and, with --check, the oracle on a copy), print the summary.
// With saveDir set, writes the tensors as .npy files (see RunSettings).
// Returns the process exit code: 0, or 1 after user errors or a failed check.
int runTarget(const ir::Module& module, const RunSettings& settings, DiagnosticEngine& diags,
              const std::string& targetName, const TargetRunner& runner);

// Writes every tensor argument as `dir/<param><suffix>.npy`; false after
// printing the reason to stderr.
bool saveTensors(const ir::PrimFunc& func, const RunArgs& args, const std::string& dir, const std::string& suffix);
// Replaces the tensors that DIR/<param>.npy gives (same shape; values of the
// same kind, converted to the dtype); false after printing an error.
bool loadTensors(const ir::PrimFunc& func, RunArgs& args, const std::string& dir);

// `tlc run --target=interp`: runTarget with the interpreter as the target.
int runWithInterpreter(const ir::Module& module, const RunSettings& settings, DiagnosticEngine& diags);

}  // namespace tlc::driver
