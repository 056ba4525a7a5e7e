#include "compiler/driver/subcommands.h"

#include <iostream>

#include "compiler/driver/compile.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/ir/printer.h"
#include "compiler/lexer/lexer.h"
#include "compiler/parser/ast_dump.h"
#include "compiler/parser/parser.h"

namespace tlc::driver {
namespace {

// Options every subcommand that reads a program takes.
struct ProgramOptions {
  std::string file;
  std::vector<std::string> defines;

  void attach(CLI::App* cmd) {
    cmd->add_option("file", file, "the .tl source (or .tir tile IR) file")->required();
    cmd->add_option("-D,--define", defines, "bind a compile-time parameter: -D NAME=VALUE")
        ->allow_extra_args(false);
  }
};

int exitFor(const Compilation& c) { return c.hasErrors() ? kExitUserError : kExitOk; }

class CheckCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("check", "parse and type-check a program; exit 1 if it has errors");
    program_.attach(cmd_);
  }
  int run() override {
    Compilation c;
    c.compile(program_.file, program_.defines);
    return exitFor(c);
  }

 private:
  ProgramOptions program_;
};

class EmitCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("emit", "print one stage of the compilation");
    program_.attach(cmd_);
    cmd_->add_option("--stage", stage_, "tokens | ast | tir")
        ->check(CLI::IsMember({"tokens", "ast", "tir"}))
        ->default_val("tir");
  }
  int run() override {
    Compilation c;
    if (stage_ == "tokens" || stage_ == "ast") {
      if (endsWith(program_.file, ".tir")) {
        std::cerr << "tlc: error: --stage=" << stage_ << " needs a .tl source; a .tir file only has --stage=tir\n";
        return kExitUsage;
      }
      uint32_t file = c.load(program_.file);
      if (file == 0) return kExitUserError;
      if (stage_ == "tokens") {
        auto tokens = lex(c.sources(), c.diags(), file);
        std::cout << dumpTokens(tokens);
      } else {
        auto module = parseModule(c.sources(), c.diags(), file);
        std::cout << dumpAst(*module);
      }
      return exitFor(c);
    }
    auto module = c.compile(program_.file, program_.defines);
    if (!module) return kExitUserError;
    std::cout << ir::printModule(*module);
    return kExitOk;
  }

 private:
  ProgramOptions program_;
  std::string stage_;
};

}  // namespace

std::vector<std::unique_ptr<Subcommand>> makeSubcommands() {
  std::vector<std::unique_ptr<Subcommand>> out;
  out.push_back(std::make_unique<CheckCommand>());
  out.push_back(std::make_unique<EmitCommand>());
  return out;
}

}  // namespace tlc::driver
