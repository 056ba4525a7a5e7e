// `tlc tune`: finds the fastest configuration of a kernel's tuning space on
// a target and files it in the results database (docs/tuning.md).
//
//  1. the program is compiled once as given, for its space and its sources;
//  2. every candidate is compiled with its values as -D, on a pool of
//     threads; a candidate whose `where=` conditions fail, or that cannot fit
//     the device (threads, shared memory, registers), is pruned before it runs;
//  3. the others are measured on the target's workers (one per device):
//     warm-up, then the median of runs sustained for a minimum time, each on
//     inputs rotated through buffers larger than the caches (CPU) or after
//     an L2 flush (GPU);
//  4. the fastest are checked against the interpreter at a small size (each
//     dynamic dimension at checkSize()); the fastest that agrees is the best;
//  5. the record (every candidate's outcome and the best) is stored.
// Progress (done/total, best so far, ETA) goes to stderr.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/run_common.h"
#include "compiler/driver/targets.h"
#include "compiler/driver/tune_db.h"
#include "compiler/driver/tune_scheduler.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

struct TuneSettings {
  std::string file;
  std::vector<std::string> defines;     // the user's -D
  std::string kernel;                   // --kernel; empty: the first
  std::map<std::string, int64_t> dims;  // --dim
  std::vector<std::string> space;       // --space NAME=V1,V2
  std::vector<std::string> where;       // --where CONDITION
  size_t jobs = 0;                      // compile threads; 0: one per core
  size_t checkCount = 3;                // candidates checked against the interpreter
  double minTime = 0.3;                 // seconds of timed runs per candidate (at least 5 runs)
  size_t maxCandidates = 100000;
  uint64_t seed = 0;
  bool force = false;                   // tune again over an existing record
  std::string db;                       // --db DIR
  std::vector<int> devices;             // GPUs to use (empty: all)
};

// What a target's compile step made of one candidate.
struct CompiledCandidate {
  virtual ~CompiledCandidate() = default;
};

// A target's part of tuning.
class TuneTarget {
 public:
  virtual ~TuneTarget() = default;
  // The device results are filed under (the first worker's).
  virtual std::string device() const = 0;
  // One name per worker (device).
  virtual std::vector<std::string> workers() const = 0;
  // Whether measurements may run while other candidates compile (not on the
  // CPU, where compiles would disturb the timing).
  virtual bool measureWhileCompiling() const = 0;
  // Compiles `module` (called on several threads at once). Null with
  // result->status "failed" or "pruned" and result->note saying why.
  virtual std::unique_ptr<CompiledCandidate> compile(const ir::Module& module, DiagnosticEngine& diags,
                                                     TuneResult* result) = 0;
  // Times `func` on worker `worker` at `dims`: sets result->ms, or status
  // "failed" and the note. DeviceLost when the worker's device failed.
  virtual WorkerOutcome measure(size_t worker, CompiledCandidate& c, const ir::PrimFunc& func,
                                const std::map<std::string, int64_t>& dims, TuneResult* result) = 0;
  // Runs `func` once on `args` in place (on worker 0); false and *why on failure.
  virtual bool runOnce(CompiledCandidate& c, const ir::PrimFunc& func, RunArgs& args, std::string* why) = 0;
  // Float32 gemms of this target accumulate in tf32 (wider tolerances).
  virtual bool tf32Gemm() const { return false; }
};

// Runs `tlc tune`; returns the process exit code.
int tuneKernel(const TuneSettings& settings, const TargetRequest& request);

// The inputs of a record's key for `module` compiled from `sources` (the
// texts of the files read) for `request`, without device and bucket.
TuneKeyInputs tuneKeyInputs(const std::vector<std::string>& sources, const std::string& kernel,
                            const TargetRequest& request, const std::vector<std::string>& defines);
// The device that `request`'s results are filed under on this machine, or
// nullopt and *why when there is none here (no GPU).
std::optional<std::string> localTuneDevice(const TargetRequest& request, std::string* why);

}  // namespace tlc::driver
