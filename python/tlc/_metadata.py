"""Kernel metadata (format of compiler/backends/metadata.h), read into
small classes, and evaluation of its RPN shape expressions."""
import json


class Expr:
    """A dimension written as an expression over shape symbols (RPN)."""

    def __init__(self, rpn, text):
        self.rpn = rpn
        self.text = text or rpn

    def __repr__(self):
        return self.text


class Param:
    def __init__(self, j):
        self.name = j["name"]
        self.is_tensor = j["kind"] == "tensor"
        self.dtype = j["dtype"]
        # "read", "write" (an output the caller may omit), "readwrite", "none";
        # metadata without the field: assume read and write.
        self.access = j.get("access", "readwrite") if self.is_tensor else "read"
        self.shape = []
        names = j.get("shape_names") or []
        self.shape_names = []
        for i, d in enumerate(j.get("shape", [])):
            if isinstance(d, dict):
                d = Expr(d.get("expr") or "", d.get("text"))
            self.shape.append(d)
            self.shape_names.append(names[i] if i < len(names) else None)

    @property
    def is_output(self):
        """Written and never read: may be left out of a call and allocated."""
        return self.is_tensor and self.access == "write"

    @property
    def writes(self):
        return self.is_tensor and self.access in ("write", "readwrite")

    def shape_text(self):
        parts = []
        for d, n in zip(self.shape, self.shape_names):
            parts.append(f"{n}={d}" if n else str(d))
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def __repr__(self):
        if self.is_tensor:
            return f"{self.name}: {self.dtype} tensor {self.shape_text()} ({self.access})"
        return f"{self.name}: {self.dtype} scalar"


class KernelSpec:
    def __init__(self, j):
        self.name = j["name"]
        self.symbol = j.get("symbol", "")
        self.params = [Param(p) for p in j["params"]]
        self.shape_symbols = [s["name"] for s in j.get("shape_symbols", [])]
        self.bindings = {b["name"]: b["value"] for b in j.get("bindings", [])}
        self.threads = j.get("threads", 0)

    @property
    def outputs(self):
        return [p for p in self.params if p.is_output]

    def signature(self):
        return f"{self.name}(" + ", ".join(repr(p) for p in self.params) + ")"


class ModuleSpec:
    def __init__(self, text):
        j = json.loads(text)
        if j.get("format") != "tlc-module-metadata":
            raise ValueError("not tlc kernel metadata")
        self.json = j
        self.target = j.get("target", "")
        self.binary = j.get("binary", "")
        self.tlc_version = j.get("tlc_version", "")
        self.kernels = {k["name"]: KernelSpec(k) for k in j["kernels"]}


class UnboundSymbol(Exception):
    """An expression names a symbol that has no value yet."""

    def __init__(self, name):
        super().__init__(name)
        self.name = name


def _floordiv(a, b):
    return a // b  # Python's // is floor division, as in the tile IR (also on torch SymInts)


def _min(a, b):
    return a if a <= b else b


def _max(a, b):
    return a if a >= b else b


_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "//": _floordiv, "%": lambda a, b: a % b, "min": _min, "max": _max,
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
    "and": lambda a, b: int(bool(a) and bool(b)), "or": lambda a, b: int(bool(a) or bool(b)),
}


def eval_rpn(rpn, env, binary=None):
    """Evaluates an RPN expression; names are looked up in `env`. `binary`
    overrides operators (torch's sym_min/sym_max for symbolic shapes)."""
    ops = dict(_BINARY, **(binary or {}))
    stack = []
    for tok in rpn.split():
        if tok.lstrip("-").isdigit():
            stack.append(int(tok))
        elif tok in ("neg", "not"):
            a = stack.pop()
            stack.append(-a if tok == "neg" else int(not a))
        elif tok == "select":
            c, t, f = stack[-3], stack[-2], stack[-1]
            del stack[-3:]
            stack.append(t if c else f)
        elif tok in ops:
            b, a = stack.pop(), stack.pop()
            stack.append(ops[tok](a, b))
        elif tok in env:
            stack.append(env[tok])
        else:
            raise UnboundSymbol(tok)
    if len(stack) != 1:
        raise ValueError(f"malformed shape expression `{rpn}`")
    return stack[0]


def dim_value(dim, env, binary=None):
    """The size of one dimension given the bound symbols; UnboundSymbol when unknown."""
    if isinstance(dim, int):
        return dim
    if isinstance(dim, str):
        if dim not in env:
            raise UnboundSymbol(dim)
        return env[dim]
    return eval_rpn(dim.rpn, env, binary)


def bind_symbols(spec, shapes, scalars):
    """Binds shape symbols from the shapes of the given tensors, in parameter
    order (the first tensor that uses a symbol binds it, as the runtime does);
    `shapes` maps parameter names to shapes, `scalars` integer scalar values."""
    env = dict(scalars)
    for p in spec.params:
        shape = shapes.get(p.name)
        if shape is None or len(shape) != len(p.shape):
            continue
        for d, size in zip(p.shape, shape):
            if isinstance(d, str) and d not in env:
                env[d] = size
    return env
