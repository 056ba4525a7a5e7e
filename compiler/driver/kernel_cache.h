// The on-disk kernel cache: built binaries (CPU .so, .cubin, ...) keyed by a
// SHA-256 over everything that determines them.
//
// Location: $TLC_CACHE_DIR, else $XDG_CACHE_HOME/tlc, else ~/.cache/tlc.
// TLC_CACHE=0 disables the cache (lookups miss, stores do nothing).
// Layout: <dir>/v1/<key[0..2]>/<key>.bin (the bytes) and <key>.sum (their
// SHA-256). Each file is written to a unique temporary file in the same
// directory and renamed into place, so readers never see a partial file; a
// writer holds an exclusive lock (flock) on the entry's directory while it
// replaces the pair, so concurrent writers of one key (threads or
// processes) do not interleave and the last one wins. A lookup re-hashes the
// bytes: an entry whose checksum does not match even under that lock
// (truncated, corrupted) is removed and reported as a miss, so the caller
// rebuilds and stores it again.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/support/sha256.h"

namespace tlc::driver {

using tlc::sha256Hex;

// A check of an entry's bytes beyond its checksum (for CPU modules,
// checkCpuModuleImage); false and *why when the bytes must not be used.
using EntryCheck = std::function<bool(const std::string& bytes, std::string* why)>;

// What a kernel build depends on. Every field takes part in the key.
struct CacheKeyParts {
  std::vector<std::string> sources;                          // the text of every file read (imports included)
  std::vector<std::pair<std::string, std::string>> defines;  // bound parameters, in any order
  std::string target;                                        // "cpu", "cuda:sm_90"
  std::string options;                                       // target options (cpu name, features, -O level)
  std::string version;                                       // tlc version; empty: this build's (the
                                                             // executable's size and mtime join the key)
};
std::string cacheKey(const CacheKeyParts& parts);

class KernelCache {
 public:
  // A cache in `dir` (created on first store).
  explicit KernelCache(std::string dir, bool enabled = true);
  // The cache the environment selects (see above).
  static KernelCache fromEnvironment();

  bool enabled() const { return enabled_; }
  const std::string& dir() const { return dir_; }

  // The path of the verified bytes for `key`, or nullopt (miss, disabled,
  // or a corrupt entry, which is removed).
  std::optional<std::string> lookup(const std::string& key, const EntryCheck& check = {}) const;
  // Stores `bytes` under `key`; returns the entry's path, or nullopt and sets
  // *error (a disabled cache returns nullopt with an empty error).
  std::optional<std::string> store(const std::string& key, const std::string& bytes, std::string* error) const;
  // The file that holds the bytes of `key`'s entry (present or not).
  std::string entryPath(const std::string& key) const { return entryBase(key) + ".bin"; }
  // The keys of the entries present (not verified: lookup checks each).
  std::vector<std::string> keys() const;

 private:
  std::string entryBase(const std::string& key) const;
  std::string dir_;
  bool enabled_;
};

// Looks `key` up; on a miss (or with the cache disabled) calls
// build(path, error) to write the binary at a fresh temporary path, stores the
// bytes, and returns the path of the cached entry (or of the freshly built
// file when the cache is disabled or cannot be written). Returns nullopt and
// sets *error when the build fails. *hit tells whether the cache answered.
// `check` is passed to lookup.
std::optional<std::string> cachedBuild(const KernelCache& cache, const std::string& key,
                                       const std::function<bool(const std::string& path, std::string* error)>& build,
                                       std::string* error, bool* hit = nullptr, const EntryCheck& check = {});

}  // namespace tlc::driver
