// The memory-bound kernels of the zoo (bench/zoo/) on the CPU backend, each
// against memcpy of its tensors' bytes (read + write, each tensor counted
// once, as scripts/gpu/zoo_bench.sh counts them on the GPU) in the same
// process, on the runtime's threads. Inputs are the seeded random tensors of
// `tlc run`; correctness is the zoo_numpy test's (tests/zoo/check_zoo.py).
// Each kernel's tensors together, and the memcpy's buffers, are at least
// three times the last-level cache the host reports (one dimension of the
// listed sizes grows by a power of two where they are not): a host whose
// cache holds 128 MiB would otherwise copy from its cache while the kernel
// reads memory.
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "bench/cpu_bench_util.h"
#include "compiler/driver/cpu_target.h"
#include "compiler/driver/run_common.h"
#include "compiler/sema/frontend.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc::bench {

namespace {

struct ZooKernel {
  const char* name;
  std::map<std::string, int64_t> dims;  // tensors of 32-128 MiB
  const char* grows;                    // the dimension scaled past the last-level cache
  std::vector<Define> defines = {};     // sizes bound at compile time
};

// The size of the largest cache sysfs lists for CPU 0 (bytes), or 0.
int64_t lastLevelCacheBytes() {
  int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    int64_t unit = 1;
    char last = text.back();
    if (last == 'K') unit = 1024;
    if (last == 'M') unit = 1024 * 1024;
    best = std::max<int64_t>(best, std::atoll(text.c_str()) * unit);
  }
  return best;
}

const ZooKernel kZoo[] = {
    {"layernorm", {{"M", 8192}}, "M"},
    {"rmsnorm_residual", {{"M", 8192}}, "M"},
    {"groupnorm", {{"B", 8}}, "B", {{"C", "512"}, {"HW", "4096"}}},
    {"transpose", {{"M", 4096}, {"N", 4096}}, "M"},
    {"permute_0213", {{"B", 4}, {"S", 2048}, {"H", 32}}, "B"},
    {"permute_3d", {{"B", 8}, {"M", 1024}, {"N", 1024}}, "B"},
    {"bias_add_mixed", {{"M", 8192}, {"N", 4096}}, "M"},
    {"silu_mul", {{"M", 4096}, {"N", 4096}}, "M"},
    {"gelu", {{"M", 8192}, {"N", 4096}}, "M"},
    {"col_sum", {{"M", 16384}, {"N", 4096}}, "M"},
    {"row_max", {{"M", 16384}, {"N", 4096}}, "M"},
    {"argmax", {{"M", 8192}, {"N", 4096}}, "M"},
    {"cumsum", {{"M", 8192}, {"N", 4096}}, "M"},
    {"topk", {{"M", 262144}}, "M", {{"N", "64"}}},
    {"embedding", {{"T_", 32768}, {"V", 32000}}, "T_"},
    {"gather_rows", {{"M", 32768}, {"R", 16384}, {"N", 1024}}, "M"},
};

void benchOne(const ZooKernel& z, std::FILE* md) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::string error, path = std::string(TLC_SOURCE_DIR) + "/bench/zoo/" + z.name + ".tl";
  uint32_t file = sources.addFile(path, error);
  if (file == 0) {
    std::fprintf(stderr, "cannot read %s: %s\n", path.c_str(), error.c_str());
    return;
  }
  auto module = compileSource(sources, diags, file, z.defines);
  std::unique_ptr<cpu::CpuJitModule> jit;
  if (module) jit = driver::compileForCpu(*module, driver::CpuOptions{}, diags);
  if (!jit) {
    std::fprintf(stderr, "%s: %s", z.name, diags.renderAll().c_str());
    return;
  }
  const ir::PrimFunc& func = *module->funcs[0];
  std::map<std::string, int64_t> dims = z.dims;
  std::optional<driver::RunArgs> args = driver::makeArguments(func, dims, 1, diags);
  cpu::CpuKernelFn fn = jit->kernel(func.name);
  if (!args || !fn) {
    std::fprintf(stderr, "%s: %s", z.name, diags.renderAll().c_str());
    return;
  }
  auto bytesOf = [](const driver::RunArgs& a) {
    size_t n = 0;
    for (const auto& t : a.tensors)
      if (t) n += t->sizeBytes();
    return n;
  };
  size_t bytes = bytesOf(*args);
  const size_t want = 3 * (size_t)lastLevelCacheBytes();
  if (bytes < want) {
    int64_t factor = 1;
    while (bytes * factor < want) factor *= 2;
    dims[z.grows] *= factor;
    args.reset();
    args = driver::makeArguments(func, dims, 1, diags);
    if (!args) {
      std::fprintf(stderr, "%s: %s", z.name, diags.renderAll().c_str());
      return;
    }
    bytes = bytesOf(*args);
  }
  int threads = tlc_cpu_num_threads();
  std::vector<char> src(bytes / 2, 1), dst(bytes / 2, 0);
  double tKernel = medianTime([&] { driver::callCpuKernel(fn, func, *args); }, 5, 1.0);
  double tCopy = medianTime([&] { parallelMemcpy(dst.data(), src.data(), bytes / 2, threads); }, 5, 1.0);
  double gKernel = bytes / tKernel * 1e-9, gCopy = bytes / tCopy * 1e-9;
  std::printf("zoo %-17s %s=%-7lld %7.1f MiB  tlc %8.2f ms %6.1f GB/s | memcpy %d threads %6.1f GB/s | ratio %.3f\n", z.name,
              z.grows, (long long)dims[z.grows], bytes / 1048576.0, tKernel * 1e3, gKernel, threads, gCopy, gKernel / gCopy);
  std::fflush(stdout);
  if (md)
    std::fprintf(md, "| %s | %.1f GB/s | memcpy %.1f GB/s (%d threads) | %.3f |\n", z.name, gKernel, gCopy, threads,
                 gKernel / gCopy);
}

}  // namespace

void benchZoo(const std::vector<std::string>& names, std::FILE* md) {
  for (const ZooKernel& z : kZoo)
    if (names.empty() || std::find(names.begin(), names.end(), z.name) != names.end()) benchOne(z, md);
}

}  // namespace tlc::bench
