// tlc's CPU backend against the references, in one process:
//   - sgemm: examples/gemm/gemm.tl (-D dtype=float32 accum=float32) vs
//     OpenBLAS cblas_sgemm at 1024^3, 2048^3, 4096^3 on all cores;
//   - elementwise add: examples/elementwise_add/add.tl (float32) vs memcpy of
//     the same number of bytes moved (read + write), single- and multi-threaded;
//   - compile time of gemm.tl to a JIT module and to a .so;
//   - with --zoo, the memory-bound kernels of bench/zoo/ vs memcpy of the
//     bytes of their tensors (cpu_bench_zoo.cpp).
// Every timing is the median of repeated runs after a warm-up; every result
// is checked against the reference before it is timed.
// Usage: tlc_cpu_bench [--sizes 1024,2048,4096] [--add-mb 64] [--gemm-only] [--zoo [NAME,...]]
// TLC_BENCH_GEMM_DEFINES="block_K=64,block_M=64" adds bindings to the gemm
// (for experiments with tile sizes).
#include <cblas.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler/driver/cpu_target.h"
#include "compiler/sema/frontend.h"
#include "bench/cpu_bench_util.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

using namespace tlc;
using namespace tlc::bench;

namespace {

struct Aligned {
  float* p = nullptr;
  size_t n = 0;
  explicit Aligned(size_t count) : n(count) { p = static_cast<float*>(std::aligned_alloc(64, (count * 4 + 63) / 64 * 64)); }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

void fillRandom(Aligned& a, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (size_t i = 0; i < a.n; ++i) a.p[i] = d(rng);
}

struct Kernel {
  std::unique_ptr<SourceManager> sources = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticEngine> diags = std::make_unique<DiagnosticEngine>(*sources);
  std::optional<ir::Module> module;
  std::unique_ptr<cpu::CpuJitModule> jit;
  cpu::CpuKernelFn fn = nullptr;
  double compileSeconds = 0;
};

std::unique_ptr<Kernel> compileExample(const std::string& rel, const std::vector<Define>& defines) {
  auto k = std::make_unique<Kernel>();
  std::string error;
  auto t0 = Clock::now();
  uint32_t file = k->sources->addFile(std::string(TLC_SOURCE_DIR) + "/examples/" + rel, error);
  if (file == 0) {
    std::fprintf(stderr, "cannot read %s: %s\n", rel.c_str(), error.c_str());
    return nullptr;
  }
  k->module = compileSource(*k->sources, *k->diags, file, defines);
  driver::CpuOptions options;
  options.dumpLLVM = std::getenv("TLC_BENCH_DUMP_LLVM") != nullptr;
  if (k->module) k->jit = driver::compileForCpu(*k->module, options, *k->diags);
  k->compileSeconds = seconds(t0, Clock::now());
  if (!k->jit) {
    std::fprintf(stderr, "%s", k->diags->renderAll().c_str());
    return nullptr;
  }
  k->fn = k->jit->kernel(k->module->funcs[0]->name);
  return k;
}

// Extra bindings from TLC_BENCH_GEMM_DEFINES="name=value,...".
void addGemmDefines(std::vector<Define>& defs) {
  const char* extra = std::getenv("TLC_BENCH_GEMM_DEFINES");
  if (!extra) return;
  std::stringstream ss(extra);
  std::string item;
  while (std::getline(ss, item, ','))
    if (auto eq = item.find('='); eq != std::string::npos) defs.push_back({item.substr(0, eq), item.substr(eq + 1)});
}

void benchGemm(int n, std::FILE* md) {
  std::string s = std::to_string(n);
  std::vector<Define> defs = {{"M", s}, {"N", s}, {"K", s}, {"dtype", "float32"}, {"accum", "float32"}};
  addGemmDefines(defs);
  auto k = compileExample("gemm/gemm.tl", defs);
  if (!k) return;
  size_t nn = size_t(n) * size_t(n);
  Aligned A(nn), B(nn), C(nn), Cref(nn);
  fillRandom(A, 1);
  fillRandom(B, 2);
  void* args[] = {A.p, B.p, C.p};
  auto tlcRun = [&] { k->fn(args, nullptr); };
  auto blasRun = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A.p, n, B.p, n, 0.0f, Cref.p, n);
  };
  tlcRun();
  blasRun();
  double maxErr = 0, maxRef = 0;
  for (size_t i = 0; i < nn; ++i) {
    maxErr = std::max(maxErr, double(std::fabs(C.p[i] - Cref.p[i])));
    maxRef = std::max(maxRef, double(std::fabs(Cref.p[i])));
  }
  double minSec = n >= 4096 ? 3.0 : 1.0;
  double tTlc = medianTime(tlcRun, 5, minSec);
  double tBlas = medianTime(blasRun, 5, minSec);
  double flops = 2.0 * n * double(n) * n;
  double gTlc = flops / tTlc * 1e-9, gBlas = flops / tBlas * 1e-9;
  std::printf("sgemm %5d^3  tlc %8.2f ms %7.1f GFLOP/s | OpenBLAS %8.2f ms %7.1f GFLOP/s | ratio %.3f | max|err| %.2e (max|C| %.1f)\n",
              n, tTlc * 1e3, gTlc, tBlas * 1e3, gBlas, gTlc / gBlas, maxErr, maxRef);
  if (md)
    std::fprintf(md, "| sgemm %d³ | %.1f GFLOP/s | OpenBLAS %.1f GFLOP/s | %.3f |\n", n, gTlc, gBlas, gTlc / gBlas);
}

