"""Shared by the Python tests: paths from the environment ctest sets, and a
`tlc build` helper.

TLC_COMPILER (the tlc executable), TLC_RUNTIME_LIBRARY (libtlc_runtime.so),
TLC_SOURCE_DIR (the repository) and TLC_TEST_SCRATCH (a directory for built
modules) come from tests/python/register_python_tests.cmake. The package is
imported from the source tree's python/ unless TLC_TEST_INSTALLED is set.
"""
import os
import pathlib
import subprocess
import sys

SOURCE_DIR = pathlib.Path(os.environ["TLC_SOURCE_DIR"])
SCRATCH = pathlib.Path(os.environ["TLC_TEST_SCRATCH"])
TLC = os.environ["TLC_COMPILER"]
SCRATCH.mkdir(parents=True, exist_ok=True)

if not os.environ.get("TLC_TEST_INSTALLED"):
    sys.path.insert(0, str(SOURCE_DIR / "python"))


def build(source, out_name, target="cpu", defines=None):
    """Runs `tlc build` on a file of the repository (or an absolute path) and
    returns the output's path; fails with tlc's diagnostics."""
    src = pathlib.Path(source)
    if not src.is_absolute():
        src = SOURCE_DIR / src
    SCRATCH.mkdir(parents=True, exist_ok=True)
    out = SCRATCH / out_name
    cmd = [TLC, "build", f"--target={target}", str(src), "-o", str(out)]
    for k, v in (defines or {}).items():
        cmd += ["-D", f"{k}={v}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{r.stdout}")
    return out
