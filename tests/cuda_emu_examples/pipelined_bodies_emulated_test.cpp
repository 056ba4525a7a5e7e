// Pipelined loops written as users write them (tests/cuda_emu_examples/
// pipelined_bodies.tl): names assigned before the copies, tiles chosen
// through a table the loop only reads, and tiles gathered by Parallel loops.
// Each kernel is pipelined (cp.async on sm_80, the TMA producer warpgroup on
// sm_90a) and agrees with the interpreter in the emulator at sizes the tiles
// do not divide.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

namespace {

// The text of `kernel` (its name and "(") in `src`, up to the next kernel.
std::string kernelText(const std::string& src, const std::string& kernel) {
  size_t begin = src.find(kernel);
  REQUIRE(begin != std::string::npos);
  size_t end = src.find("extern \"C\"", begin);
  return src.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

TEST_CASE("pipelined bodies with lets and table reads run pipelined and agree with the interpreter") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/pipelined_bodies.tl", sm, diags);
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    std::string src = test::pipelinedModuleSource(module, arch, diags);
    for (const char* kernel : {"gemm_lets_kernel0(", "gemm_table_kernel0("}) {
      CAPTURE(kernel);
      std::string body = kernelText(src, kernel);
      CHECK(body.find(arch == "sm_80" ? "tlc::cp_async_wait<" : "tlc::tma_load_2d(") != std::string::npos);
    }
    for (const std::string func : {"gemm_lets", "gemm_table"}) {
      CAPTURE(func);
      std::map<std::string, int64_t> dims = {{"M", 100}, {"N", 130}, {"K", 200}};
      if (func == "gemm_table") dims["NB"] = 7;
      std::string log;
      int rc = test::runEmulatedCheck(module, diags, dims, 3, &log, func, arch);
      INFO(log);
      CHECK(rc == 0);
    }
  }
}

// The gathers run ahead as producers: on sm_80 in the cp.async stages, on
// sm_90a in the producer warpgroup (all its threads, arriving on the stage's
// full barrier). The row gather moves runs of 8 elements by cp.async; with
// K = 202 A's rows are not 16-byte aligned and its runs move element by
// element at run time; the column gather reads A transposed, element by
// element. The loops run warp-specialized on sm_90a: B's rows (N = 136) suit TMA.
TEST_CASE("gather nests run ahead in pipelines and agree with the interpreter") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/pipelined_bodies.tl", sm, diags);
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    std::string body = kernelText(test::pipelinedModuleSource(module, arch, diags), "gemm_row_gather_kernel0(");
    CHECK(body.find("tlc::cp_async16(&A_s[") != std::string::npos);
    if (arch == "sm_90a") CHECK(body.find("tlc::cp_async_mbar_arrive(&tlc_full[") != std::string::npos);
    struct Run {
      const char* func;
      std::map<std::string, int64_t> dims;
    };
    for (const Run& r : {Run{"gemm_row_gather", {{"R", 100}, {"M", 77}, {"N", 136}, {"K", 200}}},
                         Run{"gemm_row_gather", {{"R", 65}, {"M", 30}, {"N", 72}, {"K", 202}}},
                         Run{"gemm_column_gather", {{"M", 100}, {"N", 136}, {"K", 200}}}}) {
      CAPTURE(r.func);
      std::string log;
      int rc = test::runEmulatedCheck(module, diags, r.dims, 5, &log, r.func, arch);
      INFO(log);
      CHECK(rc == 0);
    }
  }
}

// A later stage that writes the tile a stage-0 copy fills entirely (a
// running sum in place) still runs pipelined: each iteration's version
// takes its writes. On sm_90a the consumers' writes are fenced for the
// tensor copies that refill the stage; the running sum stays in registers.
TEST_CASE("a tile written in place by a later stage runs pipelined and agrees with the interpreter") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/pipelined_bodies.tl", sm, diags);
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    std::string body = kernelText(test::pipelinedModuleSource(module, arch, diags), "running_sum_kernel0(");
    CHECK(body.find(arch == "sm_80" ? "tlc::cp_async_wait<" : "tlc::fence_proxy_async();") != std::string::npos);
    CHECK(body.find("float acc[1];") != std::string::npos);
    for (int64_t stages : {2, 3}) {
      CAPTURE(stages);
      ir::Module m = stages == 2 ? module
                                 : test::compileTreeFile("tests/cuda_emu_examples/pipelined_bodies.tl", sm, diags,
                                                         {{"stages", "3"}});
      std::string log;
      int rc = test::runEmulatedCheck(m, diags, {{"M", 100}, {"N", 75}}, 7, &log, "running_sum", arch);
      INFO(log);
      CHECK(rc == 0);
    }
  }
}

// A tile too small for a TMA stage is copied by the producer threads, and
// only B gets a tensor copy: before, the failed TMA plan left A's copy in
// place and a TMA wrote A's stage while the threads did (a race the
// emulator reports, and wrong results on the GPU).
TEST_CASE("a tile copied by the producer threads gets no tensor copy beside them") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  ir::Module module = test::compileTreeFile("tests/cuda_emu_examples/pipelined_bodies.tl", sm, diags);
  std::string body = kernelText(test::pipelinedModuleSource(module, "sm_90a", diags), "gemm_small_a_kernel0(");
  size_t tma = 0;
  for (size_t p = body.find("tlc::tma_load_2d("); p != std::string::npos; p = body.find("tlc::tma_load_2d(", p + 1)) ++tma;
  CHECK(tma == 1);
  CHECK(body.find("tlc::cp_async16(&A_s[") != std::string::npos);
  std::string log;
  int rc = test::runEmulatedCheck(module, diags, {{"M", 3}, {"N", 100}, {"K", 128}}, 3, &log, "gemm_small_a", "sm_90a");
  INFO(log);
  CHECK(rc == 0);
}
