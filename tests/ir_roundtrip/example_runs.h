// Running the examples' kernels in the reference interpreter on seeded
// inputs, for tests that compare a module before and after a rewrite.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compiler/interp/host_tensor.h"
#include "compiler/interp/interpreter.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/int_arith.h"
#include "compiler/ir/substitute.h"
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

}  // namespace tlc::testing
