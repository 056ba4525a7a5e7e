// Running the examples' kernels in the reference interpreter on seeded
// inputs, for tests that compare a module before and after a rewrite.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/interp/host_tensor.h"
#include "compiler/interp/interpreter.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/int_arith.h"
#include "compiler/ir/ir_parser.h"
#include "compiler/ir/substitute.h"
#include "compiler/passes/pass_registry.h"
#include "compiler/sema/frontend.h"

namespace tlc::testing {

// Every examples/**/*.tl, sorted.
inline std::vector<std::filesystem::path> exampleFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(TLC_SOURCE_DIR) / "examples"))
    if (entry.path().extension() == ".tl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The module of the .tl file at `path` (a test failure when it does not compile).
inline ir::Module compileExample(const std::filesystem::path& path, SourceManager& sources, DiagnosticEngine& diags) {
  std::string error;
  uint32_t file = sources.addFile(path.string(), error);
  auto module = compileSource(sources, diags, file, {});
  REQUIRE_MESSAGE(module.has_value(), (diags.renderAll() + error));
  return std::move(*module);
}

// Seeded random tensors for `f`'s tensor parameters. Every dynamic dimension
// is 37 (no tile divides it), or 5 + 32 i for the i-th after it. A kernel
// with a 3-D grid (batch x heads x tiles, as attention's) would take the
// interpreter minutes at those sizes: its first dimension (the batch) is 1,
// the second 37, the others 2. So would one with more than three (the
// convolution's batch, image and channels, whose product is its gemm's M
// and K): 2 + i each.
inline std::vector<interp::HostTensor> exampleInputs(const ir::PrimFunc& f) {
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
  return inputs;
}

// Runs `f` on fresh copies of `inputs` (scalars: 0.5 or 3); returns the
// tensors after the run, or nullopt with the interpreter's diagnostics in
// `errors`.
inline std::optional<std::vector<interp::HostTensor>> runExample(const ir::PrimFunc& f,
                                                                 const std::vector<interp::HostTensor>& inputs,
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

inline bool bitIdentical(const interp::HostTensor& a, const interp::HostTensor& b) {
  return a.sizeBytes() == b.sizeBytes() && std::memcmp(a.data(), b.data(), a.sizeBytes()) == 0;
}

// `m` after the registered passes `names` (comma-separated), or nullopt
// with their diagnostics in `diags`.
inline std::optional<ir::Module> runPassNames(const ir::Module& m, const char* names, DiagnosticEngine& diags) {
  std::string error;
  auto pipeline = passes::pipelineFromNames(names, error);
  REQUIRE_MESSAGE(pipeline.has_value(), error);
  passes::PassContext ctx(diags);
  return pipeline->run(m, ctx);
}

// Every example planned (inline-loop-lets, pipeline-planning) and run by
// the interpreter before and after the passes `names` on the same seeded
// inputs; the outputs must be bit-identical. `counted` is called on each
// rewritten function. Returns how many functions the passes rewrote.
inline int compareExamplesAfter(const char* names, const std::function<void(const ir::PrimFunc&)>& counted) {
  int compared = 0;
  for (const std::filesystem::path& path : exampleFiles()) {
    INFO("example: " << path.string());
    SourceManager sources;
    DiagnosticEngine diags(sources);
    ir::Module module = compileExample(path, sources, diags);
    auto planned = runPassNames(module, "inline-loop-lets,pipeline-planning", diags);
    REQUIRE_MESSAGE(planned.has_value(), diags.renderAll());
    auto rewritten = runPassNames(*planned, names, diags);
    REQUIRE_MESSAGE(rewritten.has_value(), diags.renderAll());
    for (size_t fi = 0; fi < planned->funcs.size(); ++fi) {
      if (rewritten->funcs[fi] == planned->funcs[fi]) continue;  // nothing rewritten
      counted(*rewritten->funcs[fi]);
      const ir::PrimFunc& f = *planned->funcs[fi];
      std::vector<interp::HostTensor> inputs = exampleInputs(f);
      std::string errA, errB;
      auto want = runExample(f, inputs, errA);
      REQUIRE_MESSAGE(want.has_value(), errA);
      auto got = runExample(*rewritten->funcs[fi], inputs, errB);
      REQUIRE_MESSAGE(got.has_value(), errB);
      for (size_t i = 0; i < want->size(); ++i) CHECK(bitIdentical((*want)[i], (*got)[i]));
      ++compared;
    }
  }
  return compared;
}

// Runs the one function of the tile IR `text` on seeded inputs; returns
// the interpreter's diagnostics (empty when it ran).
inline std::string runTirText(const std::string& text) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("test.tir", text);
  auto module = ir::parseIRModule(sources, diags, file);
  REQUIRE_MESSAGE(module.has_value(), diags.renderAll());
  std::string errors;
  auto out = runExample(*module->funcs[0], exampleInputs(*module->funcs[0]), errors);
  return out ? "" : errors;
}

}  // namespace tlc::testing
