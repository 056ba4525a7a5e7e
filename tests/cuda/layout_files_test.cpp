// Data-driven tests of layout planning on textual IR: every
// tests/cuda/layouts/*.tir is parsed, the shared and fragment buffers of each
// kernel get their layouts (planKernelLayouts, as the CUDA backend plans
// them for sm_90a: mma accumulators, swizzles, row-group layouts, layout
// annotations), and the plan as printed by describeKernelLayouts (also
// `--print-after-all` on cuda targets), followed by its conflicts as
//   error <line>:<col>: <message>
//   note <line>:<col>: <message>
// is checked against the file's CHECK lines. A file whose first line is
// `// RUN: cuda-layout-inference` runs that pass instead, and its CHECK lines
// read the module it prints (or the errors, when the pass stops).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/backends/cuda/cuda_layout_inference.h"
#include "compiler/backends/cuda/cuda_layout_plan.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "tests/support/filecheck.h"
#include "tests/support/tir_files.h"

using namespace tlc;
namespace fs = std::filesystem;

namespace {

class Kernels : public ir::IRVisitor {
 public:
  std::vector<const ir::KernelStmt*> found;
  void visitKernel(const ir::KernelStmt* k) override { found.push_back(k); }
};

std::string position(SourceLoc loc) { return std::to_string(loc.line) + ":" + std::to_string(loc.col); }

cuda::CudaOptions sm90a() {
  cuda::CudaOptions options;
  options.arch = "sm_90a";
  return options;
}

std::string describe(const ir::KernelStmt& k) {
  cuda::KernelLayoutPlan plan = cuda::planKernelLayouts(k, sm90a());
  std::string out = cuda::describeKernelLayouts(k, plan);
  for (const cuda::LayoutConflict& c : plan.conflicts) {
    out += "error " + position(c.loc) + ": " + c.message + "\n";
    for (const cuda::LayoutNote& n : c.notes) out += "note " + position(n.loc) + ": " + n.message + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("every tests/cuda/layouts/*.tir file gets the layouts its CHECK lines expect") {
  testing::forEachTirFile("cuda/layouts", [](const testing::TestFile& f, const ir::Module& module,
                                              DiagnosticEngine& diags) {
    std::string printed;
    if (f.text.rfind("// RUN: cuda-layout-inference", 0) == 0) {
      passes::PassContext ctx(diags);
      ir::Module out = cuda::inferLayouts(module, ctx, sm90a());
      printed = ir::printModule(out);
      for (const Diagnostic& d : diags.diagnostics()) {
        printed += "error " + position(d.loc) + ": " + d.message + "\n";
        for (const auto& n : d.notes) printed += "note " + position(n.loc) + ": " + n.message + "\n";
      }
    } else {
      for (const ir::Func& fn : module.funcs) {
        Kernels kernels;
        kernels.visit(fn->body);
        for (const ir::KernelStmt* k : kernels.found)
          printed += "kernel @" + fn->name + ":\n" + describe(*k);
      }
    }
    auto check = testing::fileCheck(printed, f.text);
    CHECK_MESSAGE(check.ok, check.message);
  });
}
