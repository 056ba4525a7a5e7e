// Running one generated program on one target against the reference
// interpreter, in process, through the same entry points as `tlc run
// --check` (compiler/driver): the same seeded arguments, the same
// comparison and tolerances.
//
// Targets: `interp` (the interpreter alone: it must run the program without
// errors), `cpu`, `emu:sm_XX` (the CUDA backend's code in the CUDA emulator,
// `--target=cuda:sm_XX --emulate`) and, where tlc is built with the CUDA
// target and a GPU is present, `gpu:sm_XX` (`--target=cuda:sm_XX`).
#pragma once

#include <string>
#include <vector>

#include "tools/tlc_difftest/generator.h"

namespace tlc::difftest {

// The targets this build can run, in the order `--targets` accepts them.
std::vector<std::string> knownTargets();
// The targets run when `--targets` is not given.
std::vector<std::string> defaultTargets();

struct TargetResult {
  bool compiled = false;  // the front end accepted the program (`tlc check`)
  bool pass = false;      // it ran and every output agreed with the interpreter
  std::string log;        // the check's summary and every diagnostic
};

// Compiles `program` as the file `path` (its text is `program.source`) and
// runs it on `target`. `emulatorTimeout` bounds one emulated launch.
TargetResult runOnTarget(const GeneratedProgram& program, const std::string& path, const std::string& target,
                         double emulatorTimeout);

// The `tlc` command line that reruns `program`, saved as `path`, on `target`.
std::string reproduceCommand(const GeneratedProgram& program, const std::string& path, const std::string& target);

// The lines of a result's log that say what differs: the failed comparisons
// and the errors (the whole log when none is recognised).
std::string disagreementLines(const std::string& log);

}  // namespace tlc::difftest
