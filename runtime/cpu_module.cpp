// CPU modules: shared objects built by `tlc build --target=cpu`, opened with
// dlopen from a memfd holding the image checked by checkCpuModuleImage
// (compiler/support/module_image.h). The metadata is the
// exported char array `tlc_module_metadata`; kernel `f` is the exported
//   void tlc_f(void* const* args, const int64_t* shape_vars)
// (compiler/backends/cpu/cpu_backend.h): args[i] is a tensor's data pointer
// or a pointer to a scalar's value; shape_vars in the metadata's order.
// A module built with bounds checks (or with block-local buffers on the heap)
// also exports tlc_module_last_failure: a launch that failed that way
// returns TLC_ERROR_LAUNCH with the kernel's report.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "compiler/support/module_image.h"
#include "cpu/tlc_cpu_runtime.h"
#include "runtime_internal.h"

namespace tlc::rt {

using CpuKernelFn = void (*)(void* const*, const int64_t*);

namespace {

std::mutex imageFilesMutex;
std::map<std::string, int> imageFiles;  // by the image's integrity trailer (its SHA-256 and size)

// The memfd holding `image`: one per distinct image, open for the life of the
// process. A library opened with RTLD_NODELETE stays mapped after dlclose,
// and the loader recognizes a loaded library by its path and file, so a
// closed memfd whose number came back for another image would hand back the
// old library; the same image loaded twice shares one library, as one path did.
int imageFile(const void* image, size_t size, bool* fresh, std::string* error) {
  const char* p = static_cast<const char*>(image);
  std::string key(p + size - kModuleTrailerBytes, kModuleTrailerBytes);
  std::lock_guard<std::mutex> lock(imageFilesMutex);
  *fresh = false;
  if (auto it = imageFiles.find(key); it != imageFiles.end()) return it->second;
  int fd = memfd_create("tlc-module", MFD_CLOEXEC);
  if (fd < 0) {
    *error = std::string("cannot create an in-memory file for the module: ") + std::strerror(errno);
    return -1;
  }
  size_t left = size;
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      *error = std::string("cannot write the in-memory module: ") + std::strerror(errno);
      ::close(fd);
      return -1;
    }
    p += w;
    left -= (size_t)w;
  }
  imageFiles[key] = fd;
  *fresh = true;
  return fd;
}

void forgetImageFile(int fd) {
  std::lock_guard<std::mutex> lock(imageFilesMutex);
  for (auto it = imageFiles.begin(); it != imageFiles.end(); ++it)
    if (it->second == fd) {
      imageFiles.erase(it);
      ::close(fd);
      return;
    }
}

}  // namespace

tlc_status cpuLoad(tlc_module* m, const void* image, size_t size) {
  // Always from the checked bytes (api.cpp), never from the path again: the
  // file could change between the check and dlopen.
  std::string error;
  bool fresh = false;
  int fd = imageFile(image, size, &fresh, &error);
  if (fd < 0) return fail(TLC_ERROR_FILE, error);
  std::string openPath = "/proc/self/fd/" + std::to_string(fd);
  // RTLD_NODELETE: the kernel's thread pool (runtime/cpu) keeps worker
  // threads that run the library's code, so its code must never be unmapped.
  m->dl = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!m->dl) {
    const char* e = dlerror();
    if (fresh) forgetImageFile(fd);  // nothing was mapped from it
    return fail(TLC_ERROR_INVALID_MODULE, "module " + m->origin + " cannot be opened: " + (e ? e : "dlopen failed"));
  }
  dlerror();
  auto* meta = static_cast<const char*>(dlsym(m->dl, "tlc_module_metadata"));
  if (!meta) {
    cpuUnload(m);
    return fail(TLC_ERROR_INVALID_MODULE, "module " + m->origin +
                                              " is a shared object without `tlc_module_metadata`: it was not built "
                                              "by `tlc build --target=cpu`, or by an older tlc");
  }
  m->metadata = meta;
  m->cpuFailure = dlsym(m->dl, "tlc_module_last_failure");
  return TLC_SUCCESS;
}

tlc_status cpuResolveKernels(tlc_module* m) {
  for (auto& k : m->kernels) {
    std::string sym = k->info.symbol.empty() ? "tlc_" + k->info.name : k->info.symbol;
    k->cpuEntry = dlsym(m->dl, sym.c_str());
    if (!k->cpuEntry)
      return fail(TLC_ERROR_INVALID_MODULE, "module " + m->origin + " describes kernel `" + k->info.name +
                                                "` but does not export its entry `" + sym + "`");
  }
  return TLC_SUCCESS;
}

tlc_status cpuLaunch(tlc_kernel* k, const tlc_arg* args, const CheckedArgs& checked) {
  size_t n = k->info.params.size();
  std::vector<void*> ptrs(n);
  std::vector<uint64_t> scalars(n);
  for (size_t i = 0; i < n; ++i) {
    if (k->info.params[i].isTensor) {
      ptrs[i] = args[i].tensor.data;
    } else {
      if (tlc_status st = convertScalar(args[i].scalar, k->info.params[i].dtype, "argument `" + k->info.params[i].name + "`",
                                        &scalars[i]))
        return st;
      ptrs[i] = &scalars[i];
    }
  }
  auto fn = reinterpret_cast<CpuKernelFn>(k->cpuEntry);
  fn(ptrs.data(), checked.shapeVars.empty() ? nullptr : checked.shapeVars.data());
  if (k->module->cpuFailure) {
    using FailureFn = const tlc_cpu_report* (*)();
    if (const tlc_cpu_report* r = reinterpret_cast<FailureFn>(k->module->cpuFailure)()) {
      std::string where = r->file && r->file[0] ? std::string(r->file) + ":" + std::to_string(r->line) + ":" +
                                                      std::to_string(r->column) + ": "
                                                : "";
      return fail(TLC_ERROR_LAUNCH, "kernel `" + k->info.name + "`: " + where + r->message + " (" + r->detail + ")");
    }
  }
  return TLC_SUCCESS;
}

void cpuUnload(tlc_module* m) {
  if (m->dl) dlclose(m->dl);
  m->dl = nullptr;
}

}  // namespace tlc::rt
