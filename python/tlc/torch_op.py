"""A tlc kernel as a torch custom operator (`torch.library`), usable inside
`torch.compile`.

    from tlc.torch_op import register_op
    gemm = register_op(m.gemm, "mylib::gemm")
    C = gemm(A, B)                          # an op: torch.ops.mylib.gemm(A, B)
    torch.compile(lambda a, b: gemm(a, b) * 2)(A, B)

The operator takes the kernel's parameters without its outputs (the tensors
the kernel writes and never reads), in parameter order, and returns the
outputs: one tensor, or a tuple of them. Tensors the kernel reads and writes
are mutated arguments. Its fake (meta) implementation computes the outputs'
shapes from the metadata: constant dimensions, shape symbols bound by the
inputs' sizes (symbolic under torch.compile), and expressions over them.
Needs torch 2.4 or newer (torch.library.custom_op).
"""
import keyword

from ._metadata import UnboundSymbol, bind_symbols, dim_value
from .errors import ShapeError

_SCALAR_SCHEMA = {"bool": "bool", "float16": "float", "bfloat16": "float", "float32": "float",
                  "float64": "float", "float8_e4m3": "float", "float8_e5m2": "float"}
_TORCH_DTYPE = {"float8_e4m3": "float8_e4m3fn"}
_registered = {}


def _schema_name(name, i, taken):
    ok = name.isidentifier() and not keyword.iskeyword(name) and name not in ("self", "out") and \
        not name.startswith("_")
    n = name if ok else f"arg{i}"
    while n in taken:
        n += "_"
    taken.add(n)
    return n


def _schema(spec):
    """The op's schema and the schema names of its mutated arguments."""
    inputs, taken, alias, mutated = [], set(), 0, []
    for i, p in enumerate(spec.params):
        if p.is_output:
            continue
        n = _schema_name(p.name, i, taken)
        if p.is_tensor and p.writes:
            inputs.append(f"Tensor(a{alias}!) {n}")
            mutated.append(n)
            alias += 1
        elif p.is_tensor:
            inputs.append(f"Tensor {n}")
        else:
            inputs.append(f"{_SCALAR_SCHEMA.get(p.dtype, 'int')} {n}")
    outs = spec.outputs
    ret = "()" if not outs else "Tensor" if len(outs) == 1 else "(" + ", ".join("Tensor" for _ in outs) + ")"
    return "(" + ", ".join(inputs) + ") -> " + ret, mutated


def register_op(kernel, qualname=None):
    """Registers `kernel` (a tlc.Kernel) as the custom op `qualname`
    ("namespace::name", default "tlc::<kernel name>") and returns it. The
    same qualname registered again returns the first registration."""
    import torch

    spec = kernel.spec
    qualname = qualname or f"tlc::{spec.name}"
    if qualname in _registered:
        return _registered[qualname]
    inputs = [p for p in spec.params if not p.is_output]
    outputs = spec.outputs
    device_type = "cpu" if kernel.module.backend == "cpu" else "cuda"
    schema, mutated = _schema(spec)

    def call(*args):
        result = kernel(**{p.name: a for p, a in zip(inputs, args)})
        if not outputs:
            return None
        return result

    def fake(*args):
        given = {p.name: a for p, a in zip(inputs, args)}
        shapes = {n: tuple(a.shape) for n, a in given.items() if isinstance(a, torch.Tensor)}
        scalars = {n: a for n, a in given.items() if isinstance(a, int) and not isinstance(a, bool)}
        env = bind_symbols(spec, shapes, scalars)
        like = next((a for a in given.values() if isinstance(a, torch.Tensor)), None)
        device = like.device if like is not None else torch.device(device_type)
        made = []
        for p in outputs:
            try:
                shape = [dim_value(d, env, {"min": torch.sym_min, "max": torch.sym_max}) for d in p.shape]
            except UnboundSymbol as e:
                raise ShapeError(f"op {qualname}: the shape {p.shape_text()} of output `{p.name}` needs "
                                 f"`{e.name}`, which no input binds", param=p.name, kernel=spec.name) from None
            dtype = getattr(torch, _TORCH_DTYPE.get(p.dtype, p.dtype))
            made.append(torch.empty(shape, dtype=dtype, device=device))
        if not made:
            return None
        return made[0] if len(made) == 1 else tuple(made)

    op = torch.library.custom_op(qualname, call, mutates_args=tuple(mutated), device_types=device_type,
                                 schema=schema)
    op.register_fake(fake)
    _registered[qualname] = op
    return op
