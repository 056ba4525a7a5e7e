#include "compiler/driver/cuda_launch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/backends/cuda/nvrtc.h"
#include "compiler/backends/cuda/persistent_grid.h"

namespace tlc::driver {

using namespace ir;

std::optional<double> HostValues::eval(const Expr& e) const {
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

CudaLaunches::~CudaLaunches() {
  for (auto x : dev_) drv_->free(x);
}

bool CudaLaunches::prepare(LoadedCudaModule& lm, const PrimFunc& func, const RunArgs& args, std::string* error,
                           std::string* notes) {
  const cuda::FuncLaunch* fl = nullptr;
  for (auto& f : lm.generated.funcs)
    if (f.funcName == func.name) fl = &f;
  auto fail = [&](const std::string& msg) {
    *error = msg;
    return false;
  };
  if (!fl) return fail("the CUDA backend produced no kernels for `" + func.name + "`");
  for (auto& [name, v] : args.dims) env_.byName[name] = (double)v;
  for (size_t i = 0; i < func.params.size(); ++i) {
    const Param& p = func.params[i];
    if (p.scalar && i < args.scalars.size()) {
      const interp::ArgValue& a = args.scalars[i];
      env_.values[p.scalar.get()] = a.kind == interp::ArgValue::Kind::Float ? a.floatValue : (double)a.intValue;
    }
    if (p.buffer && args.tensors[i])  // shape variables from the tensors' shapes
      for (size_t d2 = 0; d2 < p.buffer->shape.size(); ++d2)
        if (auto* v = as<VarRef>(p.buffer->shape[d2])) env_.values[v->var.get()] = (double)args.tensors[i]->shape[d2];
  }
  for (auto& [var, e] : fl->hostLets) {
    auto v = env_.eval(e);
    if (!v) return fail("cannot evaluate `" + var->name + "` on the host for the launch");
    env_.values[var.get()] = *v;
  }
  // Device copies of the tensors.
  dev_.assign(func.params.size(), 0);
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (!args.tensors[i]) continue;
    auto& t = *args.tensors[i];
    bytes_ += (double)t.sizeBytes();
    if (!drv_->alloc(&dev_[i], t.sizeBytes()) || !drv_->copyToDevice(dev_[i], t.data(), t.sizeBytes()))
      return fail(drv_->lastError());
  }
  // Kernel argument storage, in the order of FuncLaunch::args.
  storage_.assign(fl->args.size(), {});
  std::vector<void*> params(fl->args.size());
  for (size_t k = 0; k < fl->args.size(); ++k) {
    const cuda::KernelArg& ka = fl->args[k];
    auto& slot = storage_[k];
    slot.fill(0);
    params[k] = slot.data();
    if (ka.kind == cuda::KernelArg::Kind::Tensor) {
      std::memcpy(slot.data(), &dev_[ka.paramIndex], sizeof(backend::DevicePtr));
      continue;
    }
    auto v = env_.eval(makeVarRef(ka.var));
    if (!v) return fail("no value for kernel argument `" + ka.var->name + "`");
    interp::HostTensor scalar(ka.dtype, {1});
    scalar.set(0, *v);
    std::memcpy(slot.data(), scalar.data(), dtypeBytes(ka.dtype));
  }
  for (const cuda::KernelLaunch& kl : fl->kernels) {
    Launch l{nullptr, {1, 1, 1}, (unsigned)kl.threads, (unsigned)kl.sharedBytes, {}, {}};
    bool empty = false;
    for (size_t g = 0; g < kl.grid.size() && g < 3; ++g) {
      auto v = env_.eval(kl.grid[g]);
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
      if (!cuda::rowMajorTensorMapSpec(std::string(dtypeName(x.dtype)), dev_[tm.paramIndex], x.shape, tm.box,
                                       tm.swizzle, &spec, &why)) {
        const std::string& tensor = func.params[tm.paramIndex].name;
        if (kl.fallbackName.empty()) return fail(cuda::tmaUnsupportedError(kl.name, tensor, why));
        useFallback = true;
        *notes += cuda::tmaFallbackNote(kl.name, tensor, why);
        break;
      }
      if (!drv_->encodeTensorMap(spec, l.maps[t].bytes)) return fail(drv_->lastError());
    }
    if (useFallback) {
      l.maps.clear();
      l.threads = (unsigned)kl.fallbackThreads;
      l.shared = (unsigned)kl.fallbackSharedBytes;
    } else if (kl.persistentBlocksPerSM > 0) {
      // The blocks loop over the grid's tiles: one wave of them.
      double tiles = (double)l.grid[0] * l.grid[1] * l.grid[2];
      int64_t size = cuda::persistentGridSize((int64_t)std::min(tiles, 4e18), drv_->smCount(), kl.persistentBlocksPerSM);
      if (size > INT32_MAX) return fail("kernel `" + kl.name + "`: too many tiles for a launch");
      l.grid[0] = (unsigned)size;
      l.grid[1] = l.grid[2] = 1;
    }
    const std::string& entry = useFallback ? kl.fallbackName : kl.name;
    auto it = lm.functions.find(entry);
    if (it == lm.functions.end()) {
      if (useFallback && !lm.fallbackModule) {
        cuda::NvrtcResult built = cuda::compileWithNvrtc(lm.generated.fallbackSource, lm.arch, false);
        if (!built.ok) return fail(built.error);
        if (!drv_->loadModule(built.binary, &lm.fallbackModule)) return fail(drv_->lastError());
      }
      void* fn = nullptr;
      if (!drv_->getFunction(useFallback ? lm.fallbackModule : lm.module, entry, &fn)) return fail(drv_->lastError());
      if (l.shared > 48 * 1024 && !drv_->setDynamicShared(fn, (int)l.shared)) return fail(drv_->lastError());
      it = lm.functions.emplace(entry, fn).first;
    }
    l.fn = it->second;
    launches_.push_back(std::move(l));
  }
  for (auto& l : launches_) {
    l.params = params;
    for (auto& m : l.maps) l.params.push_back(m.bytes);
  }
  return true;
}

bool CudaLaunches::launchAll() {
  for (auto& l : launches_)
    if (!drv_->launch(l.fn, l.grid, l.threads, l.shared, l.params.data())) return false;
  return true;
}

bool CudaLaunches::copyOutputs(const PrimFunc& func, RunArgs& args) {
  std::vector<bool> written = writtenParams(func);
  for (size_t i = 0; i < func.params.size(); ++i)
    if (args.tensors[i] && written[i] && !drv_->copyToHost(args.tensors[i]->data(), dev_[i], args.tensors[i]->sizeBytes()))
      return false;
  return true;
}

}  // namespace tlc::driver