void benchAdd(size_t mbPerTensor, std::FILE* md) {
  // M x N float32 tensors of mbPerTensor MiB each.
  size_t n = 4096;
  size_t m = mbPerTensor * (1 << 20) / 4 / n;
  auto k = compileExample("elementwise_add/add.tl",
                          {{"M", std::to_string(m)}, {"N", std::to_string(n)}, {"dtype", "float32"}});
  if (!k) return;
  size_t count = m * n;
  Aligned A(count), B(count), C(count);
  fillRandom(A, 3);
  fillRandom(B, 4);
  void* args[] = {A.p, B.p, C.p};
  auto tlcRun = [&] { k->fn(args, nullptr); };
  tlcRun();
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += C.p[i] != A.p[i] + B.p[i];
  // add reads 2 and writes 1 tensor; memcpy of 1.5 tensors moves the same bytes.
  size_t bytesMoved = 3 * count * 4;
  size_t copyBytes = bytesMoved / 2;
  std::vector<char> src(copyBytes, 1), dst(copyBytes, 0);
  int threads = tlc_cpu_num_threads();
  double tAdd = medianTime(tlcRun, 10, 1.0);
  double tCopy1 = medianTime([&] { std::memcpy(dst.data(), src.data(), copyBytes); }, 10, 1.0);
  double tCopyN = medianTime([&] { parallelMemcpy(dst.data(), src.data(), copyBytes, threads); }, 10, 1.0);
  double gAdd = bytesMoved / tAdd * 1e-9, g1 = bytesMoved / tCopy1 * 1e-9, gN = bytesMoved / tCopyN * 1e-9;
  double best = std::max(g1, gN);
  std::printf("add %zux%zu f32 (%zu MiB/tensor)  tlc %.2f ms %.1f GB/s | memcpy 1 thread %.1f GB/s, %d threads %.1f GB/s | ratio vs best memcpy %.3f | wrong %zu\n",
              m, n, mbPerTensor, tAdd * 1e3, gAdd, g1, threads, gN, gAdd / best, wrong);
  if (md)
    std::fprintf(md, "| elementwise add %zux%zu f32 | %.1f GB/s | memcpy %.1f GB/s (best of 1 / %d threads) | %.3f |\n", m,
                 n, gAdd, best, threads, gAdd / best);
}

// CPU seconds used by this process and its finished children (the linker):
// the compile time an idle machine would show, whatever the load.
double cpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    total += double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

void benchCompileTime(std::FILE* md) {
  // Front end + lowering + LLVM + link, as `tlc build` does it.
  Kernel k;
  std::string error;
  uint32_t file = k.sources->addFile(std::string(TLC_SOURCE_DIR) + "/examples/gemm/gemm.tl", error);
  std::vector<Define> defs = {{"M", "2048"}, {"N", "2048"}, {"K", "2048"}, {"dtype", "float32"}};
  std::string so = (std::filesystem::temp_directory_path() / "tlc-bench-gemm.so").string();
  std::vector<double> soTimes, jitTimes, soCpu;
  driver::CpuOptions options;
  options.timePasses = std::getenv("TLC_BENCH_TIME_PASSES") != nullptr;
  options.dumpLLVM = std::getenv("TLC_BENCH_DUMP_LLVM") != nullptr;
  for (int i = 0; i < 5; ++i) {
    auto t0 = Clock::now();
    double c0 = cpuSeconds();
    auto mod = compileSource(*k.sources, *k.diags, file, defs);
    if (!mod || driver::buildForCpu(*mod, so, options, *k.diags) != 0) {
      std::fprintf(stderr, "%s", k.diags->renderAll().c_str());
      return;
    }
    soTimes.push_back(seconds(t0, Clock::now()));
    soCpu.push_back(cpuSeconds() - c0);
    t0 = Clock::now();
    auto jit = driver::compileForCpu(*mod, options, *k.diags);
    jitTimes.push_back(seconds(t0, Clock::now()));
  }
  std::sort(soTimes.begin(), soTimes.end());
  std::sort(jitTimes.begin(), jitTimes.end());
  std::sort(soCpu.begin(), soCpu.end());
  std::filesystem::remove(so);
  std::printf("compile gemm.tl: to .so %.0f ms wall, %.0f ms CPU (compiler + linker); to JIT %.0f ms wall (median of 5)\n",
              soTimes[2] * 1e3, soCpu[2] * 1e3, jitTimes[2] * 1e3);
  if (md)
    std::fprintf(md, "| compile gemm.tl → .so | %.0f ms wall, %.0f ms CPU | (JIT: %.0f ms wall) | |\n", soTimes[2] * 1e3,
                 soCpu[2] * 1e3, jitTimes[2] * 1e3);
}

