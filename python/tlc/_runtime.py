"""ctypes binding of libtlc_runtime (runtime/include/tlc/runtime.h).

The library is found, in order, at $TLC_RUNTIME_LIBRARY (a file path), next
to this package (tlc/libtlc_runtime.so or tlc/lib/libtlc_runtime.so), and on
the dynamic loader's path (LD_LIBRARY_PATH, the system directories). It is
opened once, on first use, and must report the ABI version this package was
written for (tlcRuntimeAbiVersion); any other version is a
RuntimeLibraryError.
"""
import ctypes
import os
import pathlib
import threading

from .errors import RuntimeLibraryError, error_for_status

# The TLC_RUNTIME_ABI_VERSION this package speaks (runtime/include/tlc/runtime.h).
ABI_VERSION = 1
MAX_RANK = 8
LIBRARY_ENV = "TLC_RUNTIME_LIBRARY"

# tlc_dtype, in the header's order.
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2")
DTYPE_CODE = {name: i for i, name in enumerate(DTYPES)}
DTYPE_SIZE = {"bool": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2,
              "uint32": 4, "uint64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
              "float8_e4m3": 1, "float8_e5m2": 1}

ARG_TENSOR, ARG_SCALAR = 0, 1
BACKENDS = {0: "cpu", 1: "cuda", 2: "hip"}


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK)]


class ScalarValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double)]


class Scalar(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("value", ScalarValue)]


class Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tensor", Tensor), ("scalar", Scalar)]


_P = ctypes.c_void_p
_SIGNATURES = {
    "tlcRuntimeAbiVersion": (ctypes.c_int32, []),
    "tlcLoadModule": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tlcLoadModuleFromMemory": (ctypes.c_int, [_P, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tlcUnloadModule": (ctypes.c_int, [_P]),
    "tlcGetKernel": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tlcLaunch": (ctypes.c_int, [_P, ctypes.POINTER(Arg), ctypes.c_int32, _P]),
    "tlcCheckArguments": (ctypes.c_int, [_P, ctypes.POINTER(Arg), ctypes.c_int32]),
    "tlcGetLastError": (ctypes.c_char_p, []),
    "tlcStatusName": (ctypes.c_char_p, [ctypes.c_int]),
    "tlcModuleBackend": (ctypes.c_int, [_P]),
    "tlcModuleMetadata": (ctypes.c_char_p, [_P]),
    "tlcModuleTarget": (ctypes.c_char_p, [_P]),
}

_lock = threading.Lock()
_library = None


def _candidates():
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return [env], True
    here = pathlib.Path(__file__).resolve().parent
    found = [str(p) for p in (here / "libtlc_runtime.so", here / "lib" / "libtlc_runtime.so") if p.is_file()]
    return found + ["libtlc_runtime.so"], False


def _open():
    paths, from_env = _candidates()
    errors = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            if from_env:
                break
            continue
        return lib, path
    raise RuntimeLibraryError(
        "cannot load the tlc runtime library (libtlc_runtime.so): " + "; ".join(errors) +
        f". Set {LIBRARY_ENV} to its path (it is built as <build>/runtime/libtlc_runtime.so and "
        "installed as <prefix>/lib/libtlc_runtime.so), or add its directory to LD_LIBRARY_PATH")


class Library:
    """The opened runtime: its functions, with their C signatures declared."""

    def __init__(self, lib, path):
        self.path = path
        self.lib = lib
        if not hasattr(lib, "tlcRuntimeAbiVersion"):
            raise RuntimeLibraryError(
                f"the tlc runtime {path} predates ABI versioning (no tlcRuntimeAbiVersion); this package "
                f"needs runtime ABI version {ABI_VERSION}: rebuild tlc or install the matching package")
        lib.tlcRuntimeAbiVersion.restype = ctypes.c_int32
        lib.tlcRuntimeAbiVersion.argtypes = []
        version = lib.tlcRuntimeAbiVersion()
        if version != ABI_VERSION:
            raise RuntimeLibraryError(
                f"the tlc runtime {path} has ABI version {version} but this package (tlc for Python) needs "
                f"ABI version {ABI_VERSION}: install the package built with that runtime, or point "
                f"{LIBRARY_ENV} at a matching libtlc_runtime.so")
        self.abi_version = version
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)

    def last_error(self):
        msg = self.tlcGetLastError()
        return msg.decode("utf-8", "replace") if msg else ""

    def status_name(self, status):
        return self.tlcStatusName(status).decode()

    def check(self, status, **kw):
        """Raises the exception of a failed status with the runtime's message."""
        if status != 0:
            raise error_for_status(self.status_name(status), self.last_error(), **kw)


def library():
    """The runtime library, opened and checked on first use."""
    global _library
    with _lock:
        if _library is None:
            _library = Library(*_open())
        return _library
