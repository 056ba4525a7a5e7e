// tlc: the command-line driver.
//
//   tlc check FILE [-D NAME=VALUE]...
//   tlc emit --stage=tokens|ast|tir FILE [-D ...]
//   tlc run FILE --target=interp|cpu|cuda:sm_XX [-D ...] [--dim NAME=VALUE]... [--seed N]
//           [--check] [--bench] [--emulate] [--cpu=NAME] [--features=+F,-F] [--check-bounds]
//   tlc build FILE --target=cpu|cuda:sm_XX -o OUT [-D ...] [--header H] [--embed C] [--depfile D]
//           [--cpu=NAME] [--features=...] [--check-bounds]
//   tlc --version
//
// Exit codes: 0 success; 1 errors in the user's program (diagnostics were
// printed); 2 bad command line; 70 internal compiler error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "compiler/driver/compile.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/driver/subcommands.h"
#include "compiler/support/diagnostics.h"
#include "compiler/support/large_stack.h"
#include "compiler/support/suggest.h"
#include "runtime/include/tlc/runtime.h"

using namespace tlc;
using namespace tlc::driver;

namespace {

int runDriver(int argc, char** argv) {
  CLI::App app{"tlc: a compiler for tile-language kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tlc ") + TLC_VERSION_STRING + " (runtime ABI version " +
                                        std::to_string(TLC_RUNTIME_ABI_VERSION) + ")");

  std::vector<std::unique_ptr<Subcommand>> commands = makeSubcommands();
  for (auto& c : commands) c->attach(app);

  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      std::cerr << "tlc: error: unknown command `" << argv[1] << "`" << didYouMean(argv[1], names)
                << "\n  the commands are: " << list << " (tlc --help describes them)\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  try {
    for (auto& c : commands)
      if (c->parsed()) return c->run();
  } catch (const InternalError& e) {
    std::cerr << "tlc: internal compiler error: " << e.what() << "\n  at " << e.where()
              << "\nThis is a bug in tlc, not in your program; please report it with the input file.\n";
    return kExitInternal;
  }
  return kExitUsage;
}

}  // namespace

// Deep IR (long straight-line code) needs more stack than the main thread's.
int main(int argc, char** argv) {
  return runWithStack(kCompilerStackBytes, [&] { return runDriver(argc, argv); });
}
