// `tlc run --target=cuda:sm_XX --emulate` (see emulate_target.h).
#include "compiler/driver/emulate_target.h"

#include "compiler/backends/cuda/persistent_grid.h"
#include "compiler/backends/cuda/tensor_map.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include "compiler/backends/cuda/cuda_codegen.h"
#include "compiler/backends/cuda_emu/emulator.h"

namespace tlc::driver {

namespace {

// The SMs of the emulated GPU, for persistent kernels' grids: few, so that
// their blocks loop over several tiles.
constexpr int64_t kEmulatedSMs = 2;

using cuda_emu::KernelArg;

// Host-side scalar values: shape variables, scalar parameters, host lets.
struct HostEnv {
  std::map<const ir::VarNode*, double> values;
  std::map<std::string, double> byName;  // fallback for shape variables

  bool eval(const ir::Expr& e, double* out, std::string* why) const {
    switch (e->kind) {
      case ir::ExprKind::IntImm: *out = (double)static_cast<const ir::IntImm&>(*e).value; return true;
      case ir::ExprKind::FloatImm: *out = static_cast<const ir::FloatImm&>(*e).value; return true;
      case ir::ExprKind::VarRef: {
        const auto& v = static_cast<const ir::VarRef&>(*e).var;
        auto it = values.find(v.get());
        if (it != values.end()) {
          *out = it->second;
          return true;
        }
        auto n = byName.find(v->name);
        if (n != byName.end()) {
          *out = n->second;
          return true;
        }
        *why = "no value for `" + v->name + "`";
        return false;
      }
      case ir::ExprKind::Cast: {
        const auto& c = static_cast<const ir::Cast&>(*e);
        if (!eval(c.value, out, why)) return false;
        if (!isFloat(c.dtype)) *out = std::trunc(*out);
        return true;
      }
      case ir::ExprKind::Unary: {
        const auto& u = static_cast<const ir::Unary&>(*e);
        double a;
        if (!eval(u.a, &a, why)) return false;
        switch (u.op) {
          case ir::UnaryOp::Neg: *out = -a; break;
          case ir::UnaryOp::Not: *out = a == 0; break;
          case ir::UnaryOp::BitNot: *out = (double)~(int64_t)a; break;
        }
        return true;
      }
      case ir::ExprKind::Select: {
        const auto& s = static_cast<const ir::Select&>(*e);
        double c;
        if (!eval(s.cond, &c, why)) return false;
        return eval(c != 0 ? s.t : s.f, out, why);
      }
      case ir::ExprKind::Binary: {
        const auto& b = static_cast<const ir::Binary&>(*e);
        double x, y;
        if (!eval(b.a, &x, why) || !eval(b.b, &y, why)) return false;
        const bool integer = !isFloat(b.a->dtype) && !isFloat(b.b->dtype);
        int64_t xi = (int64_t)x, yi = (int64_t)y;
        switch (b.op) {
          case ir::BinaryOp::Add: *out = x + y; break;
          case ir::BinaryOp::Sub: *out = x - y; break;
          case ir::BinaryOp::Mul: *out = x * y; break;
          case ir::BinaryOp::Div: *out = x / y; break;
          case ir::BinaryOp::FloorDiv:
            if (integer) {
              if (yi == 0) {
                *why = "division by zero";
                return false;
              }
              int64_t q = xi / yi;
              if ((xi % yi != 0) && ((xi < 0) != (yi < 0))) q--;
              *out = (double)q;
            } else {
              *out = std::floor(x / y);
            }
            break;
          case ir::BinaryOp::FloorMod:
            if (integer) {
              if (yi == 0) {
                *why = "division by zero";
                return false;
              }
              int64_t r = xi % yi;
              if (r != 0 && ((r < 0) != (yi < 0))) r += yi;
              *out = (double)r;
            } else {
              *out = x - std::floor(x / y) * y;
            }
            break;
          case ir::BinaryOp::Min: *out = std::min(x, y); break;
          case ir::BinaryOp::Max: *out = std::max(x, y); break;
          case ir::BinaryOp::Eq: *out = x == y; break;
          case ir::BinaryOp::Ne: *out = x != y; break;
          case ir::BinaryOp::Lt: *out = x < y; break;
          case ir::BinaryOp::Le: *out = x <= y; break;
          case ir::BinaryOp::Gt: *out = x > y; break;
          case ir::BinaryOp::Ge: *out = x >= y; break;
          case ir::BinaryOp::And: *out = (x != 0) && (y != 0); break;
          case ir::BinaryOp::Or: *out = (x != 0) || (y != 0); break;
          case ir::BinaryOp::BitAnd: *out = (double)(xi & yi); break;
          case ir::BinaryOp::BitOr: *out = (double)(xi | yi); break;
          case ir::BinaryOp::BitXor: *out = (double)(xi ^ yi); break;
          case ir::BinaryOp::Shl: *out = (double)(xi << yi); break;
          case ir::BinaryOp::Shr: *out = (double)(xi >> yi); break;
        }
        return true;
      }
      default:
        *why = std::string("cannot evaluate a `") + ir::exprKindName(e->kind) + "` on the host";
        return false;
    }
  }
};

KernelArg scalarArg(const std::string& name, DType t, double v) {
  switch (t) {
    case DType::Bool: return KernelArg::value(name, (bool)(v != 0));
    case DType::Int8: return KernelArg::value(name, (int8_t)v);
    case DType::Int16: return KernelArg::value(name, (int16_t)v);
    case DType::Int32: return KernelArg::value(name, (int32_t)v);
    case DType::Int64: return KernelArg::value(name, (int64_t)v);
    case DType::UInt8: return KernelArg::value(name, (uint8_t)v);
    case DType::UInt16: return KernelArg::value(name, (uint16_t)v);
    case DType::UInt32: return KernelArg::value(name, (uint32_t)v);
    case DType::UInt64: return KernelArg::value(name, (uint64_t)v);
    case DType::Float32: return KernelArg::value(name, (float)v);
    case DType::Float64: return KernelArg::value(name, v);
    default: {
      // Narrow floats travel as their 16/8-bit encodings.
      interp::HostTensor t1(t, {1});
      t1.set(0, v);
      KernelArg a;
      a.kind = KernelArg::Kind::Scalar;
      a.name = name;
      a.bytes = t1.sizeBytes();
      std::memcpy(a.scalar, t1.data(), a.bytes);
      return a;
    }
  }
}

}  // namespace

int runCudaEmulated(const ir::Module& module, const RunSettings& settings, const std::string& arch,
                    DiagnosticEngine& diags, const EmulateOptions& options) {
  cuda::CudaOptions copts;
  copts.arch = arch;
  copts.warpSpecialize = options.warpSpecialize;
  copts.persistent = options.persistent;
  copts.stageTma = options.stageTma;
  return runEmulated(module, settings, copts, diags, options);
}

int runEmulated(const ir::Module& module, const RunSettings& settings, const cuda::CudaOptions& copts,
                DiagnosticEngine& diags, const EmulateOptions& options) {
  std::optional<cuda::CudaModule> cm = cuda::generateCuda(module, copts, diags);
  if (!cm) return 1;
  std::string error;
  cuda_emu::CompileOptions eopts;
  auto emu = cuda_emu::EmulatedModule::compile(cm->source, &error, eopts);
  if (!emu) {
    diags.report(DiagKind::CudaEmuBuildFailed, {}, "cannot build the CUDA emulator's host module: " + error);
    return 1;
  }

  auto runner = [&](const ir::PrimFunc& func, RunArgs& args, const RunSettings& rs, DiagnosticEngine& d) -> bool {
    const cuda::FuncLaunch* fl = nullptr;
    for (auto& f : cm->funcs)
      if (f.funcName == func.name) fl = &f;
    if (!fl) {
      d.report(DiagKind::CudaEmuLaunchFailed, func.loc, "the CUDA backend produced no kernels for `" + func.name + "`");
      return false;
    }
    HostEnv env;
    for (auto& [name, v] : args.dims) env.byName[name] = (double)v;
    for (size_t i = 0; i < func.params.size(); ++i) {
      const ir::Param& p = func.params[i];
      if (p.scalar && i < args.scalars.size()) {
        const interp::ArgValue& a = args.scalars[i];
        env.values[p.scalar.get()] = a.kind == interp::ArgValue::Kind::Float ? a.floatValue : (double)a.intValue;
      }
    }
    for (auto& [var, expr] : fl->hostLets) {
      double v;
      std::string why;
      if (!env.eval(expr, &v, &why)) {
        d.report(DiagKind::CudaEmuLaunchFailed, func.loc, "cannot evaluate `" + var->name + "` for the launch: " + why);
        return false;
      }
      env.values[var.get()] = v;
    }
    // With --check, the reference's own run tells which output elements must be written.
    std::optional<RunArgs> before, reference;
    if (rs.check) {
      before = cloneArguments(args);
      reference = cloneArguments(args);
      if (!runOracle(func, *reference, d)) return false;
    }
    std::vector<bool> written = writtenParams(func);
    std::vector<std::vector<uint8_t>> writtenBytes(func.params.size());
    bool ok = true;
    for (const cuda::KernelLaunch& kl : fl->kernels) {
      std::vector<KernelArg> kargs;
      std::vector<int> paramOf;
      for (const cuda::KernelArg& ka : fl->args) {
        paramOf.push_back(-1);
        switch (ka.kind) {
          case cuda::KernelArg::Kind::Tensor: {
            auto& t = args.tensors[ka.paramIndex];
            kargs.push_back(KernelArg::buffer(func.params[ka.paramIndex].name, t->data(), t->sizeBytes(),
                                              written[ka.paramIndex]));
            kargs.back().dtype = std::string(dtypeName(t->dtype));
            paramOf.back() = ka.paramIndex;
            break;
          }
          case cuda::KernelArg::Kind::Scalar:
          case cuda::KernelArg::Kind::ShapeVar:
          case cuda::KernelArg::Kind::HostLet: {
            double v;
            std::string why;
            if (!env.eval(ir::makeVarRef(ka.var), &v, &why)) {
              d.report(DiagKind::CudaEmuLaunchFailed, func.loc, "kernel argument: " + why);
              return false;
            }
            kargs.push_back(scalarArg(ka.var->name, ka.dtype, v));
            break;
          }
        }
      }
      cuda_emu::LaunchConfig cfg;
      unsigned* dims[3] = {&cfg.grid.x, &cfg.grid.y, &cfg.grid.z};
      for (size_t i = 0; i < kl.grid.size() && i < 3; ++i) {
        double v;
        std::string why;
        if (!env.eval(kl.grid[i], &v, &why)) {
          d.report(DiagKind::CudaEmuLaunchFailed, func.loc, "cannot evaluate the grid of `" + kl.name + "`: " + why);
          return false;
        }
        // What a GPU launches: x below 2^31, y and z at most 65535.
        double limit = i == 0 ? 2147483647.0 : 65535.0;
        if (v > limit) {
          d.report(DiagKind::CudaEmuLaunchFailed, func.loc,
                   "grid extent " + std::to_string(i) + " of `" + kl.name + "` is " + std::to_string((int64_t)v) +
                       ", more than a CUDA launch allows (" + std::to_string((int64_t)limit) + ")");
          return false;
        }
        *dims[i] = (unsigned)std::max(0.0, v);
      }
      cfg.block.x = (unsigned)kl.threads;
      cfg.dynamicSharedBytes = (size_t)kl.sharedBytes;
      cuda_emu::LaunchOptions lo;
      lo.checkRaces = options.checkRaces;
      lo.countBankConflicts = options.reportBankConflicts;
      lo.timeoutSeconds = options.timeoutSeconds;
      lo.replayDir = options.replayDir;
      if (lo.replayDir.empty())
        if (const char* env = std::getenv("TLC_EMU_REPLAY_DIR")) lo.replayDir = env;
      // Tensor maps (Hopper TMA) follow the function's arguments, encoded in
      // the emulator's form; tensors TMA cannot address are staged into a
      // workspace when their maps allow it, else the kernel's version without
      // TMA runs, as on a GPU.
      std::string entry = kl.name;
      cuda::LaunchMaps maps = cuda::planLaunchMaps(
          kl.name, kl.tensorMaps,
          [&](int p) {
            const interp::HostTensor& x = *args.tensors[p];
            return cuda::LaunchTensor{std::string(dtypeName(x.dtype)), (uint64_t)(uintptr_t)x.data(), x.shape,
                                      func.params[p].name};
          },
          !kl.fallbackName.empty(), true);
      if (!maps.error.empty()) {
        d.report(DiagKind::CudaEmuLaunchFailed, func.loc, maps.error);
        return false;
      }
      std::ostream& out = settings.out ? *settings.out : std::cout;
      std::vector<unsigned char> workspace;
      if (maps.fallback) {
        entry = kl.fallbackName;
        out << maps.note;
      } else if (maps.workspaceBytes > 0) {
        workspace.resize(maps.workspaceBytes + 256);
        uint64_t base = ((uint64_t)(uintptr_t)workspace.data() + 255) / 256 * 256;
        cuda::placeStagedMaps(&maps, base);
        for (const cuda::StagedTensor& st : maps.staged) {
          const interp::HostTensor& x = *args.tensors[st.paramIndex];
          const std::string& tensor = func.params[st.paramIndex].name;
          out << cuda::tmaStagedNote(kl.name, tensor, st);
          cuda::StageLaunch sl = cuda::stageLaunch(st);
          cuda_emu::LaunchConfig scfg;
          scfg.grid = {sl.grid[0], sl.grid[1], sl.grid[2]};
          scfg.block.x = sl.threads;
          std::vector<KernelArg> sargs = {
              KernelArg::buffer(tensor, const_cast<void*>(x.data()), x.sizeBytes(), false),
              KernelArg::buffer(tensor + "_staged", (void*)(uintptr_t)(base + st.offset), (size_t)(st.rows * st.pitch),
                                true),
              KernelArg::value<long long>("rows", st.rows),
              KernelArg::value<long long>("row_bytes", st.rowBytes),
              KernelArg::value<long long>("pitch", st.pitch),
              KernelArg::value<int>("elem_bytes", st.elemBytes),
              KernelArg::value<int>("row_threads", sl.rowThreads)};
          cuda_emu::LaunchResult r = emu->launch(cuda::kStageRowsEntry, scfg, sargs, lo);
          std::string report = r.render();
          if (!report.empty()) std::cerr << "cuda emulator: kernel `" << cuda::kStageRowsEntry << "`:\n" << report;
          if (!r.error.empty() || r.errorCount() > 0 || !r.completed) {
            d.report(DiagKind::CudaEmuCheckFailed, func.loc,
                     "staging tensor `" + tensor + "` for `" + kl.name + "` failed in the emulator" +
                         (r.error.empty() ? "" : ": " + r.error));
            return false;
          }
        }
      }
      for (size_t t = 0; t < maps.specs.size(); ++t) {
        std::string why;
        alignas(64) unsigned char map[128];
        if (!cuda_emu::encodeTensorMap(maps.specs[t], map, &why)) {
          d.report(DiagKind::CudaEmuLaunchFailed, func.loc, "cannot encode a tensor map for `" + kl.name + "`: " + why);
          return false;
        }
        kargs.push_back(cuda_emu::byValue(func.params[kl.tensorMaps[t].paramIndex].name + "_tmap", map, sizeof map));
        paramOf.push_back(-1);
      }
      if (entry != kl.name) {
        kargs.resize(fl->args.size());
        paramOf.resize(fl->args.size());
        cfg.block.x = (unsigned)kl.fallbackThreads;
        cfg.dynamicSharedBytes = (size_t)kl.fallbackSharedBytes;
      } else if (kl.persistentBlocksPerSM > 0) {
        // A persistent kernel on an emulated GPU of kEmulatedSMs SMs: fewer
        // blocks than tiles, so that blocks loop over several of them.
        double tiles = (double)cfg.grid.x * cfg.grid.y * cfg.grid.z;
        cfg.grid.x = (unsigned)cuda::persistentGridSize((int64_t)std::min(tiles, 2e9), kEmulatedSMs,
                                                        kl.persistentBlocksPerSM);
        cfg.grid.y = cfg.grid.z = 1;
      }
      if (cfg.grid.x * cfg.grid.y * cfg.grid.z == 0) continue;  // an empty grid launches nothing
      cuda_emu::LaunchResult r = emu->launch(entry, cfg, kargs, lo);
      if (!r.error.empty()) {
        d.report(DiagKind::CudaEmuLaunchFailed, func.loc, "cannot launch `" + entry + "` in the emulator: " + r.error);
        return false;
      }
      for (size_t i = 0; i < kargs.size(); ++i) {
        if (paramOf[i] < 0 || i >= r.written.size()) continue;
        auto& acc = writtenBytes[paramOf[i]];
        if (acc.empty()) acc.assign(r.written[i].size(), 0);
        for (size_t b = 0; b < acc.size() && b < r.written[i].size(); ++b) acc[b] |= r.written[i][b];
      }
      std::string report = r.render();
      if (!report.empty()) std::cerr << "cuda emulator: kernel `" << kl.name << "`:\n" << report;
      if (r.errorCount() > 0 || !r.completed) {
        d.report(DiagKind::CudaEmuCheckFailed, func.loc,
                 "the CUDA emulator found " + std::to_string(r.errorCount()) + " error(s) in kernel `" + kl.name +
                     "` (listed above)");
        ok = false;
      }
    }
    // Outputs the reference writes that no kernel wrote.
    if (reference) {
      for (size_t p = 0; p < func.params.size(); ++p) {
        if (!written[p] || !args.tensors[p] || writtenBytes[p].empty()) continue;
        const auto& ref = *reference->tensors[p];
        const auto& pre = *before->tensors[p];
        int eb = ref.elementBytes();
        int64_t missing = 0, first = -1;
        for (int64_t i = 0; i < ref.numel(); ++i) {
          bool refWrites = std::memcmp((const char*)ref.data() + i * eb, (const char*)pre.data() + i * eb, eb) != 0;
          if (!refWrites) continue;
          bool any = false;
          for (int b = 0; b < eb; ++b) any |= writtenBytes[p][(size_t)i * eb + b] != 0;
          if (!any) {
            missing++;
            if (first < 0) first = i;
          }
        }
        if (missing) {
          d.report(DiagKind::CudaEmuCheckFailed, func.params[p].loc,
                   "output `" + func.params[p].name + "`: " + std::to_string(missing) +
                       " element(s) that the reference writes were never written by the kernel (first: flat index " +
                       std::to_string(first) + ") [unwritten-output]");
          ok = false;
        }
      }
    }
    return ok;
  };
  RunSettings cuda = settings;
  // NVIDIA tensor cores multiply float32 gemm operands in tf32.
  cuda.tf32Gemm = copts.tensorCores && copts.language == cuda::GpuLanguage::Cuda;
  return runTarget(module, cuda, diags, std::string(copts.dialect().targetPrefix) + ":" + copts.arch + " (emulated)",
                   runner);
}

}  // namespace tlc::driver
