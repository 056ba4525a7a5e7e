// tlc: the command-line driver.
//
//   tlc check FILE [-D NAME=VALUE]...
//   tlc emit --stage=tokens|ast|tir FILE [-D ...]
//   tlc run FILE --target=interp|cpu|cuda:sm_XX [-D ...] [--dim NAME=VALUE]... [--seed N]
//           [--check] [--bench] [--emulate]
//   tlc build FILE --target=cpu|cuda:sm_XX -o OUT [-D ...]
//
// Exit codes: 0 success; 1 errors in the user's program (diagnostics were
// printed); 2 bad command line; 70 internal compiler error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "compiler/driver/compile.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/driver/subcommands.h"
#include "compiler/support/diagnostics.h"
#include "compiler/support/large_stack.h"

using namespace tlc;
using namespace tlc::driver;

namespace {

int runDriver(int argc, char** argv) {
  CLI::App app{"tlc: a compiler for tile-language kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tlc ") + kTlcVersion);

  std::vector<std::unique_ptr<Subcommand>> commands = makeSubcommands();
  for (auto& c : commands) c->attach(app);

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
