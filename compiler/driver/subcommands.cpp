#include "compiler/driver/subcommands.h"

#include <algorithm>
#include <iostream>

#include "compiler/driver/compile.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/driver/header_gen.h"
#include "compiler/driver/output_paths.h"
#include "compiler/driver/run_common.h"
#include "compiler/driver/targets.h"
#include "compiler/driver/tuned_build.h"
#include "compiler/driver/tuner.h"
#include "compiler/ir/printer.h"
#include "compiler/lexer/lexer.h"
#include "compiler/parser/ast_dump.h"
#include "compiler/parser/parser.h"
#include "compiler/passes/pass_registry.h"
#include "compiler/support/file_io.h"
#include "compiler/support/suggest.h"

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

// Options every subcommand that compiles for a target takes.
struct TargetOptions {
  std::string target;
  bool printAfterAll = false;
  bool timePasses = false;
  std::string cpu;
  std::string features;
  bool checkBounds = false;
  bool noWarpSpecialize = false;
  bool persistent = true;
  bool warnSpills = false;
  bool noTmaStaging = false;

  void attach(CLI::App* cmd, const std::string& defaultTarget) {
    cmd->add_option("--target", target, targetsHelp())->default_val(defaultTarget);
    cmd->add_flag("--print-after-all", printAfterAll, "print the tile IR after every lowering pass (stderr)");
    cmd->add_flag("--time-passes", timePasses, "print the time spent in each pass (stderr)");
    cmd->add_option("--cpu", cpu, "CPU to generate code for (default: this machine's), e.g. znver4");
    cmd->add_option("--features", features, "CPU features to add or remove, e.g. +avx2,-avx512f");
    cmd->add_flag("--check-bounds", checkBounds,
                  "cpu: test every access against its buffer's shape (always on with run --check)");
    cmd->add_flag("--no-warp-specialize", noWarpSpecialize,
                  "cuda:sm_90a: pipelined gemms use the sm_80 mainloop (cp.async + mma.sync) instead of a "
                  "TMA producer warpgroup and wgmma");
    cmd->add_flag("--persistent,!--no-persistent", persistent,
                  "cuda:sm_90a: kernels with a warp-specialized mainloop run persistently (the default: a block "
                  "per SM looping over the tiles; the next tile's loads overlap the last one's epilogue); "
                  "--no-persistent launches a block per tile");
    cmd->add_flag("--no-tma-staging", noTmaStaging,
                  "cuda:sm_90a: a gemm operand whose rows TMA cannot address (not a multiple of 16 bytes) makes its "
                  "kernel run the version without TMA, instead of being copied by the launch into padded rows");
    cmd->add_flag("--warn-spills", warnSpills,
                  "cuda: warn about each kernel whose registers ptxas spills to local memory (cuda-register-spills)");
  }
  TargetRequest request() const {
    TargetRequest r;
    r.target = target;
    r.printAfterAll = printAfterAll;
    r.timePasses = timePasses;
    r.cpu = cpu;
    r.features = features;
    r.checkBounds = checkBounds;
    r.warpSpecialize = !noWarpSpecialize;
    r.persistent = persistent;
    r.warnSpills = warnSpills;
    r.stageTma = !noTmaStaging;
    return r;
  }
};

int exitFor(const Compilation& c) { return c.hasErrors() ? kExitUserError : kExitOk; }

const std::vector<std::string> kStages = {"tokens", "ast", "tir", "cuda", "ptx", "hip", "amdgcn", "llvm", "asm"};

bool checkStageName(const std::string& stage) {
  if (std::find(kStages.begin(), kStages.end(), stage) != kStages.end()) return true;
  std::string list;
  for (const std::string& s : kStages) list += (list.empty() ? "" : ", ") + s;
  std::cerr << "tlc: error: unknown stage `" << stage << "`" << didYouMean(stage, kStages)
            << "\n  the stages are: " << list << "\n";
  return false;
}

// Every file the compilation read: the program and the modules it imports
// (not the buffers of -D and --where, named "<...>").
std::vector<std::string> sourceFiles(Compilation& c) {
  std::vector<std::string> out;
  for (uint32_t id = 1; c.sources().hasFile(id); ++id)
    if (c.sources().name(id).rfind('<', 0) != 0) out.push_back(c.sources().name(id));
  return out;
}

