/* The tlc runtime: load kernels built by `tlc build` and launch them from C
 * or C++ host code.
 *
 * A module is a built binary plus its kernel metadata (JSON written by tlc):
 *   - a CPU shared object (.so) exporting `tlc_module_metadata` and ending
 *     with tlc's integrity trailer (SHA-256 of the file), verified with the
 *     ELF headers before the library is opened: a truncated or altered .so is
 *     TLC_ERROR_INVALID_MODULE, never a crash in the dynamic loader;
 *   - a CUDA .cubin (or PTX) with its metadata in `<file>.json` beside it;
 *   - a HIP .hsaco with `<file>.json` beside it.
 * The kind is detected from the file's contents. The CUDA driver
 * (libcuda.so.1) and the HIP runtime (libamdhip64.so) are opened at run time:
 * the runtime links neither, and reports a clear error when they are absent.
 *
 * Every launch checks its arguments against the kernel's signature: count,
 * tensor or scalar, dtype, rank, shape (symbolic dimensions must be bound
 * consistently across parameters), null data pointers and alignment. No
 * function aborts the program: each returns a status, and
 * tlcGetLastError() gives the message of the last failure on the calling
 * thread.
 *
 * Thread safety: modules and kernels may be used from several threads at
 * once; error messages are per thread.
 *
 * This header is C99 and C++ compatible.
 */
#ifndef TLC_RUNTIME_H
#define TLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; the API is exported. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define TLC_RUNTIME_ABI_VERSION 1
#define TLC_MAX_RANK 8

typedef enum tlc_status {
  TLC_SUCCESS = 0,
  TLC_ERROR_INVALID_VALUE = 1,      /* a null handle or malformed API argument */
  TLC_ERROR_FILE = 2,               /* a module file cannot be read */
  TLC_ERROR_INVALID_MODULE = 3,     /* not a tlc module, or its metadata is missing or malformed */
  TLC_ERROR_BACKEND_UNAVAILABLE = 4,/* the CUDA driver / HIP runtime is not installed */
  TLC_ERROR_KERNEL_NOT_FOUND = 5,
  TLC_ERROR_ARGUMENT_COUNT = 6,
  TLC_ERROR_ARGUMENT_KIND = 7,      /* a tensor where a scalar is expected, or the reverse */
  TLC_ERROR_DTYPE = 8,
  TLC_ERROR_RANK = 9,
  TLC_ERROR_SHAPE = 10,
  TLC_ERROR_NULL_POINTER = 11,
  TLC_ERROR_ALIGNMENT = 12,
  TLC_ERROR_DEVICE_MEMORY = 13,     /* a host pointer given to a device kernel */
  TLC_ERROR_LAUNCH = 14,            /* the driver refused or failed the launch */
  TLC_ERROR_INTERNAL = 15
} tlc_status;

/* Element types, in the tile language's spelling order. */
typedef enum tlc_dtype {
  TLC_BOOL = 0,
  TLC_INT8,
  TLC_INT16,
  TLC_INT32,
  TLC_INT64,
  TLC_UINT8,
  TLC_UINT16,
  TLC_UINT32,
  TLC_UINT64,
  TLC_FLOAT16,
  TLC_BFLOAT16,
  TLC_FLOAT32,
  TLC_FLOAT64,
  TLC_FLOAT8_E4M3,
  TLC_FLOAT8_E5M2
} tlc_dtype;

/* Storage of the 16- and 8-bit float types (raw bits). */
typedef uint16_t tlc_float16;
typedef uint16_t tlc_bfloat16;
typedef uint8_t tlc_float8_e4m3;
typedef uint8_t tlc_float8_e5m2;

typedef enum tlc_backend { TLC_BACKEND_CPU = 0, TLC_BACKEND_CUDA = 1, TLC_BACKEND_HIP = 2 } tlc_backend;

/* A dense, row-major tensor: host memory for CPU kernels, device memory for
 * CUDA/HIP kernels. */
typedef struct tlc_tensor {
  void* data;
  tlc_dtype dtype;
  int32_t rank;
  int64_t shape[TLC_MAX_RANK];
} tlc_tensor;

typedef enum tlc_arg_kind { TLC_ARG_TENSOR = 0, TLC_ARG_SCALAR = 1 } tlc_arg_kind;

