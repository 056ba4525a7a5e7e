"""`tlc.compile`: builds a `.tl` file with the `tlc` executable and loads it.

The executable is found at $TLC_COMPILER (a file path), next to this package
(tlc/bin/tlc, tlc/tlc), or on PATH. `tlc build --target=cpu` answers from
tlc's kernel cache when it has built the same module before ($TLC_CACHE_DIR,
TLC_CACHE=0 to disable; docs/host-integration.md).
"""
import os
import pathlib
import shutil
import subprocess
import tempfile

from ._module import load
from .errors import CompileError

COMPILER_ENV = "TLC_COMPILER"


def find_compiler():
    """The path of the `tlc` executable; CompileError when there is none."""
    env = os.environ.get(COMPILER_ENV)
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise CompileError(f"{COMPILER_ENV}={env} is not an executable file")
    here = pathlib.Path(__file__).resolve().parent
    for p in (here / "bin" / "tlc", here / "tlc"):
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    found = shutil.which("tlc")
    if found:
        return found
    raise CompileError(f"cannot find the tlc compiler: set {COMPILER_ENV} to its path or put it on PATH")


def _define_text(value):
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float, str)):
        return str(value)
    # A dtype object (numpy.float16, torch.bfloat16, numpy.dtype('float32')).
    name = getattr(value, "name", None) or getattr(value, "__name__", None) or str(value)
    return str(name).replace("torch.", "")


def _output_name(source, target):
    stem = pathlib.Path(source).name.split(".")[0] or "module"
    if target == "cpu":
        return stem + ".so"
    if target.startswith("hip:"):
        return stem + ".hsaco"
    return stem + ".cubin"


def compile(source, target="cpu", defines=None, options=(), output=None):
    """Builds `source` for `target` ("cpu", "cuda:sm_90a", ...) with the
    compile-time parameters `defines` ({"block_M": 128, "dtype": "float16"})
    and returns the loaded module. `options` are extra `tlc build` arguments
    (["--check-bounds"]). With `output`, the binary (and a device build's
    `.json`) is kept there; otherwise it is loaded and removed. Errors in the
    program raise CompileError with tlc's located diagnostics."""
    exe = find_compiler()
    source = os.fspath(source)
    if not os.path.isfile(source):
        raise CompileError(f"no such source file: {source}")
    tmp = None
    if output is None:
        tmp = tempfile.mkdtemp(prefix="tlc-python-")
        out = os.path.join(tmp, _output_name(source, target))
    else:
        out = os.fspath(output)
    cmd = [exe, "build", f"--target={target}"]
    for name, value in (defines or {}).items():
        cmd += ["-D", f"{name}={_define_text(value)}"]
    cmd += list(options) + [source, "-o", out]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            diagnostics = (r.stderr + r.stdout).strip()
            raise CompileError(f"tlc build failed (exit {r.returncode}) for {source}:\n{diagnostics}",
                               diagnostics=diagnostics, returncode=r.returncode, command=cmd)
        return load(out)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
