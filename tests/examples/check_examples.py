#!/usr/bin/env python3
"""The low-bit, fp8 and convolution examples against NumPy references written here.

Each example (examples/dequantize_gemm/, examples/gemm_fp8/,
examples/convolution/), and tests/examples/packed_bits.tl (the bit-level
builtins on every byte), runs on inputs made here: random, never all zero, the
4-bit weights packed two per byte by this script, at sizes the example's
tiles do not divide. It runs through `tlc run --load DIR --save DIR` on each
target, and every output is compared with a NumPy computation of what the
example's header says it computes, in float64 from the unpacked values.

Targets: `interp`, `cpu`, and `cuda:sm_80` / `cuda:sm_90a`, which run in the
CUDA emulator with `--check` (the emulator's race, bounds and barrier checks
and a comparison with the interpreter) before the NumPy comparison.

    check_examples.py --tlc PATH/TO/tlc [--targets interp,cpu] [CASE...]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "zoo"))
from check_zoo import dim_args, f, main, rand, rng, run_file  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pack_nibbles(q):
    """(N, K) values 0..15 -> (N, K // 2) uint8, element k in the low nibble when k is even."""
    q = np.asarray(q, dtype=np.uint8)
    return (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)


def fp4_values():
    """The value of each float4 e2m1 code 0..15 (sign, 2 exponent bits of bias 1, 1 mantissa bit)."""
    out = []
    for c in range(16):
        e, m = (c >> 1) & 3, c & 1
        mag = 0.5 * m if e == 0 else 2.0 ** (e - 1) * (1 + 0.5 * m)
        out.append(-mag if c & 8 else mag)
    return np.array(out)


def e4m3_values():
    """The finite values of float8 e4m3 (the fn variant: no infinity, NaN at 0x7f / 0xff)."""
    out = []
    for c in range(256):
        if c & 0x7F == 0x7F:
            continue
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        mag = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        out.append(-mag if s else mag)
    return np.array(out)


def rand_e4m3(shape, limit=4.0):
    """Random e4m3 values of magnitude at most `limit`, as float32 (how --load takes float8)."""
    v = e4m3_values()
    v = v[np.abs(v) <= limit]
    return rng.choice(v, size=shape).astype(np.float32)


def case_w4a16(M=37, N=150, K=200, group=64, block_M=None):
    A = rand((M, K), "float16")
    q = rng.integers(0, 16, size=(N, K))
    G = -(-K // group)
    S = rng.uniform(0.01, 0.05, size=(N, G)).astype(np.float16)
    Z = rng.uniform(6.0, 9.0, size=(N, G)).astype(np.float16)
    g = np.arange(K) // group
    W = (q - f(Z)[:, g]) * f(S)[:, g]
    defines = {"group": group}
    if block_M:
        defines["block_M"] = block_M
    return ("examples/dequantize_gemm/w4a16_gemm.tl", defines, {"M": M, "N": N, "K": K},
            {"A": A, "B": pack_nibbles(q), "Scales": S, "Zeros": Z}, {"C": (f(A) @ W.T, "float16")})


def case_w4a16_decode():
    return case_w4a16(M=1, N=130, K=264, group=128, block_M=16)


def case_fp4():
    M, N, K, group = 37, 150, 200, 32
    A = rand((M, K), "float16")
    codes = rng.integers(0, 16, size=(N, K))
    G = -(-K // group)
    E = rng.integers(120, 131, size=(N, G)).astype(np.uint8)
    W = fp4_values()[codes] * 2.0 ** (E.astype(np.float64) - 127)[:, np.arange(K) // group]
    return ("examples/dequantize_gemm/fp4_gemm.tl", {}, {"M": M, "N": N, "K": K},
            {"A": A, "B": pack_nibbles(codes), "Scales": E}, {"C": (f(A) @ W.T, "float16")})


def case_fp8(tiles=None):
    M, N, K = 70, 150, 200
    A, B = rand_e4m3((M, K)), rand_e4m3((N, K))
    sa, sb = np.array([0.037], np.float32), np.array([0.21], np.float32)
    C = f(A) @ f(B).T * f(sa[0]) * f(sb[0])
    return ("examples/gemm_fp8/gemm_fp8.tl", tiles or {}, {"M": M, "N": N, "K": K},
            {"A": A, "B": B, "scale_a": sa, "scale_b": sb}, {"C": (C, "float16")})


def case_fp8_small_tiles():
    return case_fp8({"block_M": 64, "block_N": 64, "threads": 128})


def case_fp8_blockscale(tiles=None):
    M, N, K = 70, 200, 300
    A, B = rand_e4m3((M, K)), rand_e4m3((N, K))
    KB, NB = -(-K // 128), -(-N // 128)
    As = rng.uniform(0.01, 0.1, size=(M, KB)).astype(np.float32)
    Bs = rng.uniform(0.01, 0.1, size=(NB, KB)).astype(np.float32)
    C = np.zeros((M, N))
    for kb in range(KB):
        ks = slice(128 * kb, 128 * kb + 128)
        part = f(A[:, ks]) @ f(B[:, ks]).T
        C += part * f(As[:, kb])[:, None] * f(Bs[np.arange(N) // 128, kb])[None, :]
    return ("examples/gemm_fp8/gemm_fp8_blockscale.tl", tiles or {}, {"M": M, "N": N, "K": K},
            {"A": A, "B": B, "A_scale": As, "B_scale": Bs}, {"C": (C, "bfloat16")})


def case_fp8_blockscale_k64():
    return case_fp8_blockscale({"block_M": 64, "block_N": 64, "block_K": 64, "threads": 128})


def conv_case(N, H, W, C, F, KH, KW, S, P, D, dynamic=False, **tiles):
    X = rand((N, H, W, C), "float16")
    Wt = rand((KH, KW, C, F), "float16")
    OH = (H + 2 * P - D * (KH - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (KW - 1) - 1) // S + 1
    Xp = np.zeros((N, H + 2 * P, W + 2 * P, C))
    Xp[:, P:P + H, P:P + W, :] = f(X)
    out = np.zeros((N, OH, OW, F))
    for kh in range(KH):
        for kw in range(KW):
            win = Xp[:, kh * D:kh * D + S * (OH - 1) + 1:S, kw * D:kw * D + S * (OW - 1) + 1:S, :]
            out += np.einsum("nhwc,cf->nhwf", win, f(Wt[kh, kw]))
    shape = {"N": N, "H": H, "W": W, "C": C, "F": F}
    defines = {"KH": KH, "KW": KW, "S": S, "P": P, "D": D, **tiles}
    if not dynamic:
        defines.update(shape)
    return ("examples/convolution/conv2d_nhwc.tl", defines, shape if dynamic else {},
            {"X": X, "Wt": Wt.reshape(KH * KW * C, F)}, {"Out": (out.reshape(N * OH * OW, F), "float16")})


def case_conv3x3():
    return conv_case(2, 9, 11, 24, 40, 3, 3, 1, 1, 1)


def case_conv3x3_runtime_shape():
    return conv_case(3, 8, 6, 16, 20, 3, 3, 1, 1, 1, dynamic=True)


def case_conv3x3_stride2_dilation2():
    return conv_case(1, 13, 10, 20, 24, 3, 3, 2, 2, 2, block_M=64, block_N=32, threads=128)


def case_conv1x1_stride2():
    return conv_case(2, 7, 9, 40, 36, 1, 1, 2, 0, 1, block_M=64, block_N=32, threads=128)


def case_packed_bits():
    M = 300
    P = (np.arange(M) % 256).astype(np.uint8)
    # 32-bit words whose float32 reading is finite (exponent below all ones).
    W = rng.integers(0, 2 ** 32, size=M, dtype=np.uint64).astype(np.uint32) & np.uint32(0xBFFFFFFF)
    H = rng.integers(0, 2 ** 16, size=M).astype(np.uint16) & np.uint16(0xBFFF)
    LUT = rand((16,), "float16")
    nib = lambda w, n: (w.astype(np.uint64)[:, None] >> (4 * np.arange(n, dtype=np.uint64))) & 15
    p4, w4 = nib(P, 2).astype(np.int64), nib(W, 8).astype(np.int64)
    signed = lambda q: np.where(q >= 8, q - 16, q)
    fp4 = fp4_values()
    e4m3 = {c: v for c, v in zip([c for c in range(256) if c & 0x7F != 0x7F], e4m3_values())}
    outputs = {
        "U16": (p4, "float16"), "I16": (signed(p4), "bfloat16"), "F16": (fp4[p4], "float16"),
        "FB": (fp4[p4], "bfloat16"), "LT": (f(LUT)[p4], "float16"), "FF": (fp4[w4], "float32"), "IW": (signed(w4), "int32"),
        "UF": (w4, "float32"), "IF": (signed(w4), "float32"),
        "RH": (H.view(np.float16).astype(np.float64), "float16"), "RU": (H ^ np.uint16(0x8001), "int32"),
        "RF": (W.view(np.float32).astype(np.float64), "float32"),
        "R8": (np.array([e4m3[int(c) & 0xF7] for c in P]), "float32"),
        "BW": (((W >> 3) & np.uint32(0xFF00FF)) ^ (W << np.uint32(5)) | ~(W >> np.uint32(29)), "int32"),
        "SH": (W.view(np.int32) >> 7, "int32"), "CF": (np.full(M, 8.5), "float32"),
    }
    return "tests/examples/packed_bits.tl", {}, {"M": M}, {"P": P, "W": W, "H": H, "LUT": LUT}, outputs


CASES = {name[5:]: fn for name, fn in list(globals().items()) if name.startswith("case_")}


def run_case(tlc, name, targets):
    file, defines, dims, inputs, outputs = CASES[name]()
    args = [a for d, v in defines.items() for a in ("-D", f"{d}={v}")] + dim_args(dims)
    return run_file(tlc, name, os.path.join(ROOT, file), args, inputs, outputs, targets)


if __name__ == "__main__":
    sys.exit(main(CASES, run_case, "examples"))
