#!/usr/bin/env python3
"""The kernel zoo (bench/zoo/) against NumPy references written here.

Each kernel runs on inputs made by NumPy (random, never all zero, at sizes
the kernel's tiles do not divide) through `tlc run --load DIR --save DIR`, on
the reference interpreter and on the CPU backend, and every output is
compared with a NumPy computation of what the kernel's header says it
computes. The interpreter is the oracle of the backends' --check; this test
is the interpreter's own oracle.

    check_zoo.py --tlc PATH/TO/tlc [--targets interp,cpu,cuda:sm_80] [KERNEL...]

A `cuda:ARCH` or `hip:ARCH` target runs in the emulator (`--emulate --check`).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = os.path.join(ROOT, "bench", "zoo")
rng = np.random.default_rng(7)


def bf16(x):
    """Rounds float values to bfloat16 (nearest even), kept as float32."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


class Define(int):
    """A size a case binds at compile time (`-D NAME=VALUE`) instead of at run time (`--dim`)."""


def rand(shape, dtype):
    x = rng.uniform(-1.0, 1.0, size=shape)
    if dtype == "float16":
        return x.astype(np.float16)
    if dtype == "bfloat16":
        return bf16(x)
    return x.astype(np.float32)


def f(x):
    return np.asarray(x, dtype=np.float64)


def gelu_tanh(v):
    return 0.5 * v * (1.0 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))


# Tolerances (absolute, relative) by output dtype.
TOL = {"float16": (2e-3, 1e-2), "bfloat16": (1e-2, 2e-2), "float32": (1e-4, 1e-4), "int32": (0, 0)}


def case_layernorm():
    M, N = 37, 4096
    X, g, b = rand((M, N), "float16"), rand((N,), "float16"), rand((N,), "float16")
    x = f(X)
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    Y = (x - mu) / np.sqrt(var + 1e-5) * f(g) + f(b)
    return {"M": M}, {"X": X, "gamma": g, "beta": b}, {"Y": (Y, "float16")}


def case_rmsnorm_residual():
    M, N = 37, 4096
    X, R, W = rand((M, N), "bfloat16"), rand((M, N), "bfloat16"), rand((N,), "bfloat16")
    h = f(X) + f(R)
    Y = h / np.sqrt((h * h).mean(1, keepdims=True) + 1e-6) * f(W)
    return {"M": M}, {"X": X, "R": R, "W": W}, {"H": (h, "bfloat16"), "Y": (Y, "bfloat16")}


