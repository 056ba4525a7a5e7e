/* A stand-in for the HIP runtime (libamdhip64.so) with the entry points tlc
 * calls (compiler/backends/gpu_driver_api.h), for the tests of the HIP
 * loader on machines without an AMD GPU. It runs no kernel: it checks what
 * the real runtime would refuse (an image that is not an AMDGPU code object,
 * a function the image has no symbol for, memory it did not allocate) and
 * records every call, one line each, so that a test can read the sequence:
 *   - in the same process through fakeHipLog();
 *   - from a child process (`tlc run`) in the file $TLC_FAKE_HIP_LOG.
 * Device memory is host memory from malloc, tracked so that copies and
 * pointer attributes can tell it from other memory.
 *   $TLC_FAKE_HIP_DEVICES   number of GPUs (default 1; 0: hipInit fails as on
 *                           a machine without one)
 *   $TLC_FAKE_HIP_ARGS      kernel arguments to record per launch (8 bytes each)
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

enum {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidImage = 200,
  hipErrorNotFound = 500,
  hipErrorLaunchFailure = 719
};

static char logText[1 << 16];
static size_t logLength;
static int launchArgs = -1; /* -1: from $TLC_FAKE_HIP_ARGS */
static int failLaunches;

static void record(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof line, format, args);
  va_end(args);
  size_t n = strlen(line);
  if (logLength + n + 2 < sizeof logText) {
    memcpy(logText + logLength, line, n);
    logLength += n;
    logText[logLength++] = '\n';
    logText[logLength] = '\0';
  }
  const char* path = getenv("TLC_FAKE_HIP_LOG");
  if (path && *path) {
    FILE* f = fopen(path, "a");
    if (f) {
      fprintf(f, "%s\n", line);
      fclose(f);
    }
  }
}

static int deviceCount(void) {
  const char* n = getenv("TLC_FAKE_HIP_DEVICES");
  return n && *n ? atoi(n) : 1;
}

/* Allocations: [base, base + size). */
struct Allocation {
  char* base;
  size_t size;
};
static struct Allocation allocations[1024];

static struct Allocation* findAllocation(uintptr_t p, size_t bytes) {
  for (int i = 0; i < 1024; ++i) {
    struct Allocation* a = &allocations[i];
    if (a->base && p >= (uintptr_t)a->base && p + bytes <= (uintptr_t)a->base + a->size) return a;
  }
  return NULL;
}

/* Modules keep a copy of their image to look function names up in. */
struct Module {
  char* image;
  size_t size;
};
struct Function {
  char name[256];
};

/* Hooks for the tests. */
FAKE_EXPORT const char* fakeHipLog(void) { return logText; }
FAKE_EXPORT void fakeHipReset(void) {
  logLength = 0;
  logText[0] = '\0';
}
FAKE_EXPORT void fakeHipSetLaunchArgs(int count) { launchArgs = count; }
FAKE_EXPORT void fakeHipFailLaunches(int fail) { failLaunches = fail; }

/* The HIP entry points. */
FAKE_EXPORT int hipInit(unsigned flags) {
  record("hipInit %u", flags);
  return deviceCount() > 0 ? hipSuccess : hipErrorNoDevice;
}
FAKE_EXPORT int hipGetDeviceCount(int* count) {
  *count = deviceCount();
  return *count > 0 ? hipSuccess : hipErrorNoDevice;
}
FAKE_EXPORT int hipDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount()) return hipErrorInvalidDevice;
  *device = ordinal;
  return hipSuccess;
}
FAKE_EXPORT int hipDeviceGetName(char* name, int length, int device) {
  snprintf(name, (size_t)length, "fake AMD GPU %d", device);
  return hipSuccess;
}
FAKE_EXPORT int hipDeviceGetAttribute(int* value, int attribute, int device) {
  (void)attribute, (void)device;
  *value = 0;
  return hipSuccess;
}
FAKE_EXPORT int hipSetDevice(int device) {
  record("hipSetDevice %d", device);
  return device >= 0 && device < deviceCount() ? hipSuccess : hipErrorInvalidDevice;
}
FAKE_EXPORT int hipGetDevice(int* device) {
  *device = 0;
  return hipSuccess;
}
FAKE_EXPORT int hipDeviceSynchronize(void) {
  record("hipDeviceSynchronize");
  return hipSuccess;
}
FAKE_EXPORT int hipRuntimeGetVersion(int* version) {
  *version = 50221153; /* ROCm 5.2 */
  return hipSuccess;
}

