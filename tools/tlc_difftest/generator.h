// Random well-typed tile programs for differential testing.
//
// generateProgram(seed) writes the text of one `.tl` kernel, the same text
// for the same seed on every machine (the random numbers come from a fixed
// generator, not from the standard library's distributions). A program is
// one of these kinds, with random dtypes, tile and tensor sizes (sizes the
// tiles do not divide, and sizes of 1), thread counts and staging:
//
//   map     elementwise T.Parallel over a tile: inputs copied global ->
//           (shared ->) fragment by points or slices, or read from global
//           under an `if`; float expressions of math builtins or integer
//           expressions; the result copied out (through shared) or stored
//           under an `if`
//   copy    copies between global, shared and fragment with dtype
//           conversions, T.fill / T.clear, partial slices and a single row
//   reduce  T.reduce_{sum,max,min,abssum,absmax} along dim 0 or 1, one tile
//           or running (clear=False) over a T.Pipelined / T.serial loop
//   gemm    T.gemm with transposes over a T.Pipelined loop with num_stages
//           (float16, bfloat16, float32, int8), optional epilogue
//   atomic  T.atomic_add / atomic_max / atomic_min from a T.Parallel loop
//
// Every value stays small by construction (expressions track a bound on
// their magnitude), so that targets agree within the `--check` tolerances
// unless one of them is wrong. Some programs leave their tensor sizes
// unbound: those are dynamic dimensions, given in `dims`.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace tlc::difftest {

struct GeneratedProgram {
  uint64_t seed = 0;
  std::string kind;                     // map, copy, reduce, gemm, atomic
  std::string kernel;                   // the function's name
  std::string source;                   // the .tl text
  std::map<std::string, int64_t> dims;  // dynamic dimensions (`--dim NAME=SIZE`)
};

struct GeneratorOptions {
  // Dtypes that no tensor or tile takes (accumulators stay float32 and int32),
  // e.g. one a target cannot handle yet; programs then differ from the
  // default ones of the same seed.
  std::set<std::string> skipDtypes;
};

GeneratedProgram generateProgram(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace tlc::difftest
