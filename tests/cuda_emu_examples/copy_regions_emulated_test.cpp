// Copy regions from points and slices of 1 to 4 dimensions, and the shared
// numeric rules (NaN in max/min, saturating casts), in the CUDA emulator,
// against references written with loops (tests/support/).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "tests/cuda_emu_examples/emulate_util.h"
#include "tests/support/copy_regions.h"
#include "tests/support/numerics.h"

using namespace tlc;
using namespace tlc::test;
namespace fs = std::filesystem;

namespace {

// Runs `k` in the emulator with its tensors saved to a fresh directory, then `check(dir)`.
template <class Check>
void runSaved(const ir::Module& module, DiagnosticEngine& diags, const CopyRegionCase& k, const std::string& name,
              Check check) {
  fs::path dir = fs::temp_directory_path() / ("tlc_emu_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ostringstream out;
  driver::RunSettings settings;
  settings.kernel = k.kernel;
  settings.dims = k.dims;
  settings.seed = 7;
  settings.saveDir = dir.string();
  settings.out = &out;
  int rc = driver::runCudaEmulated(module, settings, "sm_80", diags);
  std::string log = out.str() + diags.renderAll();
  INFO(log);
  REQUIRE(rc == 0);
  check(dir.string());
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("copy regions in the CUDA emulator match loops over the inputs") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = compileTreeFile("tests/support/copy_regions.tl", sm, diags);
  int n = 0;
  for (const CopyRegionCase& k : copyRegionCases()) {
    CAPTURE(k.kernel);
    CAPTURE(k.dims.begin()->second);
    runSaved(module, diags, k, "copy" + std::to_string(n++),
             [&](const std::string& dir) { checkCopyRegionOutputs(k, dir); });
  }
}

TEST_CASE("NaN in max and min, and float-to-integer casts, in the CUDA emulator") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = compileTreeFile("tests/support/numerics.tl", sm, diags);
  runSaved(module, diags, {"nan_and_casts", {}}, "numerics", [](const std::string& dir) { checkNumerics(dir); });
}
