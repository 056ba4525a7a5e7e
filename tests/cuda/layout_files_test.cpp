// Data-driven tests of fragment layout inference on textual IR: every
// tests/cuda/layouts/*.tir is parsed, the fragments of each kernel get their
// layouts (inferFragmentLayouts; no fixed mma accumulators), and the plan as
// printed by describeFragmentLayouts (also `--print-after-all` on cuda
// targets) is checked against the file's CHECK lines.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_fragment_layout.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/ir_parser.h"
#include "tests/support/filecheck.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

class Kernels : public ir::IRVisitor {
 public:
  std::vector<const ir::KernelStmt*> found;
  void visitKernel(const ir::KernelStmt* k) override { found.push_back(k); }
};

}  // namespace

TEST_CASE("every tests/cuda/layouts/*.tir file gets the layouts its CHECK lines expect") {
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(fs::path(TLC_SOURCE_DIR) / "tests" / "cuda" / "layouts"))
    if (e.path().extension() == ".tir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const fs::path& path : files) {
    INFO("file: " << path.filename().string());
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer(path.filename().string(), text.str());
    auto module = ir::parseIRModule(sources, diags, file);
    REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
    std::string printed;
    for (const ir::Func& f : module->funcs) {
      Kernels kernels;
      kernels.visit(f->body);
      for (const ir::KernelStmt* k : kernels.found)
        printed += "kernel @" + f->name + ":\n" + cuda::describeFragmentLayouts(*k, cuda::inferFragmentLayouts(*k, k->threads, {}), {});
    }
    auto check = testing::fileCheck(printed, text.str());
    CHECK_MESSAGE(check.ok, check.message);
  }
}
