#include "compiler/driver/cpu_cache.h"

#include <dlfcn.h>
#include <unistd.h>


#include "compiler/driver/cpu_target.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/ir/printer.h"
#include "compiler/support/file_io.h"
#include "compiler/support/module_image.h"

namespace tlc::driver {
namespace {

// A built shared object opened with dlopen, used like a JIT module.
class SharedObjectModule : public cpu::CpuJitModule {
 public:
  explicit SharedObjectModule(void* handle) : handle_(handle) {}
  ~SharedObjectModule() override { dlclose(handle_); }
  cpu::CpuKernelFn kernel(const std::string& funcName) override {
    return reinterpret_cast<cpu::CpuKernelFn>(dlsym(handle_, cpu::cpuKernelSymbol(funcName).c_str()));
  }
  cpu::CpuFailureFn failureAccessor() override {
    return reinterpret_cast<cpu::CpuFailureFn>(dlsym(handle_, cpu::kCpuFailureSymbol));
  }

 private:
  void* handle_;
};

}  // namespace

std::string cpuCacheKey(const ir::Module& module, const cpu::CpuOptions& options) {
  CacheKeyParts parts;
  // Bindings and imports are resolved in the IR. Bounds checks name source
  // lines, so their modules are told apart by their locations too.
  ir::PrintOptions print;
  if (options.checkBounds) print.locations = options.sources;
  parts.sources = {ir::printModule(module, print)};
  parts.target = "cpu";
  parts.options = cpu::describeTarget(options) + "|cpu=" + options.cpu + "|features=" + options.features +
                  "|O" + std::to_string(options.optLevel) + (options.checkBounds ? "|check-bounds" : "") +
                  // Entries are opened by symbol: one built with other symbol names is not a hit.
                  "|entry=" + cpu::cpuKernelSymbol("k");
  return cacheKey(parts);
}

std::unique_ptr<cpu::CpuJitModule> compileForCpuCached(const ir::Module& module, const cpu::CpuOptions& options,
                                                       DiagnosticEngine& diags, const KernelCache& cache, bool* hit) {
  if (hit) *hit = false;
  if (!cache.enabled()) return compileForCpu(module, options, diags);
  std::string error;
  bool built = false;
  auto path = cachedBuild(
      cache, cpuCacheKey(module, options),
      [&](const std::string& out, std::string* err) {
        built = true;
        if (buildForCpu(module, out, options, diags) != 0) {
          *err = "";
          return false;
        }
        return true;
      },
      &error, hit, [](const std::string& bytes, std::string* why) {
        return checkCpuModuleImage(bytes.data(), bytes.size(), why);
      });
  if (!path) {
    if (!built || !error.empty())
      diags.report(DiagKind::CpuBuildFailed, module.funcs.empty() ? SourceLoc{} : module.funcs[0]->loc,
                   "cannot build the kernels: " + error);
    return nullptr;
  }
  void* handle = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
  bool uncached = path->find(cache.dir()) != 0;
  if (uncached) ::unlink(path->c_str());  // a temporary build: the mapping outlives the file
  if (!handle) {
    const char* e = dlerror();
    diags.report(DiagKind::CpuBuildFailed, module.funcs.empty() ? SourceLoc{} : module.funcs[0]->loc,
                 "cannot open the built kernels " + *path + ": " + (e ? e : "dlopen failed"));
    return nullptr;
  }
  return std::make_unique<SharedObjectModule>(handle);
}

int buildForCpuCached(const ir::Module& module, const std::string& outPath, const cpu::CpuOptions& options,
                      DiagnosticEngine& diags, const KernelCache& cache, bool* hit) {
  if (hit) *hit = false;
  if (!cpuOptionsUsable(options)) return kExitUsage;
  // Without the cache (or when the user asked to see the compilation) the
  // module is built into a temporary file all the same: the output is only
  // ever replaced whole, never rewritten in place (replaceNamedFile).
  bool bypass = !cache.enabled() || options.printAfterAll || options.timePasses || options.dumpLLVM;
  KernelCache disabled(cache.dir(), false);
  const KernelCache& used = bypass ? disabled : cache;
  std::string key = sha256Hex(cpuCacheKey(module, options) + "|build|" + cpuModuleMetadata(module, &diags.sources()));
  std::string error;
  int status = 0;
  auto path = cachedBuild(
      used, key,
      [&](const std::string& out, std::string* err) {
        status = buildForCpu(module, out, options, diags);
        *err = "";
        return status == 0;
      },
      &error, hit, [](const std::string& bytes, std::string* why) {
        return checkCpuModuleImage(bytes.data(), bytes.size(), why);
      });
  SourceLoc loc = module.funcs.empty() ? SourceLoc{} : module.funcs[0]->loc;
  if (!path) {
    if (status != 0) return status;
    diags.report(DiagKind::CpuBuildFailed, loc, "cannot build the kernels: " + error);
    return 1;
  }
  bool uncached = !used.enabled() || path->find(used.dir()) != 0;
  std::string bytes;
  bool written = readRegularFile(*path, &bytes, &error) == ReadStatus::Ok && replaceNamedFile(outPath, bytes, &error);
  if (uncached) ::unlink(path->c_str());
  if (!written) {
    diags.report(DiagKind::CpuBuildFailed, loc, "cannot write `" + outPath + "`: " + error);
    return 1;
  }
  return 0;
}

}  // namespace tlc::driver
