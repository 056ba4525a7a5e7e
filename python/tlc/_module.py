"""Loaded modules and callable kernels."""
import ctypes
import os
import sys

from . import _arrays
from ._metadata import ModuleSpec, UnboundSymbol, bind_symbols, dim_value
from ._runtime import ARG_SCALAR, ARG_TENSOR, BACKENDS, DTYPE_CODE, MAX_RANK, Arg, library
from .errors import ArgumentError, DeviceError, DtypeError, KernelNotFoundError, LayoutError, LoadError, ShapeError

_INT_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def load(path):
    """Loads a module built by `tlc build`: a CPU `.so`, or a `.cubin` / PTX /
    `.hsaco` with its `<file>.json` metadata beside it."""
    lib = library()
    handle = ctypes.c_void_p()
    lib.check(lib.tlcLoadModule(os.fsencode(os.fspath(path)), ctypes.byref(handle)))
    return Module(lib, handle, os.fspath(path))


def load_from_memory(image, metadata=None, name="<memory>"):
    """Loads a module from the bytes of a built binary; device images need
    their metadata JSON text (a CPU `.so` carries its own)."""
    lib = library()
    image = bytes(image)
    handle = ctypes.c_void_p()
    meta = None if metadata is None else (metadata if isinstance(metadata, bytes) else metadata.encode())
    lib.check(lib.tlcLoadModuleFromMemory(image, len(image), meta, ctypes.byref(handle)))
    return Module(lib, handle, name)


class Module:
    """A loaded module: `m.gemm(...)` or `m["gemm"](...)` calls a kernel."""

    def __init__(self, lib, handle, origin):
        self._lib = lib
        self._handle = handle
        self.path = origin
        text = lib.tlcModuleMetadata(handle).decode()
        try:
            self.spec = ModuleSpec(text)
        except (ValueError, KeyError) as e:
            lib.tlcUnloadModule(handle)
            self._handle = None
            raise LoadError(f"module {origin}: unreadable kernel metadata ({e})") from None
        self.metadata = self.spec.json
        self.target = lib.tlcModuleTarget(handle).decode()
        self.backend = BACKENDS.get(lib.tlcModuleBackend(handle), "unknown")
        self._kernels = {}

    @property
    def kernel_names(self):
        return list(self.spec.kernels)

    def __getitem__(self, name):
        k = self._kernels.get(name)
        if k is None:
            if self._handle is None:
                raise LoadError(f"module {self.path} has been unloaded")
            if name not in self.spec.kernels:
                names = ", ".join(f"`{n}`" for n in self.spec.kernels)
                raise KernelNotFoundError(f"module {self.path} has no kernel `{name}`; it has {names}",
                                          "TLC_ERROR_KERNEL_NOT_FOUND")
            handle = ctypes.c_void_p()
            self._lib.check(self._lib.tlcGetKernel(self._handle, name.encode(), ctypes.byref(handle)))
            k = self._kernels[name] = Kernel(self, handle, self.spec.kernels[name])
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __contains__(self, name):
        return name in self.spec.kernels

    def __dir__(self):
        return list(super().__dir__()) + [n for n in self.spec.kernels if n.isidentifier()]

    def __repr__(self):
        return f"<tlc.Module {self.path} target={self.target} kernels={self.kernel_names}>"

    def unload(self):
        """Releases the module; its kernels must not be called afterwards."""
        if self._handle is not None:
            self._lib.tlcUnloadModule(self._handle)
            self._handle = None
            self._kernels.clear()

    def __del__(self):
        try:
            self.unload()
        except Exception:
            pass


def _where(spec, p):
    return f"argument `{p.name}` of kernel `{spec.name}`"


