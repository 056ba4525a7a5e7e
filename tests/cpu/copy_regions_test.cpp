// Copy regions from points and slices of 1 to 4 dimensions, and the shared
// numeric rules (NaN in max/min, saturating casts), on the interpreter and the
// CPU target, against references written with loops (tests/support/).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "tests/cpu/cpu_test_util.h"
#include "tests/support/copy_regions.h"
#include "tests/support/numerics.h"

using namespace tlc;
using namespace tlc::test;
namespace fs = std::filesystem;

namespace {

std::string freshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tlc_copy_regions_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

driver::RunSettings settingsFor(const CopyRegionCase& c, const std::string& dir, std::ostream& out) {
  driver::RunSettings s;
  s.kernel = c.kernel;
  s.dims = c.dims;
  s.seed = 7;
  s.saveDir = dir;
  s.out = &out;
  return s;
}

int runOnCpu(CpuCompiled& c, cpu::CpuJitModule& jit, const driver::RunSettings& settings) {
  return driver::runTarget(*c.module, settings, *c.diags, "cpu",
                           [&](const ir::PrimFunc& f, driver::RunArgs& args, const driver::RunSettings&,
                               DiagnosticEngine&) {
                             cpu::CpuKernelFn fn = jit.kernel(f.name);
                             if (!fn) return false;
                             driver::callCpuKernel(fn, f, args);
                             return true;
                           });
}

}  // namespace

TEST_CASE("copy regions on the interpreter match loops over the inputs") {
  CpuCompiled c = compileTlFile(copyRegionsFile());
  REQUIRE_MESSAGE(c.module, c.rendered());
  int n = 0;
  for (const CopyRegionCase& k : copyRegionCases()) {
    CAPTURE(k.kernel);
    CAPTURE(k.dims.begin()->second);
    std::string dir = freshDir("interp" + std::to_string(n++));
    std::ostringstream out;
    int rc = driver::runWithInterpreter(*c.module, settingsFor(k, dir, out), *c.diags);
    std::string log = out.str() + c.rendered();
    INFO(log);
    REQUIRE(rc == 0);
    checkCopyRegionOutputs(k, dir);
    fs::remove_all(dir);
  }
}

TEST_CASE("copy regions on the CPU target match loops over the inputs") {
  CpuCompiled c = compileTlFile(copyRegionsFile());
  REQUIRE_MESSAGE(c.module, c.rendered());
  auto jit = driver::compileForCpu(*c.module, {}, *c.diags);
  REQUIRE_MESSAGE(jit, c.rendered());
  int n = 0;
  for (const CopyRegionCase& k : copyRegionCases()) {
    CAPTURE(k.kernel);
    CAPTURE(k.dims.begin()->second);
    std::string dir = freshDir("cpu" + std::to_string(n++));
    std::ostringstream out;
    int rc = runOnCpu(c, *jit, settingsFor(k, dir, out));
    std::string log = out.str() + c.rendered();
    INFO(log);
    REQUIRE(rc == 0);
    checkCopyRegionOutputs(k, dir);
    fs::remove_all(dir);
  }
}

TEST_CASE("NaN in max and min, and float-to-integer casts, on the interpreter and the CPU target") {
  CpuCompiled c = compileTlFile(numericsFile());
  REQUIRE_MESSAGE(c.module, c.rendered());
  auto jit = driver::compileForCpu(*c.module, {}, *c.diags);
  REQUIRE_MESSAGE(jit, c.rendered());
  for (bool cpu : {false, true}) {
    CAPTURE(cpu);
    std::string dir = freshDir(cpu ? "numerics_cpu" : "numerics_interp");
    std::ostringstream out;
    CopyRegionCase k{"nan_and_casts", {}};
    driver::RunSettings settings = settingsFor(k, dir, out);
    int rc = cpu ? runOnCpu(c, *jit, settings) : driver::runWithInterpreter(*c.module, settings, *c.diags);
    std::string log = out.str() + c.rendered();
    INFO(log);
    REQUIRE(rc == 0);
    checkNumerics(dir);
    fs::remove_all(dir);
  }
}
