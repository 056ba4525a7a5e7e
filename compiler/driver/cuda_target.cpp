#include "compiler/driver/cuda_target.h"

#include "compiler/ir/gemm_flops.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "compiler/backends/cuda/cuda_driver.h"
#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/driver/device_metadata.h"
#include "compiler/driver/kernel_cache.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/functor.h"

namespace tlc::driver {

using namespace ir;

namespace {

std::optional<CudaBenchResult> gLastBench;

// Host-side evaluation of launch expressions (grids, lets, shape variables).
struct HostValues {
  std::map<const VarNode*, double> values;
  std::map<std::string, double> byName;

  std::optional<double> eval(const Expr& e) const {
    if (auto* i = as<IntImm>(e)) return (double)i->value;
    if (auto* f = as<FloatImm>(e)) return f->value;
    if (auto* v = as<VarRef>(e)) {
      if (auto it = values.find(v->var.get()); it != values.end()) return it->second;
      if (auto it = byName.find(v->var->name); it != byName.end()) return it->second;
      return std::nullopt;
    }
    if (auto* c = as<Cast>(e)) {
      auto x = eval(c->value);
      if (x && !isFloat(c->dtype)) *x = std::trunc(*x);
      return x;
    }
    if (auto* s = as<Select>(e)) {
      auto c = eval(s->cond);
      if (!c) return std::nullopt;
      return *c ? eval(s->t) : eval(s->f);
    }
    if (auto* call = as<Call>(e)) {
      std::vector<double> a;
      for (auto& x : call->args) {
        auto v = eval(x);
        if (!v) return std::nullopt;
        a.push_back(*v);
      }
      if (call->callee == "ceildiv" && a.size() == 2 && a[1] != 0) return std::ceil(a[0] / a[1]);
      if (call->callee == "min" && a.size() == 2) return std::min(a[0], a[1]);
      if (call->callee == "max" && a.size() == 2) return std::max(a[0], a[1]);
      return std::nullopt;
    }
    if (auto* u = as<Unary>(e)) {
      auto x = eval(u->a);
      if (!x) return std::nullopt;
      return u->op == UnaryOp::Neg ? -*x : u->op == UnaryOp::Not ? (double)!*x : (double)~(int64_t)*x;
    }
    if (auto* b = as<Binary>(e)) {
      auto x = eval(b->a), y = eval(b->b);
      if (!x || !y) return std::nullopt;
      bool integer = !isFloat(b->a->dtype);
      switch (b->op) {
        case BinaryOp::Add: return *x + *y;
        case BinaryOp::Sub: return *x - *y;
        case BinaryOp::Mul: return *x * *y;
        case BinaryOp::Div: return *x / *y;
        case BinaryOp::FloorDiv: return *y == 0 ? std::nullopt : std::optional<double>(std::floor(*x / *y));
        case BinaryOp::FloorMod:
          if (*y == 0) return std::nullopt;
          return integer ? *x - std::floor(*x / *y) * *y : std::fmod(*x, *y);
        case BinaryOp::Min: return std::min(*x, *y);
        case BinaryOp::Max: return std::max(*x, *y);
        case BinaryOp::Eq: return (double)(*x == *y);
        case BinaryOp::Ne: return (double)(*x != *y);
        case BinaryOp::Lt: return (double)(*x < *y);
        case BinaryOp::Le: return (double)(*x <= *y);
        case BinaryOp::Gt: return (double)(*x > *y);
        case BinaryOp::Ge: return (double)(*x >= *y);
        case BinaryOp::And: return (double)(*x && *y);
        case BinaryOp::Or: return (double)(*x || *y);
        case BinaryOp::BitAnd: return (double)((int64_t)*x & (int64_t)*y);
        case BinaryOp::BitOr: return (double)((int64_t)*x | (int64_t)*y);
        case BinaryOp::BitXor: return (double)((int64_t)*x ^ (int64_t)*y);
        case BinaryOp::Shl: return (double)((int64_t)*x << (int64_t)*y);
        case BinaryOp::Shr: return (double)((int64_t)*x >> (int64_t)*y);
      }
    }
    return std::nullopt;
  }
};

struct LoadedModule {
  cuda::CudaModule generated;
  void* module = nullptr;
  std::map<std::string, void*> functions;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int sustainedRuns(double oneMs, int atLeast) {
  return (int)std::clamp(500.0 / std::max(oneMs, 1e-3), (double)atLeast, 1000.0);
}

const std::optional<CudaBenchResult>& lastCudaBench() { return gLastBench; }

std::optional<std::string> compileForCuda(const Module& module, const CudaOptions& options, bool ptx,
                                          DiagnosticEngine& diags, cuda::CudaModule* generated) {
  auto t0 = std::chrono::steady_clock::now();
  auto cm = cuda::generateCuda(module, options, diags);
  if (!cm) return std::nullopt;
  auto t1 = std::chrono::steady_clock::now();
  if (options.printAfterAll) std::cerr << "// -----// CUDA C for " << options.arch << " //----- //\n" << cm->source;
  auto result = cuda::compileWithNvrtc(cm->source, options.arch, ptx);
  auto t2 = std::chrono::steady_clock::now();
  if (options.timePasses) {
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::cerr << "cuda codegen: " << ms(t0, t1) << " ms\nnvrtc (" << options.arch << "): " << ms(t1, t2) << " ms\n";
  }
  if (!result.ok) {
    diags.report(DiagKind::CudaBuildFailed, {}, result.error);
    return std::nullopt;
  }
  if (generated) *generated = std::move(*cm);
  return result.binary;
}

int emitCuda(const Module& module, bool ptx, const CudaOptions& options, std::ostream& os, DiagnosticEngine& diags) {
  if (!ptx) {
    // Printed for reading: without the #line directives the compiled source carries.
    CudaOptions readable = options;
    readable.lineDirectives = false;
    auto cm = cuda::generateCuda(module, readable, diags);
    if (!cm) return 1;
    os << cm->source;
    return 0;
  }
  auto bin = compileForCuda(module, options, true, diags);
  if (!bin) return 1;
  os << *bin;
  return 0;
}

namespace {

// The key of one part (`what`: the binary or its metadata) of a device
// build: the module's IR with its source locations (the binary's line
// directives and the metadata both name .tl lines), the target and every
// option that changes the generated code.
std::string cudaCacheKey(const Module& module, const CudaOptions& o, const SourceManager& sources,
                         const std::string& what) {
  CacheKeyParts parts;
  PrintOptions print;
  print.locations = &sources;
  parts.sources = {printModule(module, print)};
  parts.target = "cuda:" + o.arch;
  parts.options = what + "|tensor-cores=" + std::to_string(o.tensorCores) + "|async-copy=" +
                  std::to_string(o.asyncCopy) + "|swizzle=" + std::to_string(o.swizzle) + "|warp-specialize=" +
                  std::to_string(o.warpSpecialize) + "|max-shared=" + std::to_string(o.maxSharedBytes) +
                  "|line-directives=" + std::to_string(o.lineDirectives);
  return cacheKey(parts);
}

bool readWhole(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  *bytes = text.str();
  return (bool)in;
}

}  // namespace

int buildForCuda(const Module& module, const std::string& outPath, const CudaOptions& options, DiagnosticEngine& diags) {
  // Device builds go through the kernel cache (kernel_cache.h) like CPU
  // modules: the binary and its metadata are two entries, used only together.
  // Builds that print their passes or times always compile.
  KernelCache cache = KernelCache::fromEnvironment();
  bool cacheable = cache.enabled() && !options.printAfterAll && !options.timePasses;
  std::string binKey = cacheable ? cudaCacheKey(module, options, diags.sources(), "binary") : "";
  std::string metaKey = cacheable ? cudaCacheKey(module, options, diags.sources(), "metadata") : "";
  std::string bin, meta;
  bool hit = false;
  if (cacheable) {
    auto b = cache.lookup(binKey), m = cache.lookup(metaKey);
    hit = b && m && readWhole(*b, &bin) && readWhole(*m, &meta);
  }
  if (!hit) {
    cuda::CudaModule generated;
    auto built = compileForCuda(module, options, false, diags, &generated);
    if (!built) return 1;
    bin = std::move(*built);
    meta = cudaModuleMetadata(module, generated, "cuda:" + options.arch, &diags.sources());
    std::string ignored;  // an unwritable cache only costs the next build its time
    if (cacheable && cache.store(binKey, bin, &ignored)) cache.store(metaKey, meta, &ignored);
  }
  std::ofstream out(outPath, std::ios::binary);
  out.write(bin.data(), (std::streamsize)bin.size());
  if (!out) {
    diags.report(DiagKind::CudaBuildFailed, {}, "cannot write `" + outPath + "`");
    return 1;
  }
  // Kernel metadata for the host runtime, as `<out>.json`.
  std::string error;
  if (!writeMetadataBeside(outPath, meta, &error)) {
    diags.report(DiagKind::CudaBuildFailed, {}, error);
    return 1;
  }
  return 0;
}

int runOnCuda(const Module& module, const RunSettings& settings, const CudaOptions& options, DiagnosticEngine& diags) {
  LoadedModule lm;
  auto cubin = compileForCuda(module, options, false, diags, &lm.generated);
  if (!cubin) return 1;
  std::string why;
  cuda::CudaDriver* drv = cuda::CudaDriver::get(&why);
  if (!drv) {
    diags.report(DiagKind::CudaLaunchFailed, {}, why);
    return 1;
  }
  if (!drv->loadModule(*cubin, &lm.module)) {
    diags.report(DiagKind::CudaLaunchFailed, {}, drv->lastError());
    return 1;
  }
  std::ostream& out = settings.out ? *settings.out : std::cout;

  auto runner = [&](const PrimFunc& func, RunArgs& args, const RunSettings& rs, DiagnosticEngine& d) -> bool {
    const cuda::FuncLaunch* fl = nullptr;
    for (auto& f : lm.generated.funcs)
      if (f.funcName == func.name) fl = &f;
    auto fail = [&](const std::string& msg) {
      d.report(DiagKind::CudaLaunchFailed, func.loc, msg);
      return false;
    };
    if (!fl) return fail("the CUDA backend produced no kernels for `" + func.name + "`");
    HostValues env;
    for (auto& [name, v] : args.dims) env.byName[name] = (double)v;
    for (size_t i = 0; i < func.params.size(); ++i) {
      const Param& p = func.params[i];
      if (p.scalar && i < args.scalars.size()) {
        const interp::ArgValue& a = args.scalars[i];
        env.values[p.scalar.get()] = a.kind == interp::ArgValue::Kind::Float ? a.floatValue : (double)a.intValue;
      }
      if (p.buffer && args.tensors[i])  // shape variables from the tensors' shapes
        for (size_t d2 = 0; d2 < p.buffer->shape.size(); ++d2)
          if (auto* v = as<VarRef>(p.buffer->shape[d2])) env.values[v->var.get()] = (double)args.tensors[i]->shape[d2];
    }
    for (auto& [var, e] : fl->hostLets) {
      auto v = env.eval(e);
      if (!v) return fail("cannot evaluate `" + var->name + "` on the host for the launch");
      env.values[var.get()] = *v;
    }
    // Device copies of the tensors.
    std::vector<cuda::CUdeviceptr> dev(func.params.size(), 0);
    struct Free {
      cuda::CudaDriver* drv;
      std::vector<cuda::CUdeviceptr>& p;
      ~Free() {
        for (auto x : p) drv->free(x);
      }
    } freeAll{drv, dev};
    double bytes = 0;
    for (size_t i = 0; i < func.params.size(); ++i) {
      if (!args.tensors[i]) continue;
      auto& t = *args.tensors[i];
      bytes += (double)t.sizeBytes();
      if (!drv->alloc(&dev[i], t.sizeBytes()) || !drv->copyToDevice(dev[i], t.data(), t.sizeBytes()))
        return fail(drv->lastError());
    }
    // Kernel argument storage, in the order of FuncLaunch::args.
    std::vector<std::array<unsigned char, 8>> storage(fl->args.size());
    std::vector<void*> params(fl->args.size());
    for (size_t k = 0; k < fl->args.size(); ++k) {
      const cuda::KernelArg& ka = fl->args[k];
      auto& slot = storage[k];
      slot.fill(0);
      params[k] = slot.data();
      if (ka.kind == cuda::KernelArg::Kind::Tensor) {
        std::memcpy(slot.data(), &dev[ka.paramIndex], sizeof(cuda::CUdeviceptr));
        continue;
      }
      auto v = env.eval(makeVarRef(ka.var));
      if (!v) return fail("no value for kernel argument `" + ka.var->name + "`");
      interp::HostTensor scalar(ka.dtype, {1});
      scalar.set(0, *v);
      std::memcpy(slot.data(), scalar.data(), dtypeBytes(ka.dtype));
    }
    struct alignas(64) TensorMapBytes {
      unsigned char bytes[128];
    };
    struct Launch {
      void* fn;
      unsigned grid[3];
      unsigned threads, shared;
      std::vector<TensorMapBytes> maps;  // after the function's arguments (Hopper TMA)
      std::vector<void*> params;
    };
    std::vector<Launch> launches;
    for (const cuda::KernelLaunch& kl : fl->kernels) {
      Launch l{nullptr, {1, 1, 1}, (unsigned)kl.threads, (unsigned)kl.sharedBytes, {}, {}};
      bool empty = false;
      for (size_t g = 0; g < kl.grid.size() && g < 3; ++g) {
        auto v = env.eval(kl.grid[g]);
        if (!v) return fail("cannot evaluate the grid of `" + kl.name + "` on the host");
        if (*v <= 0) empty = true;
        l.grid[g] = (unsigned)std::max(0.0, *v);
      }
      if (empty) continue;
      // Tensor maps (Hopper TMA); the version without TMA when one cannot be encoded.
      l.maps.resize(kl.tensorMaps.size());
      bool useFallback = false;
      for (size_t t = 0; t < kl.tensorMaps.size(); ++t) {
        const cuda::TensorMapArg& tm = kl.tensorMaps[t];
        const interp::HostTensor& x = *args.tensors[tm.paramIndex];
        cuda::TensorMapSpec spec;
        std::string why;
        if (!cuda::rowMajorTensorMapSpec(std::string(dtypeName(x.dtype)), dev[tm.paramIndex], x.shape, tm.box,
                                         tm.swizzle, &spec, &why)) {
          const std::string& tensor = func.params[tm.paramIndex].name;
          if (kl.fallbackName.empty()) return fail(cuda::tmaUnsupportedError(kl.name, tensor, why));
          useFallback = true;
          out << cuda::tmaFallbackNote(kl.name, tensor, why);
          break;
        }
        if (!drv->encodeTensorMap(spec, l.maps[t].bytes)) return fail(drv->lastError());
      }
      if (useFallback) {
        l.maps.clear();
        l.threads = (unsigned)kl.fallbackThreads;
        l.shared = (unsigned)kl.fallbackSharedBytes;
      }
      const std::string& entry = useFallback ? kl.fallbackName : kl.name;
      auto it = lm.functions.find(entry);
      if (it == lm.functions.end()) {
        void* fn = nullptr;
        if (!drv->getFunction(lm.module, entry, &fn)) return fail(drv->lastError());
        if (l.shared > 48 * 1024 && !drv->setDynamicShared(fn, (int)l.shared)) return fail(drv->lastError());
        it = lm.functions.emplace(entry, fn).first;
      }
      l.fn = it->second;
      launches.push_back(std::move(l));
    }
    for (auto& l : launches) {
      l.params = params;
      for (auto& m : l.maps) l.params.push_back(m.bytes);
    }
    auto launchAll = [&]() {
      for (auto& l : launches)
        if (!drv->launch(l.fn, l.grid, l.threads, l.shared, l.params.data())) return false;
      return true;
    };
    if (!launchAll() || !drv->synchronize()) return fail(drv->lastError());
    std::vector<bool> written = writtenParams(func);
    for (size_t i = 0; i < func.params.size(); ++i)
      if (args.tensors[i] && written[i] && !drv->copyToHost(args.tensors[i]->data(), dev[i], args.tensors[i]->sizeBytes()))
        return fail(drv->lastError());

    if (rs.bench) {
      // Warm up, then time batches of launches until ~0.5 s have passed (at least 5).
      double one = drv->time(launchAll);
      if (one < 0) return fail(drv->lastError());
      int runs = options.benchRuns > 0 ? options.benchRuns : sustainedRuns(one);
      std::vector<double> times;
      for (int r = 0; r < runs; ++r) {
        double ms = drv->time(launchAll);
        if (ms < 0) return fail(drv->lastError());
        times.push_back(ms);
      }
      CudaBenchResult br;
      br.medianMs = median(times);
      br.bytes = bytes;
      auto flops = ir::gemmFlops(func.body, [&](const Expr& e) -> std::optional<double> {
        auto v = env.eval(e);
        if (!v) return std::nullopt;
        return double(*v);
      });
      if (flops && *flops > 0) br.flops = flops;
      out << "bench: " << func.name << " on " << drv->deviceName() << " (" << options.arch << "): median "
          << br.medianMs << " ms over " << runs << " runs";
      if (br.flops) out << ", " << *br.flops / (br.medianMs * 1e-3) / 1e12 << " TFLOP/s";
      out << ", " << br.bytes / (br.medianMs * 1e-3) / 1e9 << " GB/s (tensor bytes once)\n";
      gLastBench = br;
    }
    return true;
  };
  RunSettings cuda = settings;
  cuda.tf32Gemm = true;  // float32 gemms run on the tensor cores in tf32
  return runTarget(module, cuda, diags, "cuda:" + options.arch, runner);
}

}  // namespace tlc::driver
