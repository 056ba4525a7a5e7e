// Located errors of the CUDA backend, one per registered kind.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/gpu_driver.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/driver/cuda_target.h"

using namespace tlc;
using namespace tlc::ir;

namespace {

// A module with one kernel of `threads` threads whose body fills a shared
// buffer of `sharedElems` float32 elements.
Module kernelModule(int64_t threads, int64_t sharedElems) {
  SourceLoc loc{1, 3, 5, 8};
  Buffer out = makeBuffer("out", DType::Float32, {makeInt(16)}, MemScope::Global, loc);
  Buffer s = makeBuffer("s", DType::Float32, {makeInt(sharedElems)}, MemScope::Shared, loc);
  Var bx = makeVar("bx");
  Stmt body = makeSeq({std::make_shared<AllocStmt>(s, loc), std::make_shared<FillStmt>(fullRegion(s), makeFloat(1.0), loc),
                       std::make_shared<CopyStmt>(Region{s, {{makeInt(0), makeInt(16)}}, loc}, fullRegion(out), loc)});
  auto kernel = std::make_shared<KernelStmt>(std::vector<Expr>{makeInt(1)}, std::vector<Var>{bx}, threads, body, loc);
  auto f = std::make_shared<PrimFunc>();
  f->name = "k";
  f->params.push_back(Param{"out", out, nullptr, loc});
  f->body = kernel;
  f->loc = loc;
  Module m;
  m.funcs.push_back(f);
  return m;
}

}  // namespace

TEST_CASE("a block of more than 1024 threads is rejected") {
  // expected-error: cuda-unsupported
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto cu = cuda::generateCuda(kernelModule(2048, 64), {}, diags);
  CHECK_FALSE(cu);
  REQUIRE(diags.hasKind(DiagKind::CudaUnsupported));
  CHECK(diags.diagnostics()[0].message.find("1 to 1024 threads") != std::string::npos);
  CHECK(diags.diagnostics()[0].loc.line == 3);
}

TEST_CASE("shared memory beyond the per-block limit is reported with the size") {
  // expected-error: cuda-shared-memory-overflow
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto cu = cuda::generateCuda(kernelModule(128, 100000), {}, diags);
  CHECK_FALSE(cu);
  REQUIRE(diags.hasKind(DiagKind::CudaSharedMemoryOverflow));
  CHECK(diags.diagnostics()[0].message.find("400000 bytes") != std::string::npos);
  // A note at the buffer's allocation says what takes the memory.
  REQUIRE(diags.diagnostics()[0].notes.size() == 1);
  CHECK(diags.diagnostics()[0].notes[0].message == "`s`: 400000 bytes");
  CHECK(diags.diagnostics()[0].notes[0].loc.line == 3);
}

TEST_CASE("a cubin that cannot be written is a build error") {
  // expected-error: cuda-build-failed
  if (!cuda::nvrtcAvailable()) return;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  int rc = driver::buildForCuda(kernelModule(128, 64), "/nonexistent-dir/k.cubin", {}, diags);
  CHECK(rc == 1);
  CHECK(diags.hasKind(DiagKind::CudaBuildFailed));
}

TEST_CASE("running without a GPU says so") {
  // expected-error: cuda-launch-failed
  std::string why;
  if (backend::GpuDriver::get(backend::GpuRuntime::Cuda, &why) || !cuda::nvrtcAvailable()) return;  // a GPU machine runs it for real
  SourceManager sources;
  DiagnosticEngine diags(sources);
  driver::RunSettings settings;
  int rc = driver::runOnCuda(kernelModule(128, 64), settings, {}, diags);
  CHECK(rc == 1);
  REQUIRE(diags.hasKind(DiagKind::CudaLaunchFailed));
  CHECK(diags.diagnostics()[0].message.find("libcuda") != std::string::npos);
}

TEST_CASE("the closed-form inverse of the mma accumulator matches the fragment") {
  for (auto [m, n, wm, wn] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{{128, 128, 2, 2}, {64, 32, 4, 1}, {16, 64, 1, 2}}) {
    layout::Fragment f = layout::Fragment::mmaAccumulator(m, n, wm, wn);
    Var t = makeVar("t"), r = makeVar("r");
    auto [i, j] = cuda::mmaAccumulatorIndex(m, n, wm, wn, makeVarRef(t), makeVarRef(r));
    for (int64_t tid = 0; tid < f.threadCount(); ++tid)
      for (int64_t reg = 0; reg < f.registersPerThread(); ++reg) {
        int64_t row = layout::evalIndex(i, {{t, tid}, {r, reg}}), col = layout::evalIndex(j, {{t, tid}, {r, reg}});
        CHECK(f.threadOf({row, col}) == tid);
        CHECK(f.registerOf({row, col}) == reg);
      }
  }
}

TEST_CASE("the closed-form inverse of the MFMA accumulator matches the fragment") {
  for (auto [m, n, wm, wn, s] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {64, 64, 2, 1, 32}, {64, 128, 2, 2, 32}, {48, 32, 1, 1, 16}, {64, 32, 2, 2, 16}}) {
    layout::Fragment f = layout::Fragment::mfmaAccumulator(m, n, wm, wn, s);
    CHECK(f.threadCount() == wm * wn * 64);
    Var t = makeVar("t"), r = makeVar("r");
    auto [i, j] = cuda::mmaAccumulatorIndex(m, n, wm, wn, makeVarRef(t), makeVarRef(r), s);
    for (int64_t tid = 0; tid < f.threadCount(); ++tid)
      for (int64_t reg = 0; reg < f.registersPerThread(); ++reg) {
        int64_t row = layout::evalIndex(i, {{t, tid}, {r, reg}}), col = layout::evalIndex(j, {{t, tid}, {r, reg}});
        CHECK(f.threadOf({row, col}) == tid);
        CHECK(f.registerOf({row, col}) == reg);
      }
  }
}
