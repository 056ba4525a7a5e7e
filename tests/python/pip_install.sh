#!/usr/bin/env bash
# `pip install ./python` into a fresh virtual environment (with the system's
# site packages, for numpy; no network: no index, no build isolation), then a
# kernel called from outside the source tree through the installed package.
# Usage: pip_install.sh PYTHON SOURCE_DIR WORK_DIR   (TLC_COMPILER and
# TLC_RUNTIME_LIBRARY in the environment)
set -euo pipefail
python=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
# pip builds in the tree it is given: build a copy, not the source tree.
cp -r "$src/python" "$work/package"
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-build-isolation --disable-pip-version-check \
  "$work/package"
cd "$work"
"$work/venv/bin/python" - "$src" <<'PY'
import pathlib, sys
import numpy as np
import tlc
src = pathlib.Path(sys.argv[1])
where = pathlib.Path(tlc.__file__).resolve()
venv = pathlib.Path(sys.prefix).resolve()
assert "site-packages" in where.parts and venv in where.parents, f"tlc imported from {where}, not {venv}"
m = tlc.compile(src / "examples/row_reduce/row_sum.tl", defines={"block_M": 8, "block_N": 16})
x = np.random.default_rng(1).uniform(0.5, 1.5, (19, 37)).astype(np.float32)
np.testing.assert_allclose(m.row_sum(x), x.astype(np.float64).sum(1), rtol=1e-5)
print(f"pip install: tlc {tlc.__version__} from {where.parent}, runtime {tlc.runtime_library_path()}: ok")
PY
