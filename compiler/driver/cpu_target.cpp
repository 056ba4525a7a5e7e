#include "compiler/driver/cpu_target.h"

#include "compiler/ir/gemm_flops.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "compiler/backends/metadata.h"
#include "compiler/driver/cpu_cache.h"
#include "compiler/driver/exit_codes.h"
#include "compiler/interp/float_convert.h"
#include "compiler/interp/shape_eval.h"
#include "compiler/ir/functor.h"
#include "compiler/passes/cpu_pipeline.h"

namespace tlc::driver {

using namespace ir;

std::optional<Module> lowerModuleForCpu(const Module& module, const CpuOptions& options, DiagnosticEngine& diags) {
  passes::PassOptions po;
  po.target = "cpu";
  passes::PassContext ctx(diags, po);
  cpu::CpuLoweringOptions lo;
  lo.printAfterAll = options.printAfterAll;
  lo.timePasses = options.timePasses;
  return cpu::lowerForCpu(module, ctx, lo);
}

static SourceLoc moduleLoc(const Module& m) { return m.funcs.empty() ? SourceLoc{} : m.funcs[0]->loc; }

// Reports a bad --cpu / --features before any work; true when the target is usable.
static bool checkTarget(const Module& module, const CpuOptions& options, DiagnosticEngine& diags) {
  std::string problem = cpu::checkCpuOptions(options);
  if (problem.empty()) return true;
  diags.report(DiagKind::CpuInvalidTarget, moduleLoc(module), problem);
  return false;
}

bool cpuOptionsUsable(const CpuOptions& options) {
  std::string problem = cpu::checkCpuOptions(options);
  if (problem.empty()) return true;
  std::cerr << "tlc: error: " << problem << "\n";
  return false;
}

std::unique_ptr<cpu::CpuJitModule> compileForCpu(const Module& module, const CpuOptions& options,
                                                 DiagnosticEngine& diags) {
  if (!checkTarget(module, options, diags)) return nullptr;
  std::optional<Module> lowered = lowerModuleForCpu(module, options, diags);
  if (!lowered) return nullptr;
  std::string error;
  CpuOptions named = options;
  named.sources = &diags.sources();
  auto jit = cpu::jitCompile(*lowered, named, &error);
  if (!jit) diags.report(DiagKind::CpuBuildFailed, moduleLoc(module), "JIT compilation failed: " + error);
  return jit;
}

void callCpuKernel(cpu::CpuKernelFn fn, const PrimFunc& func, RunArgs& args) {
  std::vector<void*> ptrs(func.params.size(), nullptr);
  std::vector<uint64_t> scalarStorage(func.params.size(), 0);
  for (size_t i = 0; i < func.params.size(); ++i) {
    const Param& p = func.params[i];
    if (p.buffer) {
      ptrs[i] = args.tensors[i]->data();
      continue;
    }
    const interp::ArgValue& a = args.scalars[i];
    DType t = p.scalar->dtype;
    void* slot = &scalarStorage[i];
    double fv = a.kind == interp::ArgValue::Kind::Float ? a.floatValue : double(a.intValue);
    int64_t iv = a.kind == interp::ArgValue::Kind::Float ? int64_t(a.floatValue) : a.intValue;
    switch (t) {
      case DType::Float32: {
        float f = float(fv);
        std::memcpy(slot, &f, 4);
        break;
      }
      case DType::Float64: std::memcpy(slot, &fv, 8); break;
      case DType::Float16: {
        uint16_t h = interp::toFloat16(fv);
        std::memcpy(slot, &h, 2);
        break;
      }
      case DType::BFloat16: {
        uint16_t h = interp::toBFloat16(fv);
        std::memcpy(slot, &h, 2);
        break;
      }
      case DType::Float8E4M3: *static_cast<uint8_t*>(slot) = interp::toFloat8E4M3(fv); break;
      case DType::Float8E5M2: *static_cast<uint8_t*>(slot) = interp::toFloat8E5M2(fv); break;
      default: std::memcpy(slot, &iv, 8); break;  // little-endian: narrower ints are the low bytes
    }
    ptrs[i] = slot;
  }
  std::vector<int64_t> dims;
  for (const Var& v : func.shapeVars) {
    auto it = args.dims.find(v->name);
    dims.push_back(it == args.dims.end() ? 0 : it->second);
  }
  fn(ptrs.data(), dims.empty() ? nullptr : dims.data());
}

// The file id `path` has in `sources`, or 0.
static uint32_t fileNamed(const SourceManager& sources, const std::string& path) {
  if (path.empty()) return 0;
  for (uint32_t id = 1; sources.hasFile(id); ++id)
    if (sources.name(id) == path) return id;
  return 0;
}

bool reportCpuFailure(cpu::CpuJitModule& jit, const PrimFunc& func, DiagnosticEngine& diags) {
  cpu::CpuFailureFn last = jit.failureAccessor();
  const tlc_cpu_report* r = last ? last() : nullptr;
  if (!r) return false;
  SourceLoc loc = func.loc;
  if (uint32_t file = fileNamed(diags.sources(), r->file ? r->file : ""); file != 0 && r->line > 0)
    loc = SourceLoc{file, uint32_t(r->line), uint32_t(r->column), uint32_t(std::max(r->length, 1))};
  DiagKind kind = r->kind == TLC_CPU_FAILURE_BOUNDS ? DiagKind::InterpOutOfBounds : DiagKind::CpuOutOfMemory;
  Diagnostic& d = diags.report(kind, loc, r->message);
  // As the interpreter reports it: where the tensor is declared, then where in the grid.
  for (const Param& p : func.params)
    if (p.buffer && r->buffer && p.name == r->buffer && p.buffer->loc.known())
      d.note(p.buffer->loc, "`" + p.name + "` is declared here");
  d.note(func.loc, r->detail);
  return true;
}

std::optional<double> gemmFlops(const PrimFunc& func, const RunArgs& args) {
  interp::VarValues values;
  for (const Var& v : func.shapeVars) {
    auto it = args.dims.find(v->name);
    if (it != args.dims.end()) values[v.get()] = it->second;
  }
  for (size_t i = 0; i < func.params.size(); ++i)
    if (func.params[i].scalar && args.scalars[i].kind == interp::ArgValue::Kind::Int)
      values[func.params[i].scalar.get()] = args.scalars[i].intValue;
  return ir::gemmFlops(func.body, [&](const Expr& e) -> std::optional<double> {
    auto v = interp::evalShapeExpr(e, values);
    if (!v) return std::nullopt;
    return double(*v);
  });
}

static void benchmark(cpu::CpuKernelFn fn, const PrimFunc& func, RunArgs& args, std::ostream& os) {
  using clock = std::chrono::steady_clock;
  callCpuKernel(fn, func, args);  // warm-up
  std::vector<double> times;
  auto start = clock::now();
  while (times.size() < 5 || std::chrono::duration<double>(clock::now() - start).count() < 0.5) {
    auto t0 = clock::now();
    callCpuKernel(fn, func, args);
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    if (times.size() >= 1000) break;
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  char line[256];
  if (auto flops = gemmFlops(func, args)) {
    std::snprintf(line, sizeof line, "bench: %s: median %.3f ms over %zu runs, %.1f GFLOP/s\n", func.name.c_str(),
                  median * 1e3, times.size(), *flops / median * 1e-9);
  } else {
    double bytes = 0;
    for (const auto& t : args.tensors)
      if (t) bytes += double(t->sizeBytes());
    std::snprintf(line, sizeof line, "bench: %s: median %.3f ms over %zu runs, %.2f GB/s\n", func.name.c_str(),
                  median * 1e3, times.size(), bytes / median * 1e-9);
  }
  os << line;
}

int runOnCpu(const Module& module, const RunSettings& settings, const CpuOptions& requested,
             DiagnosticEngine& diags) {
  if (!cpuOptionsUsable(requested)) return kExitUsage;
  CpuOptions options = requested;
  options.checkBounds |= settings.check;  // --check checks the backend's accesses too
  options.sources = &diags.sources();
  // Built kernels are reused across runs through the kernel cache (TLC_CACHE=0
  // disables it), except when the user asked to see the compilation.
  bool showsCompilation = options.printAfterAll || options.timePasses || options.dumpLLVM;
  auto compile = [&](const CpuOptions& o) {
    return showsCompilation ? compileForCpu(module, o, diags)
                            : compileForCpuCached(module, o, diags, KernelCache::fromEnvironment());
  };
  std::unique_ptr<cpu::CpuJitModule> jit = compile(options);
  if (!jit) return 1;
  // --bench times the kernel as built without --check's bounds checks.
  std::unique_ptr<cpu::CpuJitModule> timed;
  if (settings.bench && options.checkBounds != requested.checkBounds) {
    timed = compile(requested);
    if (!timed) return 1;
  }
  return runTarget(module, settings, diags, "cpu",
                   [&](const PrimFunc& func, RunArgs& args, const RunSettings& s, DiagnosticEngine& d) {
                     cpu::CpuKernelFn fn = jit->kernel(func.name);
                     cpu::CpuKernelFn timedFn = timed ? timed->kernel(func.name) : fn;
                     if (!fn || !timedFn) {
                       d.report(DiagKind::CpuBuildFailed, func.loc,
                                "the compiled module has no kernel `" + func.name + "`");
                       return false;
                     }
                     // Time on a copy so the checked results come from one clean
                     // run, and only after that run found no failure.
                     std::optional<RunArgs> scratch;
                     if (s.bench) scratch = cloneArguments(args);
                     callCpuKernel(fn, func, args);
                     if (reportCpuFailure(*jit, func, d)) return false;
                     if (scratch) benchmark(timedFn, func, *scratch, s.out ? *s.out : std::cout);
                     return true;
                   });
}

std::string cpuModuleMetadata(const Module& module, const SourceManager* sources) {
  meta::MetadataOptions metaOptions;
  metaOptions.target = "cpu";
  metaOptions.binary = "so";
  metaOptions.symbolFor = cpu::cpuKernelSymbol;
  metaOptions.sources = sources;
  return meta::moduleMetadataJson(module, metaOptions);
}

int buildForCpu(const Module& module, const std::string& outPath, const CpuOptions& options, DiagnosticEngine& diags) {
  if (!cpuOptionsUsable(options)) return kExitUsage;
  auto start = std::chrono::steady_clock::now();
  std::optional<Module> lowered = lowerModuleForCpu(module, options, diags);
  if (!lowered) return 1;
  std::string error;
  // Kernel metadata for the host runtime, described from the module before lowering.
  CpuOptions withMetadata = options;
  withMetadata.sources = &diags.sources();
  withMetadata.moduleMetadata = cpuModuleMetadata(module, &diags.sources());
  if (!cpu::buildSharedObject(*lowered, outPath, withMetadata, &error)) {
    diags.report(DiagKind::CpuBuildFailed, moduleLoc(module), "cannot build `" + outPath + "`: " + error);
    return 1;
  }
  if (options.timePasses) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "  %8.3f ms  total (lowering, LLVM, link)\n", ms);
  }
  return 0;
}

}  // namespace tlc::driver
