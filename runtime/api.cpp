// The C API of the runtime: loading (kind detected from the image's magic
// bytes), kernel lookup, checked launches, per-thread error messages and
// introspection. Every entry point catches C++ exceptions and turns them into
// a status: nothing here aborts the host program.
#include <cstring>
#include <new>

#include "compiler/support/file_io.h"
#include "compiler/support/module_image.h"
#include "runtime_internal.h"

namespace tlc::rt {
namespace {

thread_local std::string lastError;

enum class ImageKind { Unknown, CpuSharedObject, Cubin, Ptx, Hsaco };

ImageKind detect(const unsigned char* p, size_t n) {
  if (n >= 20 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') {
    uint16_t machine = p[5] == 1 ? (uint16_t)(p[18] | (p[19] << 8)) : (uint16_t)((p[18] << 8) | p[19]);
    if (machine == 190) return ImageKind::Cubin;  // EM_CUDA
    if (machine == 224) return ImageKind::Hsaco;  // EM_AMDGPU
    return ImageKind::CpuSharedObject;
  }
  std::string head(reinterpret_cast<const char*>(p), std::min<size_t>(n, 4096));
  if (head.find(".version") != std::string::npos && head.find(".target") != std::string::npos) return ImageKind::Ptx;
  return ImageKind::Unknown;
}

bool readFile(const std::string& path, std::string* out) {
  std::string error;
  return readRegularFile(path, out, &error) == ReadStatus::Ok;
}

tlc_status finishLoad(std::unique_ptr<tlc_module> m, tlc_module** out) {
  std::vector<KernelInfo> infos;
  std::string err;
  if (!parseMetadata(m->metadata, &m->target, &infos, &err, &m->fallbackImage)) {
    if (m->backend == TLC_BACKEND_CPU) cpuUnload(m.get());
    else deviceUnload(m.get());
    return fail(TLC_ERROR_INVALID_MODULE, "module " + m->origin + ": " + err);
  }
  for (KernelInfo& ki : infos) {
    auto k = std::make_unique<tlc_kernel>();
    k->module = m.get();
    k->info = std::move(ki);
    m->kernels.push_back(std::move(k));
  }
  if (m->backend == TLC_BACKEND_CPU) {
    if (tlc_status st = cpuResolveKernels(m.get())) {
      cpuUnload(m.get());
      return st;
    }
  }
  *out = m.release();
  clearError();
  return TLC_SUCCESS;
}

tlc_status load(const void* image, size_t size, const char* metadata, const std::string& origin,
                const std::string& path, tlc_module** out) {
  auto m = std::make_unique<tlc_module>();
  m->origin = origin;
  ImageKind kind = detect(static_cast<const unsigned char*>(image), size);
  if (kind == ImageKind::Unknown)
    return fail(TLC_ERROR_INVALID_MODULE, "module " + origin +
                                              " is not a tlc module: expected a CPU shared object (.so), a CUDA .cubin "
                                              "or PTX, or a HIP .hsaco");
  if (kind == ImageKind::CpuSharedObject) {
    m->backend = TLC_BACKEND_CPU;
    // Checked before dlopen, which trusts the file's headers: a truncated or
    // altered library could crash the host program inside the loader.
    std::string why;
    if (!checkCpuModuleImage(image, size, &why))
      return fail(TLC_ERROR_INVALID_MODULE, "module " + origin + " cannot be loaded: " + why);
    if (tlc_status st = cpuLoad(m.get(), image, size)) return st;
    if (metadata) m->metadata = metadata;  // an explicit description wins
  } else {
    m->backend = kind == ImageKind::Hsaco ? TLC_BACKEND_HIP : TLC_BACKEND_CUDA;
    std::string meta;
    if (metadata) {
      meta = metadata;
    } else if (!path.empty()) {
      std::string stem = path.substr(0, path.find_last_of('.') == std::string::npos ? path.size()
                                                                                      : path.find_last_of('.'));
      if (!readFile(path + ".json", &meta) && !readFile(stem + ".json", &meta))
        return fail(TLC_ERROR_INVALID_MODULE, "module " + origin + " has no kernel metadata: expected " + path +
                                                  ".json (written by `tlc build`) beside it");
    } else {
      return fail(TLC_ERROR_INVALID_MODULE,
                  "module " + origin + ": a device image loaded from memory needs its metadata JSON");
    }
    m->metadata = meta;
    // Metadata first, so that a module without it fails before the driver loads.
    std::vector<KernelInfo> probe;
    std::string target, err;
    if (!parseMetadata(m->metadata, &target, &probe, &err))
      return fail(TLC_ERROR_INVALID_MODULE, "module " + origin + ": " + err);
    std::string image2(static_cast<const char*>(image), size);
    if (kind == ImageKind::Ptx) image2.push_back('\0');
    if (tlc_status st = deviceLoad(m.get(), image2.data(), image2.size())) return st;
  }
  return finishLoad(std::move(m), out);
}

template <class F>
tlc_status guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(TLC_ERROR_INTERNAL, "out of host memory");
  } catch (const std::exception& e) {
    return fail(TLC_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(TLC_ERROR_INTERNAL, "internal error");
  }
}

}  // namespace

