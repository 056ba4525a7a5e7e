"""tlc for Python: load kernels built by tlc and call them on numpy arrays,
torch tensors (CPU or CUDA) and any `__dlpack__` object.

    import tlc
    m = tlc.load("gemm.so")                 # or gemm.cubin (+ gemm.cubin.json)
    C = m.gemm(A, B)                        # C omitted: allocated and returned
    m["gemm"](A, B, C)                      # or passed
    m = tlc.compile("gemm.tl", target="cpu", defines={"block_M": 64})

The calls go through libtlc_runtime's C API (ctypes, no compiled extension),
which checks every argument against the kernel's metadata. See docs/python.md.
"""
from ._compile import COMPILER_ENV, compile, find_compiler
from ._module import Kernel, Module, load, load_from_memory
from ._runtime import ABI_VERSION, LIBRARY_ENV, library
from .errors import (ArgumentError, BackendUnavailableError, CompileError, DeviceError, DtypeError,
                     KernelNotFoundError, LaunchError, LayoutError, LoadError, RuntimeLibraryError, ShapeError,
                     TlcError)

# The package's major version is the runtime ABI version it speaks.
__version__ = f"{ABI_VERSION}.0.0"


def runtime_library_path():
    """The path of the libtlc_runtime this process uses (opening it if needed)."""
    return library().path


__all__ = [
    "ABI_VERSION", "COMPILER_ENV", "LIBRARY_ENV", "Kernel", "Module", "compile", "find_compiler", "load",
    "load_from_memory", "runtime_library_path", "ArgumentError", "BackendUnavailableError", "CompileError",
    "DeviceError", "DtypeError", "KernelNotFoundError", "LaunchError", "LayoutError", "LoadError",
    "RuntimeLibraryError", "ShapeError", "TlcError",
]