// Reads `--dim NAME=SIZE` options into *dims; false after printing why.
bool parseDims(const std::vector<std::string>& raw, std::map<std::string, int64_t>* dims) {
  for (const std::string& d : raw) {
    auto parsed = parseDimSetting(d);
    if (!parsed) {
      std::cerr << "tlc: error: malformed `--dim " << d
                << "`: write `--dim NAME=SIZE` with SIZE in 0..2147483647, e.g. `--dim M=1000`\n";
      return false;
    }
    auto [it, inserted] = dims->emplace(parsed->first, parsed->second);
    if (!inserted) {
      std::cerr << "tlc: error: `--dim " << parsed->first << "` is given twice (" << parsed->first << "="
                << it->second << " and " << d << "): give each dimension once\n";
      return false;
    }
  }
  return true;
}

// Reads `--fill NAME=LO:HI` options into *fills; false after printing why.
bool parseFills(const std::vector<std::string>& raw, std::map<std::string, std::pair<double, double>>* fills) {
  for (const std::string& f : raw) {
    auto parsed = parseFillSetting(f);
    if (!parsed) {
      std::cerr << "tlc: error: malformed `--fill " << f
                << "`: write `--fill NAME=LO:HI` with finite LO < HI, e.g. `--fill ids=0:32000`\n";
      return false;
    }
    if (!fills->emplace(parsed->first, parsed->second).second) {
      std::cerr << "tlc: error: `--fill " << parsed->first << "` is given twice: give each tensor once\n";
      return false;
    }
  }
  return true;
}

class CheckCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("check", "parse and type-check a program and check its pipeline plans; exit 1 if it has errors");
    program_.attach(cmd_);
    cmd_->add_option("--target", target_,
                     "the target the program is checked for, which T.target(...) tests (default: none, where "
                     "every T.target(...) is False)");
  }
  int run() override {
    if (!target_.empty() && !checkTargetName(target_)) return kExitUsage;
    Compilation c;
    c.setTarget(target_);
    std::optional<ir::Module> module = c.compile(program_.file, program_.defines);
    if (module) {
      // The target-independent checks of the pass pipelines: a user's
      // pipeline plan (docs/language.md), as `tlc run` and `tlc build` check it.
      passes::PassPipeline checks;
      checks.add(*passes::findPass("inline-loop-lets"));
      checks.add(*passes::findPass("pipeline-planning"));
      passes::PassContext ctx(c.diags());
      checks.run(*module, ctx);
    }
    return exitFor(c);
  }

 private:
  ProgramOptions program_;
  std::string target_;
};

class EmitCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("emit", "print one stage of the compilation");
    program_.attach(cmd_);
    cmd_->add_option("--stage", stage_,
                     "tokens | ast | tir | cuda | ptx (for --target=cuda:sm_XX, default sm_80) | hip | amdgcn (for "
                     "--target=hip:gfxNNN, default gfx942) | llvm | asm (cpu)")
        ->default_val("tir");
    cmd_->add_option("--passes", passes_,
                     "with --stage=tir: run these registered tile-IR passes, in order, before printing "
                     "(comma-separated: --passes=pipeline-planning,expand-pipelines)");
    target_.attach(cmd_, "cpu");
  }
  int run() override {
    if (!checkStageName(stage_) || !checkTargetName(target_.target)) return kExitUsage;
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
    c.setTarget(frontendTarget(target_.request(), stage_));
    auto module = c.compile(program_.file, program_.defines);
    if (!module) return kExitUserError;
    if (!passes_.empty() && stage_ != "tir") {
      std::cerr << "tlc: error: --passes applies to --stage=tir\n";
      return kExitUsage;
    }
    if (stage_ == "tir") {
      if (!passes_.empty()) {
        std::string error;
        auto pipeline = passes::pipelineFromNames(passes_, error);
        if (!pipeline) {
          std::cerr << "tlc: error: " << error << "\n";
          return kExitUsage;
        }
        passes::PassContext ctx(c.diags());
        module = pipeline->run(*module, ctx);
        c.flush();
        if (!module) return kExitUserError;
      }
      std::cout << ir::printModule(*module);
      return kExitOk;
    }
    int code = emitForTarget(*module, stage_, target_.request(), c.diags(), std::cout);
    c.flush();
    return code;
  }

 private:
  ProgramOptions program_;
  TargetOptions target_;
  std::string stage_, passes_;
};

class RunCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("run", "run a kernel on seeded random inputs and summarize its outputs");
    program_.attach(cmd_);
    target_.attach(cmd_, defaultRunTarget());
    cmd_->add_option("--dim", dims_, "size of a runtime (dynamic) dimension: --dim M=1000");
    cmd_->add_option("--seed", settings_.seed, "seed of the random inputs")->default_val(0);
    cmd_->add_option("--fill", fills_, "random contents of one tensor uniform in [LO, HI) (integers: the whole numbers there), e.g. indices into a table: --fill ids=0:32000");
    cmd_->add_option("--kernel", settings_.kernel, "the kernel to run when the file has several");
    cmd_->add_flag("--check", settings_.check, "compare every output with the reference interpreter");
    cmd_->add_flag("--bench", settings_.bench, "time the kernel and print GFLOP/s or GB/s");
    cmd_->add_option("--save", settings_.saveDir, "write every tensor after the run as DIR/<param>.npy (and, with --check, the interpreter's as DIR/<param>.interp.npy)");
    cmd_->add_option("--load", settings_.loadDir, "read tensors (and scalars, from one-element arrays) from DIR/<param>.npy where such a file exists (the others stay random)");
    cmd_->add_flag("--emulate", emulate_, "run GPU code in the CPU emulator (with --target=cuda:sm_XX or hip:gfxNNN)");
  }
  int run() override {
    if (!checkTargetName(target_.target)) return kExitUsage;
    Compilation c;
    if (!parseDims(dims_, &settings_.dims) || !parseFills(fills_, &settings_.fills)) return kExitUsage;
    c.setTarget(frontendTarget(target_.request()));
    auto module = c.compile(program_.file, program_.defines, nullptr, settings_.kernel);
    if (!module) return kExitUserError;
    TargetRequest request = target_.request();
    request.emulate = emulate_;
    int code = runOnTarget(*module, settings_, request, c.diags());
    c.flush();
    return code;
  }

 private:
  ProgramOptions program_;
  TargetOptions target_;
  RunSettings settings_;
  std::vector<std::string> dims_, fills_;
  bool emulate_ = false;
};

class BuildCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("build", "compile a program to a .so (cpu), .cubin (cuda) or .hsaco (hip)");
    program_.attach(cmd_);
    target_.attach(cmd_, "cpu");
    cmd_->add_option("-o,--output", output_, "output file")->required();
    cmd_->add_option("--header", header_, "also write a C header with a typed launch function per kernel");
    cmd_->add_option("--embed", embed_, "also write a C source embedding the built binary (no files needed at run time)");
    cmd_->add_option("--depfile", depfile_,
                     "also write a Makefile-syntax depfile: the output depends on the source and every imported module");
    cmd_->add_flag("--tuned", tuned_, "use the configurations `tlc tune` found for the kernels (docs/tuning.md)");
    cmd_->add_option("--dim", dims_, "with --tuned: the sizes to pick tuning results for, --dim M=4096");
    cmd_->add_option("--device", device_, "with --tuned: the device the results were tuned on (default: this machine's)");
    cmd_->add_option("--db", db_, "with --tuned: the results database's directory (docs/tuning.md)");
  }
  int run() override {
    if (!checkTargetName(target_.target)) return kExitUsage;
    std::vector<OutputFile> outputs = {{"-o", output_}};
    if (!header_.empty()) outputs.push_back({"--header", header_});
    if (!embed_.empty()) outputs.push_back({"--embed", embed_});
    if (!depfile_.empty()) outputs.push_back({"--depfile", depfile_});
    if (!checkOutputs(outputs, {program_.file})) return kExitUsage;
    TunedBuildRequest tunedRequest{program_.file, program_.defines, {}, device_, db_};
    if (!tuned_ && (!dims_.empty() || !device_.empty() || !db_.empty())) {
      std::cerr << "tlc: error: --dim, --device and --db choose tuning results: use them with --tuned\n";
      return kExitUsage;
    }
    if (!parseDims(dims_, &tunedRequest.dims)) return kExitUsage;
    Compilation first;
    first.setTarget(frontendTarget(target_.request()));
    FrontendTuning tuning;
    auto module = first.compile(program_.file, program_.defines, tuned_ ? &tuning : nullptr);
    if (!module) return kExitUserError;
    // With --tuned, the program again with the tuned bindings.
    Compilation tunedCompilation;
    tunedCompilation.setTarget(frontendTarget(target_.request()));
    Compilation& c = tuned_ ? tunedCompilation : first;
    std::vector<std::string> records;
    if (tuned_) {
      auto defines =
          tunedDefines(tunedRequest, *module, tuning.spaces, first.sourceTexts(), target_.request(), &records);
      if (!defines) return kExitUserError;
      module = c.compile(program_.file, *defines);
      if (!module) return kExitUserError;
    }
    std::vector<std::string> sources = sourceFiles(c);
    if (!checkOutputs(outputs, sources)) return kExitUsage;  // the imported modules too
    int code = buildForTarget(*module, output_, target_.request(), c.diags());
    c.flush();
    if (code != kExitOk) return code;
    std::string error;
    if ((!header_.empty() || !embed_.empty()) && !writeHostFiles(*module, output_, header_, embed_, &error)) {
      std::cerr << "tlc: error: " << error << "\n";
      return kExitUserError;
    }
    // A rebuild is due when a tuning record used changes too.
    std::vector<std::string> inputs = sources;
    inputs.insert(inputs.end(), records.begin(), records.end());
    if (!depfile_.empty() && !replaceNamedFile(depfile_, depfileText(output_, inputs), &error)) {
      std::cerr << "tlc: error: " << error << "\n";
      return kExitUserError;
    }
    return kExitOk;
  }

 private:
  ProgramOptions program_;
  TargetOptions target_;
  std::string output_;
  std::string header_;
  std::string embed_;
  std::string depfile_;
  bool tuned_ = false;
  std::vector<std::string> dims_;
  std::string device_;
  std::string db_;
};

