// Helpers for CPU backend tests: compile `.tl` text or files through the
// front end, run a kernel on the CPU (JIT) and in the reference interpreter
// on the same seeded arguments, and compare with run_common's tolerances.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/driver/cpu_target.h"
#include "compiler/sema/frontend.h"

namespace tlc::test {

struct CpuCompiled {
  std::unique_ptr<SourceManager> sources = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticEngine> diags = std::make_unique<DiagnosticEngine>(*sources);
  std::optional<ir::Module> module;
  std::string rendered() const { return diags->renderAll(); }
};

inline CpuCompiled compileTl(const std::string& text, const std::vector<Define>& defines = {}) {
  CpuCompiled c;
  uint32_t file = c.sources->addBuffer("test.tl", text);
  c.module = compileSource(*c.sources, *c.diags, file, defines);
  return c;
}

// The LLVM IR of `c`'s module lowered by the CPU pipeline, for `options`'
// target (`optimized`: after LLVM's optimizer); "" when it does not lower.
inline std::string cpuLLVM(CpuCompiled& c, const cpu::CpuOptions& options, bool optimized) {
  if (!c.module) return "";
  auto lowered = driver::lowerModuleForCpu(*c.module, {}, *c.diags);
  return lowered ? cpu::emitLLVMText(*lowered, options, optimized) : "";
}

inline CpuCompiled compileTlFile(const std::string& path, const std::vector<Define>& defines = {}) {
  CpuCompiled c;
  std::string error;
  uint32_t file = c.sources->addFile(path, error);
  if (file != 0) c.module = compileSource(*c.sources, *c.diags, file, defines);
  return c;
}

struct OracleComparison {
  bool compiled = false;
  bool ran = false;
  bool pass = false;
  std::string log;  // diagnostics and the summary table
};

// Runs the module's first kernel on the CPU and in the interpreter;
// `onResults`, when given, also sees the CPU's results (for references
// computed in the test).
inline OracleComparison runAgainstOracle(CpuCompiled& c, const std::map<std::string, int64_t>& dims = {},
                                         uint64_t seed = 1, const driver::CpuOptions& options = {},
                                         const std::function<void(driver::RunArgs&)>& onResults = {},
                                         const std::map<std::string, std::pair<double, double>>& fills = {}) {
  OracleComparison r;
  if (!c.module) {
    r.log = c.rendered();
    return r;
  }
  auto jit = driver::compileForCpu(*c.module, options, *c.diags);
  r.compiled = jit != nullptr;
  if (!jit) {
    r.log = c.rendered();
    return r;
  }
  driver::RunSettings settings;
  settings.dims = dims;
  settings.seed = seed;
  settings.fills = fills;
  settings.check = true;
  std::ostringstream out;
  settings.out = &out;
  int rc = driver::runTarget(*c.module, settings, *c.diags, "cpu",
                             [&](const ir::PrimFunc& f, driver::RunArgs& args, const driver::RunSettings&,
                                 DiagnosticEngine&) {
                               cpu::CpuKernelFn fn = jit->kernel(f.name);
                               if (!fn) return false;
                               r.ran = true;
                               driver::callCpuKernel(fn, f, args);
                               if (onResults) onResults(args);
                               return true;
                             });
  r.pass = rc == 0 && r.ran;
  r.log = out.str() + c.rendered();
  return r;
}

}  // namespace tlc::test