/* A scalar argument. Integer and bool values are read from `i` (or `u` for
 * unsigned dtypes), floats from `f`; the value is converted to the
 * parameter's dtype (integers are range-checked). */
typedef struct tlc_scalar {
  tlc_dtype dtype;
  union {
    int64_t i;
    uint64_t u;
    double f;
  } value;
} tlc_scalar;

typedef struct tlc_arg {
  tlc_arg_kind kind;
  tlc_tensor tensor; /* kind == TLC_ARG_TENSOR */
  tlc_scalar scalar; /* kind == TLC_ARG_SCALAR */
} tlc_arg;

typedef struct tlc_module tlc_module;
typedef struct tlc_kernel tlc_kernel;

/* Loads a module from a file. On success *module is set; release it with
 * tlcUnloadModule. Only regular files of at most 1 GiB are read: anything
 * else (a directory, a device, a FIFO) is TLC_ERROR_FILE at once. */
tlc_status tlcLoadModule(const char* path, tlc_module** module);

/* Loads a module from an image in memory (the bytes of a .so, .cubin, PTX or
 * .hsaco). `metadata_json` may be NULL for a CPU shared object (its metadata
 * is read from the image). The image is copied; the caller keeps ownership. */
tlc_status tlcLoadModuleFromMemory(const void* image, size_t size, const char* metadata_json, tlc_module** module);

/* An image compiled into the program (see `tlc build --embed`). */
typedef struct tlc_embedded_module {
  const unsigned char* image;
  size_t size;
  const char* metadata_json;
  const char* name; /* for messages */
} tlc_embedded_module;

/* Loads an embedded module once per process and returns the shared handle
 * (thread-safe; later calls return the same module; never unload it). */
tlc_status tlcLoadEmbeddedModule(const tlc_embedded_module* embedded, tlc_module** module);

/* Releases a module; its kernels become invalid. NULL is accepted. */
tlc_status tlcUnloadModule(tlc_module* module);

/* Looks up a kernel by its name in the .tl source. The kernel lives as long as
 * its module. */
tlc_status tlcGetKernel(tlc_module* module, const char* name, tlc_kernel** kernel);

/* Launches a kernel. `args` holds one entry per parameter, in order.
 * `stream` is a CUstream / hipStream_t for device kernels (NULL: the default
 * stream; device launches are asynchronous) and is ignored on the CPU, where
 * the call returns when the kernel has finished. */
tlc_status tlcLaunch(tlc_kernel* kernel, const tlc_arg* args, int32_t nargs, void* stream);

/* Checks the arguments exactly as tlcLaunch does, without launching. */
tlc_status tlcCheckArguments(tlc_kernel* kernel, const tlc_arg* args, int32_t nargs);

/* TLC_RUNTIME_ABI_VERSION of the library itself: a program (or a binding
 * such as the Python package) compares it with the version it was written
 * for before making any other call. */
int32_t tlcRuntimeAbiVersion(void);

/* The message of the last failure on this thread ("" when none). Valid until
 * the next runtime call on the thread. */
const char* tlcGetLastError(void);
/* The name of a status ("TLC_ERROR_SHAPE"). */
const char* tlcStatusName(tlc_status status);

/* Introspection. Strings live as long as the module. */
tlc_backend tlcModuleBackend(const tlc_module* module);
const char* tlcModuleMetadata(const tlc_module* module); /* the JSON */
const char* tlcModuleTarget(const tlc_module* module);   /* "cpu", "cuda:sm_90", ... */
int32_t tlcModuleNumKernels(const tlc_module* module);
const char* tlcModuleKernelName(const tlc_module* module, int32_t index);
int32_t tlcKernelNumParams(const tlc_kernel* kernel);
const char* tlcKernelParamName(const tlc_kernel* kernel, int32_t index);

/* Helpers to fill arguments. */
tlc_arg tlcTensorArg(void* data, tlc_dtype dtype, int32_t rank, const int64_t* shape);
tlc_arg tlcIntArg(tlc_dtype dtype, int64_t value);
tlc_arg tlcFloatArg(tlc_dtype dtype, double value);

const char* tlcDtypeName(tlc_dtype dtype);
/* Storage size of one element in bytes. */
int32_t tlcDtypeSize(tlc_dtype dtype);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* TLC_RUNTIME_H */
