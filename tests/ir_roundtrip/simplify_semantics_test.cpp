// simplify preserves meaning: each example, before and after the CPU
// lowering (whose guards and clamps give the range reasoning real work), is
// run by the reference interpreter with and without simplify on the same
// seeded inputs, with dynamic sizes the tiles do not divide; the outputs
// must be bit-identical.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "compiler/interp/host_tensor.h"
#include "compiler/interp/interpreter.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/int_arith.h"
#include "compiler/ir/substitute.h"
#include "compiler/passes/cpu_pipeline.h"
#include "compiler/passes/simplify.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace fs = std::filesystem;

namespace {

// Runs `f` on fresh copies of `inputs`; returns the tensors after the run.
std::optional<std::vector<interp::HostTensor>> run(const ir::PrimFunc& f, const std::vector<interp::HostTensor>& inputs,
                                                   std::string& errors) {
  std::vector<interp::HostTensor> tensors = inputs;
  std::vector<interp::ArgValue> args;
  size_t t = 0;
  for (const ir::Param& p : f.params) {
    if (p.buffer) args.push_back(interp::ArgValue::ofTensor(tensors[t++]));
    else if (isFloat(p.scalar->dtype)) args.push_back(interp::ArgValue::ofFloat(0.5));
    else args.push_back(interp::ArgValue::ofInt(3));
  }
  SourceManager sm;
  DiagnosticEngine diags(sm);
  if (!interp::interpret(f, args, diags)) {
    errors = diags.renderAll();
    return std::nullopt;
  }
  return tensors;
}

bool bitIdentical(const interp::HostTensor& a, const interp::HostTensor& b) {
  return a.sizeBytes() == b.sizeBytes() && std::memcmp(a.data(), b.data(), a.sizeBytes()) == 0;
}

}  // namespace

TEST_CASE("simplified kernels compute exactly what the originals compute") {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(TLC_SOURCE_DIR) / "examples"))
    if (entry.path().extension() == ".tl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  int compared = 0;
  for (const fs::path& path : files) {
    INFO("example: " << path.string());
    SourceManager sources;
    DiagnosticEngine diags(sources);
    std::string error;
    uint32_t file = sources.addFile(path.string(), error);
    auto module = compileSource(sources, diags, file, {});
    REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
    passes::PassContext ctx(diags);
    auto lowered = cpu::lowerForCpu(*module, ctx, cpu::CpuLoweringOptions{});
    REQUIRE(lowered.has_value());
    for (const ir::Module* m : {&*module, &*lowered}) {
      ir::Module simplified = passes::simplify(*m);
      for (size_t fi = 0; fi < m->funcs.size(); ++fi) {
        const ir::PrimFunc& f = *m->funcs[fi];
        // Every dynamic dimension is 37 (no tile divides it), or 5 + 32 i for
        // the i-th after it. A kernel with a 3-D grid (batch x heads x tiles,
        // as attention's) would take the interpreter minutes at those sizes:
        // its first dimension (the batch) is 1, the second 37, the others 2.
        // So would one with more than three (the convolution's batch, image
        // and channels, whose product is its gemm's M and K): 2 + i each.
        struct GridRank : ir::IRVisitor {
          size_t rank = 0;
          void visitKernel(const ir::KernelStmt* k) override { rank = std::max(rank, k->grid.size()); }
        } grid;
        grid.visit(f.body);
        ir::VarMap sizes;
        for (size_t i = 0; i < f.shapeVars.size(); ++i) {
          int64_t n = i == 0 ? 37 : 5 + 32 * int64_t(i);
          if (grid.rank == 3) n = i == 0 ? 1 : i == 1 ? 37 : 2;
          if (f.shapeVars.size() > 3) n = 2 + int64_t(i);
          sizes[f.shapeVars[i].get()] = ir::makeInt(n, f.shapeVars[i]->dtype);
        }
        std::vector<interp::HostTensor> inputs;
        for (const ir::Param& p : f.params) {
          if (!p.buffer) continue;
          std::vector<int64_t> shape;
          for (const ir::Expr& d : p.buffer->shape) {
            auto v = ir::evalConstInt(ir::substitute(d, sizes));
            REQUIRE(v.has_value());
            shape.push_back(*v);
          }
          inputs.emplace_back(p.buffer->dtype, shape);
          interp::fillRandom(inputs.back(), 1234 + inputs.size());
        }
        std::string errA, errB;
        auto want = run(f, inputs, errA);
        if (!want) {
          // The interpreter does not know every CPU intrinsic (e.g. cpu.gemm).
          CHECK_MESSAGE(m == &*lowered, errA);
          continue;
        }
        auto got = run(*simplified.funcs[fi], inputs, errB);
        REQUIRE_MESSAGE(got.has_value(), errB);
        for (size_t i = 0; i < want->size(); ++i) CHECK(bitIdentical((*want)[i], (*got)[i]));
        ++compared;
      }
    }
  }
  CHECK(compared >= static_cast<int>(files.size()) + 2);
}
