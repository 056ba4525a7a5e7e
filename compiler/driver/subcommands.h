// The driver's subcommands. Each one declares its options on a CLI11 app and
// runs when the user named it.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace tlc::driver {

class Subcommand {
 public:
  virtual ~Subcommand() = default;
  // Declares the subcommand and its options on `app`.
  virtual void attach(CLI::App& app) = 0;
  bool parsed() const { return cmd_ && cmd_->parsed(); }
  // Runs the parsed subcommand; returns the process exit code.
  virtual int run() = 0;

 protected:
  CLI::App* cmd_ = nullptr;
};

std::vector<std::unique_ptr<Subcommand>> makeSubcommands();

}  // namespace tlc::driver