FAKE_EXPORT int hipMalloc(void** p, size_t bytes) {
  for (int i = 0; i < 1024; ++i) {
    if (allocations[i].base) continue;
    allocations[i].base = malloc(bytes ? bytes : 1);
    if (!allocations[i].base) return hipErrorOutOfMemory;
    allocations[i].size = bytes;
    *p = allocations[i].base;
    record("hipMalloc %zu", bytes);
    return hipSuccess;
  }
  return hipErrorOutOfMemory;
}
FAKE_EXPORT int hipFree(void* p) {
  struct Allocation* a = findAllocation((uintptr_t)p, 0);
  if (!a || a->base != p) return hipErrorInvalidValue;
  free(a->base);
  a->base = NULL;
  record("hipFree");
  return hipSuccess;
}
FAKE_EXPORT int hipMemcpyHtoD(void* dst, const void* src, size_t bytes) {
  if (!findAllocation((uintptr_t)dst, bytes)) return hipErrorInvalidValue;
  memcpy(dst, src, bytes);
  record("hipMemcpyHtoD %zu", bytes);
  return hipSuccess;
}
FAKE_EXPORT int hipMemcpyDtoH(void* dst, const void* src, size_t bytes) {
  if (!findAllocation((uintptr_t)src, bytes)) return hipErrorInvalidValue;
  memcpy(dst, src, bytes);
  record("hipMemcpyDtoH %zu", bytes);
  return hipSuccess;
}
FAKE_EXPORT int hipMemcpyDtoD(void* dst, const void* src, size_t bytes) {
  if (!findAllocation((uintptr_t)dst, bytes) || !findAllocation((uintptr_t)src, bytes)) return hipErrorInvalidValue;
  memmove(dst, src, bytes);
  return hipSuccess;
}
FAKE_EXPORT int hipMemsetD8(void* dst, unsigned char value, size_t bytes) {
  if (!findAllocation((uintptr_t)dst, bytes)) return hipErrorInvalidValue;
  memset(dst, value, bytes);
  return hipSuccess;
}
/* HIP_POINTER_ATTRIBUTE_MEMORY_TYPE (2): ROCm 5's hipMemoryTypeDevice (1) for
 * memory from hipMalloc; anything else is unknown, as plain host memory is. */
FAKE_EXPORT int hipPointerGetAttribute(void* data, int attribute, uintptr_t ptr) {
  if (attribute != 2 || !findAllocation(ptr, 0)) return hipErrorInvalidValue;
  *(unsigned*)data = 1;
  return hipSuccess;
}

FAKE_EXPORT int hipModuleLoadData(void** module, const void* image) {
  const unsigned char* p = (const unsigned char*)image;
  /* An AMDGPU code object: a 64-bit little-endian ELF file of machine
   * EM_AMDGPU (224); e_flags' low byte names the GPU (0x3f gfx90a, 0x4c gfx942). */
  if (!p || memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2 || (p[18] | p[19] << 8) != 224) {
    record("hipModuleLoadData rejected: not an AMDGPU code object");
    return hipErrorInvalidImage;
  }
  uint64_t shoff, size;
  uint16_t shentsize, shnum;
  memcpy(&shoff, p + 40, 8);
  memcpy(&shentsize, p + 58, 2);
  memcpy(&shnum, p + 60, 2);
  size = shoff + (uint64_t)shentsize * shnum; /* the section headers end the file */
  if (size < 64) size = 64;
  uint32_t flags;
  memcpy(&flags, p + 48, 4);
  struct Module* m = malloc(sizeof *m);
  m->image = malloc(size);
  memcpy(m->image, image, size);
  m->size = size;
  *module = m;
  record("hipModuleLoadData machine=%u mach=0x%x bytes=%llu", (unsigned)(p[18] | p[19] << 8), flags & 0xff,
         (unsigned long long)size);
  return hipSuccess;
}
FAKE_EXPORT int hipModuleUnload(void* module) {
  struct Module* m = module;
  free(m->image);
  free(m);
  record("hipModuleUnload");
  return hipSuccess;
}
/* A kernel exists when its name, NUL-terminated, is in the image (as it is
 * in a code object's string table). */
FAKE_EXPORT int hipModuleGetFunction(void** function, void* module, const char* name) {
  struct Module* m = module;
  size_t n = strlen(name) + 1;
  int found = 0;
  for (size_t i = 0; i + n <= m->size && !found; ++i) found = memcmp(m->image + i, name, n) == 0;
  record("hipModuleGetFunction %s%s", name, found ? "" : " (not found)");
  if (!found || n > sizeof(((struct Function*)0)->name)) return hipErrorNotFound;
  struct Function* f = malloc(sizeof *f);
  memcpy(f->name, name, n);
  *function = f;
  return hipSuccess;
}
FAKE_EXPORT int hipModuleLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                      unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  struct Function* f = function;
  char args[512] = "";
  int count = launchArgs >= 0 ? launchArgs : (getenv("TLC_FAKE_HIP_ARGS") ? atoi(getenv("TLC_FAKE_HIP_ARGS")) : 0);
  for (int i = 0; i < count && strlen(args) + 24 < sizeof args; ++i) {
    uint64_t v;
    memcpy(&v, params[i], 8);
    snprintf(args + strlen(args), sizeof args - strlen(args), "%s%llx", i ? "," : "", (unsigned long long)v);
  }
  record("hipModuleLaunchKernel %s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%s extra=%s args=%s", f->name, gx,
         gy, gz, bx, by, bz, shared, stream ? "set" : "null", extra ? "set" : "null", args);
  return failLaunches ? hipErrorLaunchFailure : hipSuccess;
}

FAKE_EXPORT int hipEventCreateWithFlags(void** event, unsigned flags) {
  (void)flags;
  *event = malloc(1);
  return hipSuccess;
}
FAKE_EXPORT int hipEventRecord(void* event, void* stream) {
  (void)event, (void)stream;
  return hipSuccess;
}
FAKE_EXPORT int hipEventSynchronize(void* event) {
  (void)event;
  return hipSuccess;
}
FAKE_EXPORT int hipEventElapsedTime(float* ms, void* start, void* stop) {
  (void)start, (void)stop;
  *ms = 1.0f;
  return hipSuccess;
}

FAKE_EXPORT const char* hipGetErrorString(int error) {
  switch (error) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorInvalidImage: return "hipErrorInvalidImage";
    case hipErrorNotFound: return "hipErrorNotFound";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
  }
  return "hipErrorUnknown";
}