class Kernel:
    """One kernel of a module. Call it with one argument per parameter
    (positionally or by name); tensors the kernel only writes may be left out
    and are then allocated and returned."""

    def __init__(self, module, handle, spec):
        self.module = module
        self._handle = handle
        self.spec = spec
        self.name = spec.name
        self.params = spec.params

    def __repr__(self):
        return f"<tlc.Kernel {self.spec.signature()} target={self.module.target}>"

    # Argument binding -------------------------------------------------------

    def _bind(self, args, kwargs):
        spec = self.spec
        if len(args) > len(spec.params):
            raise ArgumentError(f"kernel `{spec.name}` takes {len(spec.params)} arguments "
                                f"({', '.join(p.name for p in spec.params)}) but was given {len(args)}",
                                "TLC_ERROR_ARGUMENT_COUNT", kernel=spec.name)
        values = dict(zip((p.name for p in spec.params), args))
        names = {p.name for p in spec.params}
        for key, value in kwargs.items():
            if key not in names:
                raise ArgumentError(f"kernel `{spec.name}` has no parameter `{key}`; its parameters are "
                                    f"{', '.join(p.name for p in spec.params)}", param=key, kernel=spec.name)
            if key in values:
                raise ArgumentError(f"{_where(spec, next(p for p in spec.params if p.name == key))} is given "
                                    "twice (by position and by name)", param=key, kernel=spec.name)
            values[key] = value
        for p in spec.params:
            if values.get(p.name) is None and not p.is_output:
                outs = ", ".join(q.name for q in spec.outputs) or "none"
                raise ArgumentError(f"{_where(spec, p)} is missing: only outputs (tensors the kernel writes "
                                    f"and never reads: {outs}) may be left out", param=p.name, kernel=spec.name)
        return values

    def _views(self, values):
        spec, backend = self.spec, self.module.backend
        views, device = {}, None
        for p in spec.params:
            x = values.get(p.name)
            if x is None or not p.is_tensor:
                continue
            v = _arrays.describe(x)
            if v is None:
                raise DtypeError(f"{_where(spec, p)}: expected a {p.dtype} tensor of shape {p.shape_text()} "
                                 f"(a numpy array, torch tensor or __dlpack__ object) but got "
                                 f"{type(x).__name__}", param=p.name, kernel=spec.name)
            if v.dtype not in DTYPE_CODE:
                raise DtypeError(f"{_where(spec, p)}: expected dtype {p.dtype} but got {v.dtype}, which "
                                 "tlc kernels do not take", param=p.name, kernel=spec.name)
            self._check_device(p, v, backend)
            if device is not None and v.device != device[1]:
                raise DeviceError(f"{_where(spec, p)} is on {v.device[0]}:{v.device[1]} but `{device[0]}` is on "
                                  f"{device[1][0]}:{device[1][1]}: all tensors of a launch must be on one device",
                                  param=p.name, kernel=spec.name)
            device = device or (p.name, v.device)
            if len(v.shape) > MAX_RANK:
                raise ShapeError(f"{_where(spec, p)}: rank {len(v.shape)} is above the runtime's limit "
                                 f"of {MAX_RANK}", param=p.name, kernel=spec.name)
            if not v.contiguous():
                raise LayoutError(f"{_where(spec, p)}: expected a contiguous (dense row-major) tensor but got "
                                  f"shape {v.shape} with element strides {v.strides}; pass a contiguous copy "
                                  "(numpy.ascontiguousarray(x), x.contiguous())", param=p.name, kernel=spec.name)
            if p.writes and v.readonly:
                raise ArgumentError(f"{_where(spec, p)}: the kernel writes this tensor but the array is "
                                    "read-only", param=p.name, kernel=spec.name)
            views[p.name] = v
        return views, device

    def _check_device(self, p, v, backend):
        spec = self.spec
        kind = v.device[0]
        if backend == "cpu" and kind != "cpu":
            raise DeviceError(f"{_where(spec, p)} is in {kind} device memory but kernel `{spec.name}` runs "
                              f"on the CPU (target {self.module.target}): pass a host (CPU) tensor",
                              param=p.name, kernel=spec.name)
        if backend in ("cuda", "hip") and kind != backend:
            raise DeviceError(f"{_where(spec, p)} is in {kind} memory but kernel `{spec.name}` runs on "
                              f"{self.module.target}: pass a {backend} device tensor (for example a torch "
                              f"tensor on device='cuda')", param=p.name, kernel=spec.name)

    def _allocate(self, values, views):
        """Allocates the omitted outputs from the metadata's shapes."""
        spec = self.spec
        scalars = {p.name: int(values[p.name]) for p in spec.params
                   if not p.is_tensor and p.dtype in _INT_DTYPES and isinstance(values.get(p.name), int)}
        env = bind_symbols(spec, {n: v.shape for n, v in views.items()}, scalars)
        like = next(iter(views.values()), None)
        made = []
        for p in spec.params:
            if values.get(p.name) is not None or not p.is_output:
                continue
            try:
                shape = [int(dim_value(d, env)) for d in p.shape]
            except UnboundSymbol as e:
                raise ShapeError(f"{_where(spec, p)} was left out, but its shape {p.shape_text()} needs `{e.name}`, "
                                 "which no given tensor binds: pass the output", param=p.name,
                                 kernel=spec.name) from None
            out = _arrays.allocate(like, shape, p.dtype) if like is not None else None
            if out is None:
                what = "no tensor argument to take the library and device from" if like is None else \
                    f"{like.library} cannot allocate {p.dtype} on {like.device[0]}" + \
                    (" (install ml_dtypes for numpy bfloat16 / float8)" if like.library == "numpy" else "")
                raise ArgumentError(f"{_where(spec, p)} was left out and cannot be allocated: {what}; pass it",
                                    param=p.name, kernel=spec.name)
            values[p.name] = out
            views[p.name] = _arrays.describe(out)
            made.append(out)
        return made

    # Launching --------------------------------------------------------------

    def _args(self, values, views):
        spec = self.spec
        argv = (Arg * max(len(spec.params), 1))()
        for i, p in enumerate(spec.params):
            a = argv[i]
            if p.is_tensor:
                v = views[p.name]
                a.kind = ARG_TENSOR
                a.tensor.data = v.data or None
                a.tensor.dtype = DTYPE_CODE[v.dtype]
                a.tensor.rank = len(v.shape)
                for d, s in enumerate(v.shape):
                    a.tensor.shape[d] = s
                continue
            x = values[p.name]
            if _arrays.is_tensor_like(x) and _arrays.describe(x).shape != ():
                raise DtypeError(f"{_where(spec, p)}: expected a {p.dtype} scalar but got a tensor",
                                 param=p.name, kernel=spec.name)
            if hasattr(x, "item") and not isinstance(x, (int, float, bool)):
                x = x.item()  # a numpy scalar or a 0-d tensor
            a.kind = ARG_SCALAR
            if isinstance(x, bool):
                a.scalar.dtype, a.scalar.value.i = DTYPE_CODE["bool"], int(x)
            elif isinstance(x, int):
                if x >= 2 ** 63:
                    a.scalar.dtype, a.scalar.value.u = DTYPE_CODE["uint64"], x
                else:
                    a.scalar.dtype, a.scalar.value.i = DTYPE_CODE["int64"], x
            elif isinstance(x, float):
                a.scalar.dtype, a.scalar.value.f = DTYPE_CODE["float64"], x
            else:
                raise DtypeError(f"{_where(spec, p)}: expected a {p.dtype} scalar (a Python number) but got "
                                 f"{type(x).__name__}", param=p.name, kernel=spec.name)
        return argv

    def _stream(self, views, device):
        """Torch's current stream on the tensors' device for device kernels (else NULL)."""
        if self.module.backend == "cpu" or device is None:
            return None, None
        torch = sys.modules.get("torch")
        if torch is not None and any(v.library == "torch" for v in views.values()):
            index = device[1][1]
            return torch.cuda.current_stream(index).cuda_stream, torch.cuda.device(index)
        return None, None

    def __call__(self, *args, **kwargs):
        if self.module._handle is None:
            raise LoadError(f"module {self.module.path} has been unloaded")
        values = self._bind(args, kwargs)
        views, device = self._views(values)
        made = self._allocate(values, views)
        argv = self._args(values, views)
        stream, context = self._stream(views, device)
        lib = self.module._lib
        if context is not None:
            with context:
                status = lib.tlcLaunch(self._handle, argv, len(self.spec.params), stream)
        else:
            status = lib.tlcLaunch(self._handle, argv, len(self.spec.params), stream)
        if status != 0:
            message = lib.last_error()
            param = next((p.name for p in self.spec.params if message.startswith(f"argument `{p.name}`")), None)
            lib.check(status, param=param, kernel=self.spec.name)
        del views  # the arguments stay alive until the launch returned
        if not made:
            return None
        return made[0] if len(made) == 1 else tuple(made)
