// `tlc build --tuned`: the -D bindings of the tuned configurations, read
// from the results database (tune_db.h) for every kernel of the program.
//
// For each kernel, the records with the program's match key (same sources,
// imports, kernel, target, options, user -D and tlc build) are considered;
// among them the ones of the device (--device, else this machine's: the CPU,
// or GPU 0) and, with --dim, of that shape bucket; the newest wins. A
// kernel that declares `@T.tune` and has no such record is an error that
// says how to tune it; a kernel without a declared space and without a
// record is built as written.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/targets.h"
#include "compiler/ir/ir.h"
#include "compiler/sema/frontend.h"

namespace tlc::driver {

struct TunedBuildRequest {
  std::string file;
  std::vector<std::string> defines;     // the user's -D
  std::map<std::string, int64_t> dims;  // --dim: the shape bucket (empty: any)
  std::string device;                   // --device (empty: this machine's)
  std::string db;                       // --db
};

// The user's defines followed by the tuned ones; nullopt after printing why
// (the return code then is 1). *records gets the files of the records used.
std::optional<std::vector<std::string>> tunedDefines(const TunedBuildRequest& build, const ir::Module& module,
                                                     const std::vector<TuneSpace>& spaces,
                                                     const std::vector<std::string>& sources,
                                                     const TargetRequest& request, std::vector<std::string>* records);

}  // namespace tlc::driver
