#include "tools/tlc_difftest/runner.h"

#include <iostream>
#include <sstream>

#include "compiler/driver/cpu_target.h"
#include "compiler/driver/emulate_target.h"
#include "compiler/driver/run_common.h"
#include "compiler/sema/frontend.h"

namespace tlc::difftest {

namespace {

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::vector<std::string> knownTargets() { return {"interp", "cpu", "emu:sm_80", "emu:sm_86", "emu:sm_89", "emu:sm_90", "emu:sm_90a"}; }

std::vector<std::string> defaultTargets() { return {"interp", "cpu", "emu:sm_80"}; }

TargetResult runOnTarget(const GeneratedProgram& program, const std::string& path, const std::string& target,
                         double emulatorTimeout) {
  TargetResult result;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer(path, program.source);
  std::optional<ir::Module> module = compileSource(sources, diags, file, {});
  if (!module || diags.hasErrors()) {
    result.log = diags.renderAll();
    return result;
  }
  result.compiled = true;
  driver::RunSettings settings;
  settings.dims = program.dims;
  settings.seed = program.seed;
  settings.check = target != "interp";
  std::ostringstream out, err;
  settings.out = &out;
  // The emulator prints its findings to stderr: they belong in the log.
  std::streambuf* savedErr = std::cerr.rdbuf(err.rdbuf());
  int rc = 1;
  if (target == "interp") {
    rc = driver::runWithInterpreter(*module, settings, diags);
  } else if (target == "cpu") {
    rc = driver::runOnCpu(*module, settings, driver::CpuOptions{}, diags);
  } else if (startsWith(target, "emu:")) {
    driver::EmulateOptions options;
    options.reportBankConflicts = false;
    options.timeoutSeconds = emulatorTimeout;
    rc = driver::runCudaEmulated(*module, settings, target.substr(4), diags, options);
  }
  std::cerr.rdbuf(savedErr);
  result.pass = rc == 0 && !diags.hasErrors();
  result.log = out.str() + err.str() + diags.renderAll();
  return result;
}

std::string reproduceCommand(const GeneratedProgram& program, const std::string& path, const std::string& target) {
  std::string cmd = "tlc ";
  cmd += target == "interp" || target == "check" ? (target == "check" ? "check " : "run ") + path
                                                 : "run " + path + " --check";
  if (target == "interp") cmd += " --target=interp";
  if (target == "cpu") cmd += " --target=cpu";
  if (startsWith(target, "emu:")) cmd += " --target=cuda:" + target.substr(4) + " --emulate";
  if (target != "check") {
    cmd += " --seed " + std::to_string(program.seed);
    for (const auto& [name, size] : program.dims) cmd += " --dim " + name + "=" + std::to_string(size);
  }
  return cmd;
}

std::string disagreementLines(const std::string& log) {
  std::istringstream in(log);
  std::string line, picked;
  bool inFailure = false;
  while (std::getline(in, line)) {
    if (line == "check: FAIL") {
      inFailure = true;
      continue;
    }
    bool failureDetail = inFailure && startsWith(line, "  ");
    inFailure = failureDetail;
    if (failureDetail || line.find("error:") != std::string::npos) picked += line + "\n";
  }
  return picked.empty() ? log : picked;
}

}  // namespace tlc::difftest