// Builds gemm (N^3) and elementwise add (M x 4096) .so files for `cpu`, for
// timing with cpu_so_bench.c on a machine without LLVM.
int emitSharedObjects(const std::string& dir, const std::string& cpuName, int n, int m) {
  driver::CpuOptions options;
  options.cpu = cpuName;
  struct Job {
    const char* rel;
    std::vector<Define> defs;
    const char* out;
  } jobs[] = {
      {"gemm/gemm.tl", {{"M", std::to_string(n)}, {"N", std::to_string(n)}, {"K", std::to_string(n)}, {"dtype", "float32"}},
       "gemm.so"},
      {"elementwise_add/add.tl", {{"M", std::to_string(m)}, {"N", "4096"}, {"dtype", "float32"}}, "add.so"},
  };
  addGemmDefines(jobs[0].defs);
  for (Job& j : jobs) {
    Kernel k;
    std::string error;
    uint32_t file = k.sources->addFile(std::string(TLC_SOURCE_DIR) + "/examples/" + j.rel, error);
    auto mod = compileSource(*k.sources, *k.diags, file, j.defs);
    if (!mod || driver::buildForCpu(*mod, dir + "/" + j.out, options, *k.diags) != 0) {
      std::fprintf(stderr, "%s", k.diags->renderAll().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--emit-so")
    return emitSharedObjects(argv[2], argv[3], std::atoi(argv[4]), std::atoi(argv[5]));
  std::vector<int> sizes = {1024, 2048, 4096};
  size_t addMb = 64;
  const char* mdPath = nullptr;
  bool zoo = false;
  bool gemmOnly = false;
  std::vector<std::string> zooNames;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ',')) sizes.push_back(std::atoi(item.c_str()));
    } else if (a == "--add-mb" && i + 1 < argc) {
      addMb = size_t(std::atoi(argv[++i]));
    } else if (a == "--gemm-only") {
      gemmOnly = true;
    } else if (a == "--zoo") {
      zoo = true;
      if (i + 1 < argc && argv[i + 1][0] != '-') {
        std::stringstream ss(argv[++i]);
        std::string item;
        while (std::getline(ss, item, ',')) zooNames.push_back(item);
      }
    } else if (a == "--markdown" && i + 1 < argc) {
      mdPath = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--sizes 1024,2048,4096] [--add-mb 64] [--gemm-only] [--zoo [NAME,...]] [--markdown FILE]\n", argv[0]);
      return 2;
    }
  }
  std::FILE* md = mdPath ? std::fopen(mdPath, "w") : nullptr;
  std::printf("threads: tlc %d, OpenBLAS %d (%s)\n", tlc_cpu_num_threads(), openblas_get_num_threads(),
              openblas_get_corename());
  // An OpenBLAS older than the CPU falls back to SSE3 kernels (core
  // "Prescott"), a reference several times too slow.
  std::string core = openblas_get_corename();
  if (__builtin_cpu_supports("avx512f") && (core == "Prescott" || core == "Nehalem" || core == "Core2"))
    std::printf("warning: OpenBLAS does not know this AVX-512 CPU and uses its %s kernels; set "
                "OPENBLAS_CORETYPE=SkylakeX for its AVX-512 kernel\n",
                core.c_str());
  if (md) {
    std::fprintf(md, "threads: tlc %d, OpenBLAS %d (core %s)\n\n", tlc_cpu_num_threads(), openblas_get_num_threads(),
                 openblas_get_corename());
    std::fprintf(md, "| work | tlc | reference | ratio |\n|---|---|---|---|\n");
  }
  if (zoo) {
    benchZoo(zooNames, md);
  } else {
    for (int n : sizes) benchGemm(n, md);
    if (!gemmOnly) {
      benchAdd(addMb, md);
      benchCompileTime(md);
    }
  }
  if (md) std::fclose(md);
  return 0;
}
