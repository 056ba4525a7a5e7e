"""The exceptions the package raises.

Every failure of the runtime (a `tlc_status` other than TLC_SUCCESS) becomes
one of these, carrying the runtime's message; argument problems found in
Python (a non-contiguous array, a tensor on the wrong device, a missing
argument) are raised before anything reaches the runtime. Argument errors name
the parameter (`param`) and the kernel (`kernel`); dimensions are numbered
from 0.
"""


class TlcError(Exception):
    """Base class: `status` is the runtime's status name (or None)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = status


class RuntimeLibraryError(TlcError, ImportError):
    """libtlc_runtime cannot be found or speaks another ABI version."""


class LoadError(TlcError, OSError):
    """A module file cannot be read or is not a tlc module."""


class BackendUnavailableError(LoadError):
    """The module needs a driver (CUDA, HIP) this machine does not have."""


class KernelNotFoundError(TlcError, AttributeError, LookupError):
    """The module has no kernel of that name."""


class ArgumentError(TlcError, ValueError):
    """A call's arguments do not match the kernel's signature."""

    def __init__(self, message, status=None, param=None, kernel=None):
        super().__init__(message, status)
        self.param = param
        self.kernel = kernel


class DtypeError(ArgumentError, TypeError):
    """A tensor of the wrong element type, or a value of the wrong kind."""


class ShapeError(ArgumentError):
    """A tensor of the wrong rank or shape."""


class DeviceError(ArgumentError):
    """A tensor in memory the kernel cannot reach (host vs device)."""


class LayoutError(ArgumentError):
    """A tensor that is not dense and row-major (contiguous)."""


class LaunchError(TlcError):
    """The kernel failed while running, or the driver refused the launch."""


class CompileError(TlcError):
    """`tlc build` reported errors: `diagnostics` holds its located messages."""

    def __init__(self, message, diagnostics="", returncode=None, command=None):
        super().__init__(message)
        self.diagnostics = diagnostics
        self.returncode = returncode
        self.command = command


# Runtime status names -> exception classes.
_BY_STATUS = {
    "TLC_ERROR_INVALID_VALUE": ArgumentError,
    "TLC_ERROR_FILE": LoadError,
    "TLC_ERROR_INVALID_MODULE": LoadError,
    "TLC_ERROR_BACKEND_UNAVAILABLE": BackendUnavailableError,
    "TLC_ERROR_KERNEL_NOT_FOUND": KernelNotFoundError,
    "TLC_ERROR_ARGUMENT_COUNT": ArgumentError,
    "TLC_ERROR_ARGUMENT_KIND": DtypeError,
    "TLC_ERROR_DTYPE": DtypeError,
    "TLC_ERROR_RANK": ShapeError,
    "TLC_ERROR_SHAPE": ShapeError,
    "TLC_ERROR_NULL_POINTER": ArgumentError,
    "TLC_ERROR_ALIGNMENT": LayoutError,
    "TLC_ERROR_DEVICE_MEMORY": DeviceError,
    "TLC_ERROR_LAUNCH": LaunchError,
}


def error_for_status(status_name, message, **kw):
    cls = _BY_STATUS.get(status_name, TlcError)
    if issubclass(cls, ArgumentError):
        return cls(message, status_name, **kw)
    return cls(message, status_name)