def case_groupnorm():
    B, C, HW, G = 3, 96, 300, 32
    X, g, b = rand((B, C, HW), "float16"), rand((C,), "float16"), rand((C,), "float16")
    x = f(X).reshape(B, G, C // G * HW)
    mu = x.mean(2, keepdims=True)
    var = x.var(2, keepdims=True)
    y = ((x - mu) / np.sqrt(var + 1e-5)).reshape(B, C, HW) * f(g)[None, :, None] + f(b)[None, :, None]
    return {"B": B, "C": Define(C), "HW": Define(HW)}, {"X": X, "gamma": g, "beta": b}, {"Y": (y, "float16")}


def case_transpose():
    A = rand((100, 77), "float16")
    return {"M": 100, "N": 77}, {"A": A}, {"B": (f(A).T, "float16")}


def case_permute_0213():
    X = rand((2, 70, 3, 128), "float16")
    return {"B": 2, "S": 70, "H": 3}, {"X": X}, {"Y": (f(X).transpose(0, 2, 1, 3), "float16")}


def case_permute_3d():
    X = rand((2, 50, 70), "float32")
    return {"B": 2, "M": 50, "N": 70}, {"X": X}, {"Y": (f(X).transpose(0, 2, 1), "float32")}


def case_bias_add_mixed():
    M, N = 50, 300
    X, s, b = rand((M, N), "float16"), rand((N,), "float32"), rand((N,), "float32")
    return {"M": M, "N": N}, {"X": X, "scale": s, "bias": b}, {"Y": (f(X) * f(s) + f(b), "bfloat16")}


def case_silu_mul():
    M, N = 20, 600
    X = rand((M, 2 * N), "float16")
    g, u = f(X[:, :N]), f(X[:, N:])
    return {"M": M, "N": N}, {"X": X}, {"Y": (g / (1 + np.exp(-g)) * u, "float16")}


def case_gelu():
    X = rand((20, 600), "float16")
    return {"M": 20, "N": 600}, {"X": X}, {"Y": (gelu_tanh(f(X)), "float16")}


def case_col_sum():
    X, out0 = rand((100, 300), "float16"), rand((300,), "float32")
    return {"M": 100, "N": 300}, {"X": X, "out": out0}, {"out": (f(out0) + f(X).sum(0), "float32")}


def case_row_max():
    X = rand((10, 3000), "float16")
    return {"M": 10, "N": 3000}, {"X": X}, {"out": (f(X).max(1), "float16")}


def case_argmax():
    X = rand((10, 3000), "float32")
    return {"M": 10, "N": 3000}, {"X": X}, {"out": (np.argmax(X, 1), "int32")}


def case_cumsum():
    X = rand((200, 100), "float32")
    return {"M": 200, "N": 100}, {"X": X}, {"Y": (np.cumsum(f(X), 1), "float32")}


def case_embedding():
    T, V, D = 30, 50, 1024
    ids = rng.integers(-2, V + 2, size=T).astype(np.int32)
    W = rand((V, D), "float16")
    ok = (ids >= 0) & (ids < V)
    Y = np.where(ok[:, None], f(W)[np.clip(ids, 0, V - 1)], 0.0)
    return {"T_": T, "V": V}, {"ids": ids, "W": W}, {"Y": (Y, "float16")}


def case_gather_rows():
    M, R, N = 30, 20, 300
    X = rand((R, N), "float32")
    index = rng.integers(-3, R + 3, size=M).astype(np.int32)
    return {"M": M, "R": R, "N": N}, {"X": X, "index": index}, {"Y": (f(X)[np.clip(index, 0, R - 1)], "float32")}


def case_scatter_add_rows():
    M, R, N = 30, 20, 300
    src, out0 = rand((M, N), "float32"), rand((R, N), "float32")
    index = rng.integers(-3, R + 3, size=M).astype(np.int32)
    out = f(out0).copy()
    np.add.at(out, np.clip(index, 0, R - 1), f(src))
    return {"M": M, "R": R, "N": N}, {"src": src, "index": index, "out": out0}, {"out": (out, "float32")}


GEMM = {"M": 150, "N": 300, "K": 200}


def case_gemm_nt():
    A, B = rand((150, 200), "float16"), rand((300, 200), "float16")
    return GEMM, {"A": A, "B": B}, {"C": (f(A) @ f(B).T, "float16")}


def case_gemm_tn():
    A, B = rand((200, 150), "float16"), rand((200, 300), "float16")
    return GEMM, {"A": A, "B": B}, {"C": (f(A).T @ f(B), "float16")}


def case_gemm_batched():
    A, B = rand((2, 150, 200), "float16"), rand((2, 200, 300), "float16")
    return dict(GEMM, BATCH=2), {"A": A, "B": B}, {"C": (f(A) @ f(B), "float16")}


def case_gemm_bias_gelu():
    A, W, b = rand((150, 200), "float16"), rand((300, 200), "float16"), rand((300,), "float16")
    return GEMM, {"A": A, "W": W, "bias": b}, {"C": (gelu_tanh(f(A) @ f(W).T + f(b)), "float16")}


def case_gemm_splitk():
    A, B, C0 = rand((150, 200), "float16"), rand((200, 300), "float16"), rand((150, 300), "float32")
    return GEMM, {"A": A, "B": B, "C": C0}, {"C": (f(C0) + f(A) @ f(B), "float32")}


def case_gemm_int8():
    A = rng.integers(-128, 128, size=(150, 200)).astype(np.int8)
    B = rng.integers(-128, 128, size=(300, 200)).astype(np.int8)
    return GEMM, {"A": A, "B": B}, {"C": (A.astype(np.int64) @ B.astype(np.int64).T, "int32")}


def case_topk():
    X = rand((150, 64), "float32")
    order = np.argsort(-X, axis=1, kind="stable")[:, :8]
    return ({"M": 150, "N": Define(64)}, {"X": X},
            {"values": (np.take_along_axis(X, order, 1), "float32"), "indices": (order, "int32")})


def case_attention_blocksparse():
    B, H, S, D = 1, 2, 300, 64
    Q, K, V = (rand((B, H, S, D), "float16") for _ in range(3))
    mask = (rng.uniform(size=(B, H, 3, 3)) < 0.6).astype(np.int8)  # 128 x 128 tiles of the scores
    mask[0, 0, 1, :] = 0  # rows 128..255 of head 0 see no key: zero
    keep = np.kron(mask, np.ones((128, 128)))[:, :, :S, :S] != 0
    s = np.where(keep, f(Q) @ np.swapaxes(f(K), 2, 3) / np.sqrt(D), -np.inf)
    top = np.max(s, axis=3, keepdims=True)
    p = np.where(keep, np.exp(s - np.where(np.isfinite(top), top, 0)), 0)
    l = p.sum(axis=3, keepdims=True)
    return {"B": B, "S": S, "H": H}, {"Q": Q, "K": K, "V": V, "Mask": mask}, {"O": (p @ f(V) / np.maximum(l, 1e-30), "float16")}


def case_gemm_blocksparse():
    A, B = rand((150, 200), "float16"), rand((200, 300), "float16")
    mask = (rng.uniform(size=(2, 7)) < 0.5).astype(np.int8)  # 128 x 32 tiles of A
    mask[0, 0], mask[1, 6] = 1, 0
    kept = np.kron(mask, np.ones((128, 32)))[:150, :200]
    return GEMM, {"A": A, "B": B, "Mask": mask}, {"C": (f(A) * kept @ f(B), "float16")}


# name -> (file, kernel or None, case)
CASES = {name[5:]: (name[5:], None, fn) for name, fn in list(globals().items()) if name.startswith("case_")}
CASES["scatter_add_rows"] = ("gather_rows", "scatter_add_rows", case_scatter_add_rows)
CASES["gather_rows"] = ("gather_rows", "gather_rows", case_gather_rows)


def compare(name, got, want, dtype):
    atol, rtol = TOL[dtype]
    if dtype == "bfloat16":
        want = f(bf16(want))
    elif dtype == "float16":
        want = f(np.asarray(want).astype(np.float16))
    if got.shape != want.shape:
        return f"shape {got.shape}, want {want.shape}"
    scale = max(1.0, float(np.abs(want).max()))
    err = np.abs(f(got) - want)
    bad = err > atol * scale + rtol * np.abs(want)
    if bad.any():
        i = np.unravel_index(np.argmax(err - rtol * np.abs(want)), err.shape)
        return f"{int(bad.sum())} of {bad.size} elements differ, e.g. at {i}: got {got[i]}, want {want[i]}"
    return None


def write_inputs(tmp, inputs):
    """Saves `inputs` as TMP/in/<name>.npy (what `tlc run --load` reads); returns that folder."""
    load = os.path.join(tmp, "in")
    os.makedirs(load)
    for k, v in inputs.items():
        np.save(os.path.join(load, k + ".npy"), v)
    return load


def run_tlc(tlc, name, path, target, load, save, args):
    """`tlc run` of `path` on `target` from the .npy files in `load`, saving
    into `save` (a `cuda:ARCH` target in the CUDA emulator with --check);
    the failure's description, or None."""
    cmd = [tlc, "run", path, "--target=" + target, "--load", load, "--save", save] + args
    if target.startswith("cuda:") or target.startswith("hip:"):
        cmd += ["--emulate", "--check"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return f"{name} [{target}]: `{' '.join(cmd)}` failed:\n{p.stdout}{p.stderr}"
    return None


def run_file(tlc, name, path, args, inputs, outputs, targets):
    """Runs the kernel file `path` (with the extra `tlc run` arguments `args`)
    on `inputs` on each target and compares the saved `outputs` with their
    references. A `cuda:ARCH` target runs in the CUDA emulator with --check
    (its own race and bounds checks and the comparison with the
    interpreter) before the NumPy comparison. Returns the failures."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        load = write_inputs(tmp, inputs)
        for target in targets:
            save = os.path.join(tmp, target.replace(":", "_"))
            failure = run_tlc(tlc, name, path, target, load, save, args)
            if failure:
                failures.append(failure)
                continue
            for out, (want, dtype) in outputs.items():
                got = np.load(os.path.join(save, out + ".npy"))
                why = compare(out, got, want, dtype)
                if why:
                    failures.append(f"{name} [{target}]: {out}: {why}")
    return failures


def dim_args(dims):
    return [a for d, v in dims.items() for a in ("-D" if isinstance(v, Define) else "--dim", f"{d}={v}")]


def run_case(tlc, name, targets):
    file, kernel, case = CASES[name]
    dims, inputs, outputs = case()
    args = (["--kernel", kernel] if kernel else []) + dim_args(dims)
    return run_file(tlc, name, os.path.join(ZOO, file + ".tl"), args, inputs, outputs, targets)


def main(cases=None, run=run_case, what="zoo"):
    """The command line over `cases` (name -> case), each run by `run(tlc, name, targets)`."""
    cases = CASES if cases is None else cases
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--targets", default="interp,cpu")
    ap.add_argument("kernels", nargs="*")
    args = ap.parse_args()
    names = args.kernels or sorted(cases)
    targets = args.targets.split(",")
    failures = []
    for name in names:
        if name not in cases:
            print(f"unknown {what} case `{name}` (known: {', '.join(sorted(cases))})", file=sys.stderr)
            return 2
        fs = run(args.tlc, name, targets)
        print(f"{name}: {'FAIL' if fs else 'PASS'} ({', '.join(targets)})", flush=True)
        failures += fs
    for m in failures:
        print(m, file=sys.stderr)
    print(f"{what}: {len(names) - len({m.split(' ')[0] for m in failures})} of {len(names)} cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
