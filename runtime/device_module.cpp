// Device modules: CUDA (.cubin / PTX through the driver API, libcuda.so.1)
// and HIP (.hsaco through the HIP module API, libamdhip64.so), both opened
// with dlopen at run time through one table of entry points
// (compiler/backends/gpu_driver_api.h), so that the runtime links neither.
// A launch evaluates the metadata's host lets and grid formulas over the
// bound shape symbols and scalar parameters, packs the device arguments in
// the metadata's order, then launches each device kernel of the function
// in order on the given stream (tensors TMA cannot address where they lie
// first copied into a stream-ordered workspace, cuda::StagedTensor).
#include "compiler/backends/cuda/persistent_grid.h"
#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/gpu_driver_api.h"
#include <cstring>

#include "runtime_internal.h"

namespace tlc::rt {
namespace {

using backend::GpuDriverApi;
using backend::GpuRuntime;

// The library of a module's backend (gpu_driver_api.h): null with *why
// when it is missing or finds no GPU.
const GpuDriverApi* apiFor(const tlc_module* m, std::string* why) {
  return backend::gpuDriverApi(m->backend == TLC_BACKEND_HIP ? GpuRuntime::Hip : GpuRuntime::Cuda, why);
}

// Makes a context current on this thread (CUDA only): the caller's, else the
// one the module was loaded in, else device 0's primary context. HIP has no
// contexts: modules load on, and kernels launch on, the calling thread's
// current device (hipSetDevice; device 0 unless the program chose another).
tlc_status ensureContext(const GpuDriverApi& api, tlc_module* m) {
  if (api.runtime == GpuRuntime::Hip) return TLC_SUCCESS;
  void* ctx = nullptr;
  api.ctxGetCurrent(&ctx);
  if (ctx) {
    if (!m->deviceContext) m->deviceContext = ctx;
    return TLC_SUCCESS;
  }
  if (!m->deviceContext) {
    int dev = 0;
    int rc = api.deviceGet(&dev, 0);
    if (rc == 0) rc = api.primaryCtxRetain(&m->deviceContext, dev);
    if (rc != 0) return fail(TLC_ERROR_BACKEND_UNAVAILABLE, "no CUDA device context: " + api.describe(rc));
  }
  int rc = api.ctxSetCurrent(m->deviceContext);
  if (rc != 0) return fail(TLC_ERROR_BACKEND_UNAVAILABLE, "cannot make the CUDA context current: " + api.describe(rc));
  return TLC_SUCCESS;
}

struct alignas(64) TensorMapBytes {
  unsigned char bytes[128];
};

// Launches the module's staging kernel (cuda::kStageRowsEntry) for each
// staged tensor of `plan`, whose workspace is at `workspace`, on `stream`.
tlc_status stageTensors(const GpuDriverApi& api, tlc_module* m, const cuda::LaunchMaps& plan,
                        backend::DevicePtr workspace, void* stream, const std::string& kernel) {
  if (!m->stageFunction) {
    int rc = api.moduleGetFunction(&m->stageFunction, m->deviceModule, cuda::kStageRowsEntry);
    if (rc != 0)
      return fail(TLC_ERROR_INVALID_MODULE, "module " + m->origin + " has no device function `" +
                                                cuda::kStageRowsEntry + "` (built by an older tlc?): " +
                                                api.describe(rc));
  }
  for (const cuda::StagedTensor& st : plan.staged) {
    cuda::StageLaunch sl = cuda::stageLaunch(st);
    unsigned long long src = st.source, dst = workspace + st.offset;
    long long rows = st.rows, rowBytes = st.rowBytes, pitch = st.pitch;
    int elemBytes = st.elemBytes, rowThreads = sl.rowThreads;
    void* params[] = {&src, &dst, &rows, &rowBytes, &pitch, &elemBytes, &rowThreads};
    int rc = api.launchKernel(m->stageFunction, sl.grid[0], sl.grid[1], sl.grid[2], sl.threads, 1, 1, 0, stream,
                              params, nullptr);
    if (rc != 0)
      return fail(TLC_ERROR_LAUNCH, "staging the tensors of `" + kernel + "` for TMA failed: " + api.describe(rc));
  }
  return TLC_SUCCESS;
}

}  // namespace

tlc_status deviceLoad(tlc_module* m, const void* image, size_t size) {
  std::string why;
  const GpuDriverApi* loaded = apiFor(m, &why);
  if (!loaded) return fail(TLC_ERROR_BACKEND_UNAVAILABLE, "cannot load module " + m->origin + ": " + why);
  const GpuDriverApi& api = *loaded;
  if (tlc_status st = ensureContext(api, m)) return st;
  int rc = api.moduleLoadData(&m->deviceModule, image);
  if (rc != 0)
    return fail(TLC_ERROR_INVALID_MODULE, std::string(api.runtime == GpuRuntime::Hip ? "the HIP runtime" : "the driver") +
                                              " rejected module " + m->origin + ": " + api.describe(rc) +
                                              " (built for another GPU architecture?)");
  return TLC_SUCCESS;
}

tlc_status deviceCheckPointer(tlc_module* m, const void* ptr, std::string* why) {
  std::string unavailable;
  const GpuDriverApi* api = apiFor(m, &unavailable);
  if (api && !api->deviceAccessible(ptr, why)) return TLC_ERROR_DEVICE_MEMORY;
  return TLC_SUCCESS;
}

tlc_status deviceLaunch(tlc_kernel* k, const tlc_arg* args, const CheckedArgs& checked, void* stream) {
  tlc_module* m = k->module;
  std::string why;
  const GpuDriverApi* loaded = apiFor(m, &why);
  if (!loaded) return fail(TLC_ERROR_BACKEND_UNAVAILABLE, why);
  const GpuDriverApi& api = *loaded;
  if (tlc_status st = ensureContext(api, m)) return st;
  const KernelInfo& info = k->info;
  if (info.launches.empty())
    return fail(TLC_ERROR_INVALID_MODULE, "kernel `" + info.name + "` has no device launches in its metadata");
  std::map<std::string, int64_t> env = checked.env;
  std::string err;
  for (const auto& [name, expr] : info.hostLets) {
    auto v = evalRpn(expr, env, &err);
    if (!v) return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "`: cannot compute `" + name + "`: " + err);
    env[name] = *v;
  }
  std::vector<uint64_t> storage(info.deviceArgs.size());
  std::vector<void*> params(info.deviceArgs.size());
  for (size_t i = 0; i < info.deviceArgs.size(); ++i) {
    const DeviceArgInfo& a = info.deviceArgs[i];
    if (a.kind == DeviceArgInfo::Kind::Param) {
      const ParamInfo& p = info.params[a.index];
      if (p.isTensor) {
        storage[i] = (uint64_t)(uintptr_t)args[a.index].tensor.data;
      } else if (tlc_status st = convertScalar(args[a.index].scalar, p.dtype, "argument `" + p.name + "`", &storage[i])) {
        return st;
      }
    } else {
      auto it = env.find(a.name);
      if (it == env.end())
        return fail(TLC_ERROR_INVALID_MODULE, "kernel `" + info.name + "`: device argument `" + a.name + "` is unbound");
      tlc_scalar s{};
      s.dtype = TLC_INT64;
      s.value.i = it->second;
      if (tlc_status st = convertScalar(s, a.dtype, "kernel `" + info.name + "` value `" + a.name + "`", &storage[i]))
        return st;
    }
    params[i] = &storage[i];
  }
  std::lock_guard<std::mutex> lock(m->mutex);
  for (LaunchInfo& l : k->info.launches) {
    // Tensor maps (Hopper TMA) follow the device arguments. A tensor TMA
    // cannot address where it lies is staged into a stream-ordered workspace
    // when its map allows it; otherwise the launch's version without TMA runs.
    // A driver without an encoder one of the maps needs runs the version
    // without TMA, else fails naming the entry point.
    const char* missingEncoder = nullptr;
    for (const TensorMapInfo& t : l.tensorMaps)
      if (t.im2col ? !api.tensorMapEncodeIm2col : !api.tensorMapEncodeTiled)
        missingEncoder = t.im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
    if (missingEncoder && l.fallbackEntry.empty())
      return fail(TLC_ERROR_BACKEND_UNAVAILABLE, "kernel `" + info.name +
                                                     "` copies tensors with TMA, but the CUDA driver lacks " +
                                                     missingEncoder + " (CUDA 12 or newer)");
    auto planMaps = [&](bool canStage) {
      if (missingEncoder) {
        cuda::LaunchMaps none;
        none.fallback = !l.tensorMaps.empty();
        return none;
      }
      return cuda::planLaunchMaps(
          info.name, l.tensorMaps,
          [&](int p) {
            const tlc_tensor& x = args[p].tensor;
            return cuda::LaunchTensor{dtypeNameOf(x.dtype), (uint64_t)(uintptr_t)x.data,
                                      std::vector<int64_t>(x.shape, x.shape + x.rank), info.params[p].name};
          },
          !l.fallbackEntry.empty(), canStage);
    };
    cuda::LaunchMaps plan = planMaps(api.memAllocAsync && api.memFreeAsync);
    // The workspace of staged tensors, freed in stream order after the
    // launch has read it (or on the way out of a failed launch).
    struct FreeAfter {
      const GpuDriverApi& api;
      backend::DevicePtr ptr;
      void* stream;
      ~FreeAfter() {
        if (ptr) api.memFreeAsync(ptr, stream);
      }
    } workspace{api, 0, stream};
    if (plan.error.empty() && plan.workspaceBytes > 0) {
      const uint64_t bytes = plan.workspaceBytes;
      int rc = api.memAllocAsync(&workspace.ptr, bytes, stream);
      if (rc != 0) {
        // No workspace (a device without memory pools, or out of memory):
        // the version without TMA, or the error saying why TMA cannot run.
        workspace.ptr = 0;
        plan = planMaps(false);
        if (!plan.error.empty())
          return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "`: cannot allocate " + std::to_string(bytes) +
                                            " bytes to stage its tensors for TMA (" + api.describe(rc) + "), and " +
                                            plan.error);
      }
    }
    if (!plan.error.empty()) return fail(TLC_ERROR_ALIGNMENT, plan.error);
    const bool useFallback = plan.fallback;
    std::vector<TensorMapBytes> maps(plan.specs.size());
    std::vector<void*> launchParams = params;
    if (workspace.ptr) {
      cuda::placeStagedMaps(&plan, workspace.ptr);
      if (tlc_status st = stageTensors(api, m, plan, workspace.ptr, stream, info.name)) return st;
    }
    for (size_t t = 0; t < plan.specs.size(); ++t) {
      int rc = cuda::encodeTensorMap(api.tensorMapEncodeTiled, api.tensorMapEncodeIm2col, plan.specs[t],
                                     maps[t].bytes);
      if (rc != 0)
        return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "`: " + cuda::tensorMapEncoderName(plan.specs[t]) +
                                          " failed for tensor `" + info.params[l.tensorMaps[t].paramIndex].name +
                                          "`: " + api.describe(rc));
      launchParams.push_back(maps[t].bytes);
    }
    const std::string& entry = useFallback ? l.fallbackEntry : l.entry;
    void*& function = useFallback ? l.fallbackFunction : l.function;
    const int64_t block = useFallback ? l.fallbackBlock : l.block[0];
    const int64_t sharedBytes = useFallback ? l.fallbackSharedBytes : l.sharedBytes;
    int64_t grid[3];
    for (int d = 0; d < 3; ++d) {
      auto v = l.grid[d].valid() ? evalRpn(l.grid[d], env, &err) : std::optional<int64_t>(1);
      if (!v) return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "`: cannot compute the grid: " + err);
      if (*v < 0 || *v > INT32_MAX)
        return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "`: grid dimension " + std::to_string(d) + " is " +
                                          std::to_string(*v) + ", outside the device's range");
      grid[d] = *v;
    }
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) continue;  // empty tensors: nothing to do
    if (l.persistentBlocksPerSM > 0 && !useFallback) {
      // The blocks loop over the grid's tiles: one wave of them (unknown SM count: a block per tile).
      int sms = 0, dev = 0;
      if (api.ctxGetDevice && api.deviceGetAttribute && api.ctxGetDevice(&dev) == 0)
        api.deviceGetAttribute(&sms, /*CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT*/ 16, dev);
      double tiles = (double)grid[0] * (double)grid[1] * (double)grid[2];
      int64_t size = cuda::persistentGridSize((int64_t)std::min(tiles, 4e18), sms, l.persistentBlocksPerSM);
      if (size > INT32_MAX)
        return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "`: " + std::to_string(size) + " blocks, more than a launch allows");
      grid[0] = size;
      grid[1] = grid[2] = 1;
    }
    if (!function) {
      // Fallback entries of a separate image ("fallback_image"): loaded now.
      bool separate = useFallback && !m->fallbackImage.empty();
      if (separate && !m->fallbackModule) {
        int rc = api.moduleLoadData(&m->fallbackModule, m->fallbackImage.data());
        if (rc != 0)
          return fail(TLC_ERROR_INVALID_MODULE, "the driver rejected the fallback image of module " + m->origin +
                                                    ": " + api.describe(rc));
      }
      int rc = api.moduleGetFunction(&function, separate ? m->fallbackModule : m->deviceModule, entry.c_str());
      if (rc != 0)
        return fail(TLC_ERROR_INVALID_MODULE, "module " + m->origin + " has no device function `" + entry + "`: " +
                                                  api.describe(rc));
      if (sharedBytes > 48 * 1024 && api.funcSetAttribute) {
        rc = api.funcSetAttribute(function, /*MAX_DYNAMIC_SHARED_SIZE_BYTES*/ 8, (int)sharedBytes);
        if (rc != 0)
          return fail(TLC_ERROR_LAUNCH, "kernel `" + info.name + "` needs " + std::to_string(sharedBytes) +
                                            " bytes of shared memory: " + api.describe(rc));
      }
    }
    int rc = api.launchKernel(function, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], (unsigned)block,
                              (unsigned)l.block[1], (unsigned)l.block[2], (unsigned)sharedBytes, stream,
                              launchParams.data(), nullptr);
    if (rc != 0) return fail(TLC_ERROR_LAUNCH, "launching `" + entry + "` failed: " + api.describe(rc));
  }
  return TLC_SUCCESS;
}

void deviceUnload(tlc_module* m) {
  if (!m->deviceModule && !m->fallbackModule) return;
  std::string why;
  const GpuDriverApi* api = apiFor(m, &why);
  for (void** module : {&m->deviceModule, &m->fallbackModule}) {
    if (*module && api) api->moduleUnload(*module);
    *module = nullptr;
  }
}

}  // namespace tlc::rt
