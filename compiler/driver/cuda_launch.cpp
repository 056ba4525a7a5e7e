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
  for (auto x : work_) drv_->free(x);
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
  // A device function of the module (`fallback`: of its image of versions
  // without TMA, compiled when first needed), dynamic shared memory set up.
  auto lookup = [&](const std::string& entry, bool fallback, void** fn) {
    auto it = lm.functions.find(entry);
    if (it == lm.functions.end()) {
      if (fallback && !lm.fallbackModule) {
        cuda::NvrtcResult built = cuda::compileWithNvrtc(lm.generated.fallbackSource, lm.arch, false);
        if (!built.ok) return fail(built.error);
        if (!drv_->loadModule(built.binary, &lm.fallbackModule)) return fail(drv_->lastError());
      }
      void* f = nullptr;
      if (!drv_->getFunction(fallback ? lm.fallbackModule : lm.module, entry, &f)) return fail(drv_->lastError());
      it = lm.functions.emplace(entry, f).first;
    }
    *fn = it->second;
    return true;
  };
  auto word = [](auto v) {
    std::array<unsigned char, 8> w{};
    std::memcpy(w.data(), &v, sizeof v);
    return w;
  };
  for (const cuda::KernelLaunch& kl : fl->kernels) {
    Launch l{nullptr, {1, 1, 1}, (unsigned)kl.threads, (unsigned)kl.sharedBytes, {}, {}, {}};
    bool empty = false;
    for (size_t g = 0; g < kl.grid.size() && g < 3; ++g) {
      auto v = env_.eval(kl.grid[g]);
      if (!v) return fail("cannot evaluate the grid of `" + kl.name + "` on the host");
      if (*v <= 0) empty = true;
      l.grid[g] = (unsigned)std::max(0.0, *v);
    }
    if (empty) continue;
    // Tensor maps (Hopper TMA); tensors TMA cannot address staged into a
    // workspace when their maps allow it, else the version without TMA.
    cuda::LaunchMaps maps = cuda::planLaunchMaps(
        kl.name, kl.tensorMaps,
        [&](int p) {
          const interp::HostTensor& x = *args.tensors[p];
          return cuda::LaunchTensor{std::string(dtypeName(x.dtype)), dev_[p], x.shape, func.params[p].name};
        },
        !kl.fallbackName.empty(), true);
    if (!maps.error.empty()) return fail(maps.error);
    const bool useFallback = maps.fallback;
    *notes += maps.note;
    if (maps.workspaceBytes > 0) {
      backend::DevicePtr workspace = 0;
      if (!drv_->alloc(&workspace, maps.workspaceBytes)) return fail(drv_->lastError());
      work_.push_back(workspace);
      cuda::placeStagedMaps(&maps, workspace);
      for (const cuda::StagedTensor& st : maps.staged) {
        *notes += cuda::tmaStagedNote(kl.name, func.params[st.paramIndex].name, st);
        void* fn = nullptr;
        if (!lookup(cuda::kStageRowsEntry, false, &fn)) return false;
        cuda::StageLaunch sl = cuda::stageLaunch(st);
        Launch s{fn, {sl.grid[0], sl.grid[1], sl.grid[2]}, sl.threads, 0, {}, {}, {}};
        s.own = {word(st.source), word(workspace + st.offset), word(st.rows), word(st.rowBytes), word(st.pitch),
                 word(st.elemBytes), word(sl.rowThreads)};
        launches_.push_back(std::move(s));
      }
    }
    l.maps.resize(maps.specs.size());
    for (size_t t = 0; t < maps.specs.size(); ++t)
      if (!drv_->encodeTensorMap(maps.specs[t], l.maps[t].bytes)) return fail(drv_->lastError());
    if (useFallback) {
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
    if (!lookup(useFallback ? kl.fallbackName : kl.name, useFallback, &l.fn)) return false;
    if (l.shared > 48 * 1024 && !drv_->setDynamicShared(l.fn, (int)l.shared)) return fail(drv_->lastError());
    launches_.push_back(std::move(l));
  }
  for (auto& l : launches_) {
    if (!l.own.empty()) {  // a staging launch: its own arguments
      for (auto& w : l.own) l.params.push_back(w.data());
      continue;
    }
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