class TuneCommand : public Subcommand {
 public:
  void attach(CLI::App& app) override {
    cmd_ = app.add_subcommand("tune", "find the fastest configuration of a kernel's tuning space (docs/tuning.md)");
    cmd_->add_option("file", settings_.file, "the .tl source");
    cmd_->add_option("-D,--define", settings_.defines, "bind a compile-time parameter: -D NAME=VALUE")
        ->allow_extra_args(false);
    target_.attach(cmd_, defaultRunTarget());
    cmd_->add_option("--dim", dims_, "size of a runtime (dynamic) dimension to tune at: --dim M=4096");
    cmd_->add_option("--kernel", settings_.kernel, "the kernel to tune when the file has several");
    cmd_->add_option("--space", settings_.space, "replace (or add) a parameter's candidates: --space block_M=64,128");
    cmd_->add_option("--where", settings_.where, "one more condition on the candidates: --where 'block_M <= block_N'");
    cmd_->add_option("-j,--jobs", settings_.jobs, "compile threads (default: one per core)");
    cmd_->add_option("--check-count", settings_.checkCount,
                     "how many of the fastest must agree with the interpreter (default 3)");
    cmd_->add_option("--min-time", settings_.minTime, "seconds of timed runs per candidate (default 0.3)");
    cmd_->add_option("--seed", settings_.seed, "seed of the random inputs")->default_val(0);
    cmd_->add_option("--devices", settings_.devices, "cuda: the GPUs to measure on, by ordinal (default: all)")
        ->delimiter(',');
    cmd_->add_flag("--force", settings_.force, "tune again even when results for these inputs exist");
    cmd_->add_option("--db", settings_.db, "the results database's directory (default: <kernel cache>/tune)");
    cmd_->add_flag("--show", show_, "print the results database (with FILE: that file's results only)");
    cmd_->add_flag("-v,--verbose", verbose_, "with --show: every candidate's outcome");
  }
  int run() override {
    if (show_) {
      TuneDatabase db = TuneDatabase::locate(settings_.db);
      std::vector<TuneRecord> records;
      for (TuneRecord& r : db.all())
        if (settings_.file.empty() || r.file == settings_.file) records.push_back(std::move(r));
      if (records.empty()) std::cout << "no tuning results in " << db.dir() << "\n";
      std::cout << formatRecords(records, verbose_);
      return kExitOk;
    }
    if (settings_.file.empty()) {
      std::cerr << "tlc: error: `tlc tune` needs the .tl file to tune (or --show)\n";
      return kExitUsage;
    }
    if (!checkTargetName(target_.target) || !parseDims(dims_, &settings_.dims)) return kExitUsage;
    return tuneKernel(settings_, target_.request());
  }

 private:
  TuneSettings settings_;
  TargetOptions target_;
  std::vector<std::string> dims_;
  bool show_ = false;
  bool verbose_ = false;
};

}  // namespace

std::vector<std::unique_ptr<Subcommand>> makeSubcommands() {
  std::vector<std::unique_ptr<Subcommand>> out;
  out.push_back(std::make_unique<CheckCommand>());
  out.push_back(std::make_unique<EmitCommand>());
  out.push_back(std::make_unique<RunCommand>());
  out.push_back(std::make_unique<BuildCommand>());
  out.push_back(std::make_unique<TuneCommand>());
  return out;
}

}  // namespace tlc::driver
