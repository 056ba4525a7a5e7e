// The candidates of `tlc tune` (docs/tuning.md): a kernel's declared space
// (`@T.tune(...)`, reported by the front end as a TuneSpace) with the
// command line's `--space NAME=V1,V2,...` overrides, enumerated as the
// cartesian product of the candidate values in declaration order. The
// `where=` conditions are not evaluated here: each candidate is compiled with
// its values as -D, and the front end reports whether they hold.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/sema/frontend.h"

namespace tlc::driver {

// One point of the space: (parameter, value as -D spells it), in the
// space's parameter order.
struct Candidate {
  std::vector<std::pair<std::string, std::string>> values;
  // "block_M=128 block_N=64" (the form `--show` and progress print).
  std::string label() const;
  // "-D" strings: "block_M=128".
  std::vector<std::string> defines() const;
};

// Parses `--space NAME=V1,V2,...`; nullopt and *error when malformed.
std::optional<TuneParam> parseSpaceOverride(const std::string& text, std::string* error);

// The parameters to tune: the declared ones, each replaced by an override of
// the same name, then the overrides that name other tunable parameters.
// Errors (*error set, nullopt): an override naming no integer or bool
// compile-time parameter, a bool parameter given other values than
// True/False, a parameter both tuned and bound by -D, an empty space.
std::optional<std::vector<TuneParam>> effectiveSpace(const TuneSpace& declared, const std::vector<TuneParam>& overrides,
                                                     const std::vector<std::string>& userDefines, std::string* error);

// The cartesian product, first parameter slowest; nullopt and *error when it
// has more than `limit` points.
std::optional<std::vector<Candidate>> enumerateCandidates(const std::vector<TuneParam>& params, size_t limit,
                                                          std::string* error);

// The shape bucket that results are filed under: each dynamic dimension
// rounded up to a power of two, "K<=4096,M<=4096,N<=1024"; "static" without
// dynamic dimensions. Sizes in one bucket share their best configuration.
std::string shapeBucket(const std::map<std::string, int64_t>& dims);

// The size a dimension is checked at against the interpreter: itself up to
// 256, else 256 plus its remainder modulo 256, so that every power-of-two
// tile up to 256 divides it exactly when it divides the tuned size.
int64_t checkSize(int64_t size);

}  // namespace tlc::driver