tlc_status fail(tlc_status status, std::string message) {
  try {
    lastError = std::move(message);
  } catch (...) {
  }
  return status;
}

void clearError() { lastError.clear(); }

}  // namespace tlc::rt

using namespace tlc::rt;

extern "C" {

tlc_status tlcLoadModule(const char* path, tlc_module** module) {
  return guarded([&] {
    if (!path || !module) return fail(TLC_ERROR_INVALID_VALUE, "tlcLoadModule: path and module must not be null");
    *module = nullptr;
    std::string bytes, error;
    if (tlc::readRegularFile(path, &bytes, &error) != tlc::ReadStatus::Ok)
      return fail(TLC_ERROR_FILE, std::string("cannot read module ") + path + ": " + error);
    return load(bytes.data(), bytes.size(), nullptr, path, path, module);
  });
}

tlc_status tlcLoadModuleFromMemory(const void* image, size_t size, const char* metadata_json, tlc_module** module) {
  return guarded([&] {
    if (!image || !size || !module)
      return fail(TLC_ERROR_INVALID_VALUE, "tlcLoadModuleFromMemory: image, size and module must be given");
    *module = nullptr;
    return load(image, size, metadata_json, "<memory>", "", module);
  });
}

tlc_status tlcLoadEmbeddedModule(const tlc_embedded_module* e, tlc_module** module) {
  return guarded([&] {
    if (!e || !module || !e->image || !e->size)
      return fail(TLC_ERROR_INVALID_VALUE, "tlcLoadEmbeddedModule: the embedded module and result must be given");
    static std::mutex mutex;
    static std::map<const tlc_embedded_module*, tlc_module*> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = loaded.find(e);
    if (it != loaded.end()) {
      *module = it->second;
      return TLC_SUCCESS;
    }
    tlc_status st = load(e->image, e->size, e->metadata_json, std::string("`") + (e->name ? e->name : "embedded") + "`",
                         "", module);
    if (st == TLC_SUCCESS) loaded[e] = *module;
    return st;
  });
}

tlc_status tlcUnloadModule(tlc_module* module) {
  return guarded([&] {
    if (!module) return TLC_SUCCESS;
    if (module->backend == TLC_BACKEND_CPU) cpuUnload(module);
    else deviceUnload(module);
    delete module;
    return TLC_SUCCESS;
  });
}

tlc_status tlcGetKernel(tlc_module* module, const char* name, tlc_kernel** kernel) {
  return guarded([&] {
    if (!module || !name || !kernel) return fail(TLC_ERROR_INVALID_VALUE, "tlcGetKernel: module, name and kernel must not be null");
    *kernel = nullptr;
    std::string names;
    for (auto& k : module->kernels) {
      if (k->info.name == name) {
        *kernel = k.get();
        return TLC_SUCCESS;
      }
      names += (names.empty() ? "`" : ", `") + k->info.name + "`";
    }
    return fail(TLC_ERROR_KERNEL_NOT_FOUND, "module " + module->origin + " has no kernel `" + name + "`" +
                                                (names.empty() ? "" : "; it has " + names));
  });
}

tlc_status tlcCheckArguments(tlc_kernel* kernel, const tlc_arg* args, int32_t nargs) {
  return guarded([&] {
    if (!kernel) return fail(TLC_ERROR_INVALID_VALUE, "tlcCheckArguments: the kernel is null");
    CheckedArgs checked;
    tlc_status st = checkArguments(*kernel, args, nargs, kernel->module->backend != TLC_BACKEND_CPU, &checked);
    if (st == TLC_SUCCESS) clearError();
    return st;
  });
}

tlc_status tlcLaunch(tlc_kernel* kernel, const tlc_arg* args, int32_t nargs, void* stream) {
  return guarded([&] {
    if (!kernel) return fail(TLC_ERROR_INVALID_VALUE, "tlcLaunch: the kernel is null");
    bool device = kernel->module->backend != TLC_BACKEND_CPU;
    CheckedArgs checked;
    if (tlc_status st = checkArguments(*kernel, args, nargs, device, &checked)) return st;
    tlc_status st = device ? deviceLaunch(kernel, args, checked, stream) : cpuLaunch(kernel, args, checked);
    if (st == TLC_SUCCESS) clearError();
    return st;
  });
}

int32_t tlcRuntimeAbiVersion(void) { return TLC_RUNTIME_ABI_VERSION; }

const char* tlcGetLastError(void) { return lastError.c_str(); }

const char* tlcStatusName(tlc_status s) {
  switch (s) {
    case TLC_SUCCESS: return "TLC_SUCCESS";
    case TLC_ERROR_INVALID_VALUE: return "TLC_ERROR_INVALID_VALUE";
    case TLC_ERROR_FILE: return "TLC_ERROR_FILE";
    case TLC_ERROR_INVALID_MODULE: return "TLC_ERROR_INVALID_MODULE";
    case TLC_ERROR_BACKEND_UNAVAILABLE: return "TLC_ERROR_BACKEND_UNAVAILABLE";
    case TLC_ERROR_KERNEL_NOT_FOUND: return "TLC_ERROR_KERNEL_NOT_FOUND";
    case TLC_ERROR_ARGUMENT_COUNT: return "TLC_ERROR_ARGUMENT_COUNT";
    case TLC_ERROR_ARGUMENT_KIND: return "TLC_ERROR_ARGUMENT_KIND";
    case TLC_ERROR_DTYPE: return "TLC_ERROR_DTYPE";
    case TLC_ERROR_RANK: return "TLC_ERROR_RANK";
    case TLC_ERROR_SHAPE: return "TLC_ERROR_SHAPE";
    case TLC_ERROR_NULL_POINTER: return "TLC_ERROR_NULL_POINTER";
    case TLC_ERROR_ALIGNMENT: return "TLC_ERROR_ALIGNMENT";
    case TLC_ERROR_DEVICE_MEMORY: return "TLC_ERROR_DEVICE_MEMORY";
    case TLC_ERROR_LAUNCH: return "TLC_ERROR_LAUNCH";
    case TLC_ERROR_INTERNAL: return "TLC_ERROR_INTERNAL";
  }
  return "TLC_ERROR_UNKNOWN";
}

tlc_backend tlcModuleBackend(const tlc_module* m) { return m ? m->backend : TLC_BACKEND_CPU; }
const char* tlcModuleMetadata(const tlc_module* m) { return m ? m->metadata.c_str() : ""; }
const char* tlcModuleTarget(const tlc_module* m) { return m ? m->target.c_str() : ""; }
int32_t tlcModuleNumKernels(const tlc_module* m) { return m ? (int32_t)m->kernels.size() : 0; }
const char* tlcModuleKernelName(const tlc_module* m, int32_t i) {
  return m && i >= 0 && i < (int32_t)m->kernels.size() ? m->kernels[i]->info.name.c_str() : nullptr;
}
int32_t tlcKernelNumParams(const tlc_kernel* k) { return k ? (int32_t)k->info.params.size() : 0; }
const char* tlcKernelParamName(const tlc_kernel* k, int32_t i) {
  return k && i >= 0 && i < (int32_t)k->info.params.size() ? k->info.params[i].name.c_str() : nullptr;
}

tlc_arg tlcTensorArg(void* data, tlc_dtype dtype, int32_t rank, const int64_t* shape) {
  tlc_arg a;
  std::memset(&a, 0, sizeof a);
  a.kind = TLC_ARG_TENSOR;
  a.tensor.data = data;
  a.tensor.dtype = dtype;
  a.tensor.rank = rank;
  for (int32_t i = 0; i < rank && i < TLC_MAX_RANK && shape; ++i) a.tensor.shape[i] = shape[i];
  return a;
}

tlc_arg tlcIntArg(tlc_dtype dtype, int64_t value) {
  tlc_arg a;
  std::memset(&a, 0, sizeof a);
  a.kind = TLC_ARG_SCALAR;
  a.scalar.dtype = dtype;
  a.scalar.value.i = value;
  return a;
}

tlc_arg tlcFloatArg(tlc_dtype dtype, double value) {
  tlc_arg a;
  std::memset(&a, 0, sizeof a);
  a.kind = TLC_ARG_SCALAR;
  a.scalar.dtype = dtype;
  a.scalar.value.f = value;
  return a;
}

const char* tlcDtypeName(tlc_dtype d) {
  static const char* names[] = {"bool",   "int8",    "int16",    "int32",   "int64",   "uint8",       "uint16",     "uint32",
                                "uint64", "float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2"};
  return (int)d >= 0 && d <= TLC_FLOAT8_E5M2 ? names[d] : "invalid";
}

int32_t tlcDtypeSize(tlc_dtype d) {
  switch (d) {
    case TLC_INT16: case TLC_UINT16: case TLC_FLOAT16: case TLC_BFLOAT16: return 2;
    case TLC_INT32: case TLC_UINT32: case TLC_FLOAT32: return 4;
    case TLC_INT64: case TLC_UINT64: case TLC_FLOAT64: return 8;
    default: return 1;
  }
}

}  // extern "C"
