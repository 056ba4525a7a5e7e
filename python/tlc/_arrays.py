"""Tensor arguments from numpy arrays, torch tensors and `__dlpack__` objects.

`describe(x)` reads what a launch needs (data pointer, tlc dtype name, shape,
element strides, device, read-only) without copying or converting: 16-bit
floats (float16, bfloat16) pass as their raw bits. numpy and torch are used
only when the caller passes their objects (neither is imported here); any
other object with `__dlpack__` is read through its DLPack capsule.
"""
import ctypes
import sys

# Dtype names of the array libraries that differ from tlc's.
_ALIASES = {"float8_e4m3fn": "float8_e4m3", "bool_": "bool"}


class TensorView:
    """What a launch needs to know about one tensor argument."""

    __slots__ = ("data", "dtype", "shape", "strides", "device", "readonly", "library", "keep", "obj")

    def __init__(self, data, dtype, shape, strides, device, readonly, library, keep, obj):
        self.data = data          # int address (0: null)
        self.dtype = dtype        # tlc dtype name, or the library's own name when tlc has none
        self.shape = tuple(int(s) for s in shape)
        self.strides = None if strides is None else tuple(int(s) for s in strides)  # in elements
        self.device = device      # ("cpu", 0), ("cuda", 1), ("hip", 0), ...
        self.readonly = readonly
        self.library = library    # "numpy", "torch", "dlpack"
        self.keep = keep          # objects that must outlive the launch
        self.obj = obj

    def contiguous(self):
        if self.strides is None:
            return True
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def _dtype_name(name):
    return _ALIASES.get(name, name)


def _torch():
    return sys.modules.get("torch")


def _numpy():
    return sys.modules.get("numpy")


def is_tensor_like(x):
    t, np = _torch(), _numpy()
    if t is not None and isinstance(x, t.Tensor):
        return True
    if np is not None and isinstance(x, np.ndarray):
        return True
    return hasattr(x, "__dlpack__")


def _from_torch(x):
    device = x.device
    kind = device.type
    if kind == "cuda" and getattr(_torch().version, "hip", None):
        kind = "hip"  # ROCm builds of torch call their devices "cuda"
    return TensorView(x.data_ptr(), _dtype_name(str(x.dtype).replace("torch.", "")), x.shape, x.stride(),
                      (kind, device.index if device.index is not None else 0), False, "torch", [x], x)


def _from_numpy(x):
    item = x.itemsize
    strides = tuple(s // item if s % item == 0 else -1 for s in x.strides)
    return TensorView(x.ctypes.data, _dtype_name(x.dtype.name), x.shape, strides, ("cpu", 0),
                      not x.flags.writeable, "numpy", [x], x)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


# DLPack device types and dtype codes (dlpack.h).
_DL_DEVICES = {1: "cpu", 2: "cuda", 3: "cpu", 10: "hip", 13: "cuda"}  # CPU, CUDA, CUDA host, ROCm, managed
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(x):
    device_type, device_id = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    kind = _DL_DEVICES.get(int(device_type), f"dlpack-device-{int(device_type)}")
    # Device data is produced for the legacy default stream (1), where the launch runs.
    capsule = x.__dlpack__(stream=1) if kind in ("cuda", "hip") else x.__dlpack__()
    # The capsule keeps the producer's tensor alive; its destructor releases it.
    t = _DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
    code = _DL_CODES.get(t.dtype.code)
    if code is None or t.dtype.lanes != 1:
        dtype = f"dlpack(code={t.dtype.code}, bits={t.dtype.bits}, lanes={t.dtype.lanes})"
    elif code == "bool":
        dtype = "bool"
    elif code == "bfloat":
        dtype = "bfloat16" if t.dtype.bits == 16 else f"bfloat{t.dtype.bits}"
    else:
        dtype = f"{code}{t.dtype.bits}"
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    data = (t.data or 0) + t.byte_offset
    return TensorView(data, dtype, shape, strides, (kind, int(device_id)), False, "dlpack", [capsule, x], x)


def describe(x):
    """A TensorView of `x`, or None when `x` is not a tensor."""
    t, np = _torch(), _numpy()
    if t is not None and isinstance(x, t.Tensor):
        return _from_torch(x)
    if np is not None and isinstance(x, np.ndarray):
        return _from_numpy(x)
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x)
    return None


def _numpy_dtype(np, name):
    if name in ("bfloat16", "float8_e4m3", "float8_e5m2"):
        try:
            import ml_dtypes
        except ImportError:
            return None
        return getattr(ml_dtypes, {"float8_e4m3": "float8_e4m3fn"}.get(name, name))
    return np.dtype("bool" if name == "bool" else name)


def allocate(like, shape, dtype):
    """A new tensor of `shape` and tlc dtype `dtype`, of the same library and
    on the same device as the TensorView `like`; None when that library cannot
    hold the dtype (numpy without ml_dtypes for bfloat16)."""
    if like.library == "torch":
        torch = _torch()
        tdtype = getattr(torch, {"float8_e4m3": "float8_e4m3fn"}.get(dtype, dtype), None)
        if tdtype is None:
            return None
        return torch.empty(shape, dtype=tdtype, device=like.obj.device)
    np = _numpy()
    if np is None or like.device[0] != "cpu":
        return None
    npdtype = _numpy_dtype(np, dtype)
    return None if npdtype is None else np.empty(shape, dtype=npdtype)
