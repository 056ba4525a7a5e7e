// Data-driven tests of layout planning on textual IR: every
// tests/cuda/layouts/*.tir is parsed, the shared and fragment buffers of each
// kernel get their layouts (planKernelLayouts, as the CUDA backend plans
// them for sm_90a: mma accumulators, swizzles, row-group layouts, layout
// annotations), and the plan as printed by describeKernelLayouts (also
// `--print-after-all` on cuda targets), followed by its conflicts as
//   error <line>:<col>: <message>
//   note <line>:<col>: <message>
// is checked against the file's CHECK lines.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_layout_plan.h"
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

// The block-level gemms of a kernel (planMma's input).
class Gemms : public ir::IRVisitor {
 public:
  std::vector<const ir::GemmStmt*> found;
  void visitFor(const ir::ForStmt* f) override {
    if (f->forKind != ir::ForKind::Parallel) ir::IRVisitor::visitFor(f);
  }
  void visitGemm(const ir::GemmStmt* g) override { found.push_back(g); }
};

std::string position(SourceLoc loc) { return std::to_string(loc.line) + ":" + std::to_string(loc.col); }

std::string describe(const ir::KernelStmt& k) {
  Gemms gemms;
  gemms.visit(k.body);
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  cuda::KernelLayoutPlan plan = cuda::planKernelLayouts(k, gemms.found, k.threads, options, {});
  std::string out = cuda::describeKernelLayouts(k, plan);
  for (const cuda::LayoutConflict& c : plan.conflicts) {
    out += "error " + position(c.loc) + ": " + c.message + "\n";
    for (const cuda::LayoutNote& n : c.notes) out += "note " + position(n.loc) + ": " + n.message + "\n";
  }
  return out;
}

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
        printed += "kernel @" + f->name + ":\n" + describe(*k);
    }
    auto check = testing::fileCheck(printed, text.str());
    CHECK_MESSAGE(check.ok, check.message);
  }
}
