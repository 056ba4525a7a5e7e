// The results database of `tlc tune` (docs/tuning.md): one record per
// (program, kernel, target, device, shape bucket), stored through the kernel
// cache's machinery (kernel_cache.h: atomic writes, checksummed entries,
// corrupt entries removed on lookup), in its own directory.
//
// Location: `--db DIR`, else $TLC_TUNE_DIR, else the kernel cache's
// directory + "/tune" (whether or not TLC_CACHE disables the kernel cache).
//
// A record cannot go stale: its key covers the text of the program and of
// every module it imports, the kernel, the target and its code-generation
// options, the device's name, the user's -D bindings, the shape bucket, and
// tlc's version and build. Any change gives another key, so an old record is
// never found for new inputs. The match key is the same without the device
// and the bucket: `build --tuned` uses it to list the records it may choose
// from when it is not told the device or the shapes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/driver/kernel_cache.h"
#include "compiler/driver/tune_space.h"

namespace tlc::driver {

struct TuneKeyInputs {
  std::vector<std::string> sources;  // the text of every file read, in order
  std::string kernel;
  std::string target;   // "cpu", "cuda:sm_90a"
  std::string options;  // code-generation options of the target
  std::vector<std::pair<std::string, std::string>> defines;  // the user's -D
  std::string device;   // "NVIDIA H200", the CPU's name
  std::string bucket;   // shapeBucket()
  std::string version;  // empty: this tlc's version and build (kernel_cache.h)
};
struct TuneKey {
  std::string key;
  std::string matchKey;  // without device and bucket
};
TuneKey tuneKey(const TuneKeyInputs& inputs);

// One candidate's outcome. status: "ok" (measured), "pruned" (a condition
// failed, or it cannot fit the device: `note` says why), "failed" (did not
// compile or run), "rejected" (disagreed with the interpreter).
struct TuneResult {
  Candidate config;
  std::string status;
  double ms = -1;  // median time of one run, when measured
  std::string note;
};

struct TuneRecord {
  std::string key, matchKey;
  std::string file, kernel, target, device, bucket, options, tlcVersion;
  std::map<std::string, int64_t> dims;  // the sizes tuned at
  std::vector<std::string> defines;     // the user's -D
  std::string tunedAt;                  // UTC, ISO 8601
  Candidate best;
  double bestMs = -1;
  std::vector<TuneResult> results;

  std::string toJson() const;
  // nullopt and *why when `text` is not a record of this format.
  static std::optional<TuneRecord> fromJson(const std::string& text, std::string* why);
};

class TuneDatabase {
 public:
  explicit TuneDatabase(std::string dir);
  // --db DIR when not empty, else the environment's (see above).
  static TuneDatabase locate(const std::string& dbOption);

  const std::string& dir() const { return cache_.dir(); }
  // The file a record is stored in (for depfiles: a build that used it
  // depends on it).
  std::string recordPath(const std::string& key) const { return cache_.entryPath(key); }
  bool usable() const { return cache_.enabled(); }

  // The record under `key`, or nullopt (missing, or corrupt: removed).
  std::optional<TuneRecord> lookup(const std::string& key) const;
  // Stores the record under its key; false and *error when it cannot.
  bool store(const TuneRecord& record, std::string* error) const;
  // Every valid record, newest first; corrupt entries are removed.
  std::vector<TuneRecord> all() const;
  // The records with this match key, newest first.
  std::vector<TuneRecord> matching(const std::string& matchKey) const;

 private:
  KernelCache cache_;
};

// The records as `tlc tune --show` prints them.
std::string formatRecords(const std::vector<TuneRecord>& records, bool verbose);

}  // namespace tlc::driver
