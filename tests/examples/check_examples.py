#!/usr/bin/env python3
"""The low-bit, fp8, convolution and MLA decode examples against NumPy references written here.

Each example (examples/dequantize_gemm/, examples/gemm_fp8/,
examples/convolution/, examples/deepseek_mla/), and
tests/examples/packed_bits.tl (the bit-level builtins on every byte), runs on
inputs made here: random, never all zero, the 4-bit weights packed two per
byte by this script, at sizes the example's tiles do not divide. It runs
through `tlc run --load DIR --save DIR` on each target, and every output is
compared with a NumPy computation of what the example's header says it
computes, in float64 from the unpacked values. A case that names several
kernels (the MLA decode's split kernel and its combine) runs them one after
the other, each loading what the one before saved.

Targets: `interp`, `cpu`, and `cuda:sm_80` / `cuda:sm_90a` / `hip:gfx90a` /
`hip:gfx942`, which run in the emulator with `--check` (the emulator's race, bounds and barrier checks
and a comparison with the interpreter) before the NumPy comparison.

    check_examples.py --tlc PATH/TO/tlc [--targets interp,cpu] [CASE...]
"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "zoo"))
from check_zoo import compare, dim_args, f, main, rand, rng, run_file, run_tlc, write_inputs  # noqa: E402

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


def case_w4a16_split(M=3, N=150, K=1000, group=64, split=3):
    """The split-K decode kernel on the W4A16 gemm's inputs and reference; K = 1000 gives
    8 tiles of 128, split 3 + 3 + 2, the last one partial. Part (the workspace) is random
    on entry: every element the sum reads is written first."""
    file, defines, dims, inputs, outputs = case_w4a16(M=M, N=N, K=K, group=group)
    inputs["Part"] = rand((split, M, N), "float32")
    return ("examples/dequantize_gemm/w4a16_decode.tl", {"group": group, "split": split}, dims, inputs, outputs)


def case_w4a16_split_m1():
    # One row, more splits than some runs have tiles (5 tiles of 128 over 4 splits: 2, 2, 1, 0).
    return case_w4a16_split(M=1, N=130, K=600, group=128, split=4)


def case_w4a16_gemv(M=1, N=150, K=200, group=64, block_M=None):
    """The decode GEMV on the same inputs and reference as the W4A16 gemm."""
    file, defines, dims, inputs, outputs = case_w4a16(M=M, N=N, K=K, group=group, block_M=block_M)
    return ("examples/dequantize_gemm/w4a16_gemv.tl", defines, dims, inputs, outputs)


def case_w4a16_gemv_m5():
    return case_w4a16_gemv(M=5, N=130, K=264, group=128)


def case_w4a16_gemv_m16():
    return case_w4a16_gemv(M=16, N=150, K=200, group=64)


def case_w4a16_gemv_m5_block_m2():
    # Rows over several blocks of the grid (block_M = 2 < M), the last one partial.
    return case_w4a16_gemv(M=5, N=150, K=200, group=64, block_M=2)


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


def case_conv3x3_m128_one_warpgroup():
    # One consumer warpgroup owning two 16-row slices per warp: on sm_90a the
    # gathered A tile is stored in the wgmmas' chunk order.
    return conv_case(2, 9, 11, 24, 40, 3, 3, 1, 1, 1, block_M=128, threads=128, stages=3)


def case_conv3x3_runtime_shape():
    return conv_case(3, 8, 6, 16, 20, 3, 3, 1, 1, 1, dynamic=True)


def case_conv3x3_stride2_dilation2():
    return conv_case(1, 13, 10, 20, 24, 3, 3, 2, 2, 2, block_M=64, block_N=32, threads=128)


def case_conv1x1_stride2():
    return conv_case(2, 7, 9, 40, 36, 1, 1, 2, 0, 1, block_M=64, block_N=32, threads=128)


# C a multiple of block_K: on sm_90a the im2col tile is one TMA load in
# im2col mode per stage (each tile of 64 pixels runs past the end of an
# image row, of an image, and of the last image).
def case_conv3x3_tma():
    return conv_case(2, 9, 11, 64, 40, 3, 3, 1, 1, 1)


def case_conv3x3_tma_m128_one_warpgroup():
    # 16-pixel loads, one per chunk of two 16-row slices per warp.
    return conv_case(2, 9, 11, 64, 40, 3, 3, 1, 1, 1, block_M=128, threads=128, stages=3)


def case_conv_tma_stride2_dilation2_pad3():
    # A 3x2 filter: padding above what it needs, taps past the image's far side.
    return conv_case(2, 13, 10, 32, 24, 3, 2, 2, 3, 2, block_M=64, block_N=32, block_K=32, threads=128)


def case_conv1x1_tma_stride2():
    return conv_case(2, 7, 9, 128, 36, 1, 1, 2, 0, 1, block_M=64, block_N=32, threads=128)


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


def mla_reference(Q, Q_pe, KV, K_pe, sm_scale, num_split, block_N):
    """MLA decode as examples/deepseek_mla/mla_decode.tl's header states it:
    O = softmax(sm_scale * [Q, Q_pe] [KV, K_pe]^T) KV per batch and head (the
    head's KV head g = h // (h_q // h_kv)), zeros for no keys at all, and
    each split's log-sum-exp over its keys (-inf for a split without keys),
    the splits taking runs of ceildiv(tiles, num_split) tiles of block_N keys
    (pages of page_size keys for mla_decode_paged.tl)."""
    batch, h_q, _ = Q.shape
    seqlen, h_kv = KV.shape[1], KV.shape[2]
    g = np.arange(h_q) // (h_q // h_kv)
    q = np.concatenate([f(Q), f(Q_pe)], axis=-1)
    k = np.concatenate([f(KV), f(K_pe)], axis=-1)[:, :, g, :]      # (batch, seqlen, h_q, dv + dpe)
    s = np.einsum("bhd,bjhd->bhj", q, k) * float(sm_scale)
    if seqlen == 0:  # no keys: zeros
        O = np.zeros(Q.shape)
    else:
        p = np.exp(s - s.max(-1, keepdims=True))
        O = np.einsum("bhj,bjhd->bhd", p / p.sum(-1, keepdims=True), f(KV)[:, :, g, :])
    tiles = -(-seqlen // block_N)
    per_split = -(-tiles // num_split)
    lse = np.full((batch, h_q, num_split), -np.inf)
    for sp in range(num_split):
        lo, hi = sp * per_split * block_N, min((sp + 1) * per_split * block_N, seqlen)
        if lo < hi:
            m = s[:, :, lo:hi].max(-1)
            lse[:, :, sp] = m + np.log(np.exp(s[:, :, lo:hi] - m[..., None]).sum(-1))
    return O, lse


def mla_case(batch, h_q, h_kv, seqlen, sm_scale, **tiles):
    dv, dpe = 512, 64
    Q, Q_pe = rand((batch, h_q, dv), "float16"), rand((batch, h_q, dpe), "float16")
    KV, K_pe = rand((batch, seqlen, h_kv, dv), "float16"), rand((batch, seqlen, h_kv, dpe), "float16")
    scale = np.array([sm_scale], np.float32)
    O, lse = mla_reference(Q, Q_pe, KV, K_pe, scale[0], tiles.get("num_split", 4), tiles.get("block_N", 32))
    return ("examples/deepseek_mla/mla_decode.tl", dict(tiles, h_q=h_q, h_kv=h_kv),
            {"batch": batch, "seqlen_kv": seqlen},
            {"Q": Q, "Q_pe": Q_pe, "KV": KV, "K_pe": K_pe, "sm_scale": scale},
            {"Glse": (lse, "float32"), "O": (O, "float16")},
            [("mla_decode", ["batch", "seqlen_kv"]), ("mla_decode_combine", ["batch"])])


def case_mla_decode():
    # The default tiles (64 heads, 32 keys (64 on sm_90a; 16 heads on 128 threads
    # on HIP), 4 splits, 256 threads); 1000 keys.
    return mla_case(2, 64, 1, 1000, 576 ** -0.5)


def case_mla_decode_short():
    # 129 keys: 5 tiles of 32 over 4 splits, the last split without keys; a
    # scale that makes the softmax peaked.
    return mla_case(1, 16, 1, 129, 0.3, block_H=16, threads=32)


def case_mla_decode_keys64():
    # 64-key tiles: on sm_90a each warpgroup's wgmmas take 32 of the score
    # tile's columns and 256 of the output's (the Hopper tiles of
    # bench/RESULTS.md); sm_80's 163 KB of shared memory do not hold them.
    return mla_case(2, 64, 1, 1000, 576 ** -0.5, block_N=64)


def case_mla_decode_one_key():
    # One key (every split but the first empty), two KV heads of 16 query heads each.
    return mla_case(2, 32, 2, 1, 0.1, block_H=16, block_N=64, num_split=3, threads=128)


def mla_paged_case(lens, h_q, h_kv, sm_scale, page_size=64, **tiles):
    """mla_decode_paged.tl on sequences of the lengths `lens`, their pages
    scattered over a cache with spare pages; unused table entries name pages
    that do not exist."""
    dv, dpe = 512, 64
    batch = len(lens)
    pages = [-(-n // page_size) for n in lens]
    max_pages, num_pages = max(pages), sum(pages) + 3
    order = rng.permutation(num_pages)
    table = np.full((batch, max_pages), num_pages + 1000, np.int32)
    at = 0
    for b, n in enumerate(pages):
        table[b, :n] = order[at:at + n]
        at += n
    Q, Q_pe = rand((batch, h_q, dv), "float16"), rand((batch, h_q, dpe), "float16")
    KV, K_pe = rand((num_pages, page_size, h_kv, dv), "float16"), rand((num_pages, page_size, h_kv, dpe), "float16")
    scale = np.array([sm_scale], np.float32)
    num_split = tiles.get("num_split", 4)
    O = np.zeros((batch, h_q, dv))
    lse = np.zeros((batch, h_q, num_split))
    for b, n in enumerate(lens):
        rows = np.arange(n)
        page, row = table[b, rows // page_size], rows % page_size
        o, l = mla_reference(Q[b:b + 1], Q_pe[b:b + 1], KV[page, row][None], K_pe[page, row][None],
                             scale[0], num_split, page_size)
        O[b], lse[b] = o[0], l[0]
    return ("examples/deepseek_mla/mla_decode_paged.tl", dict(tiles, h_q=h_q, h_kv=h_kv, page_size=page_size),
            {"batch": batch, "num_pages": num_pages, "max_pages": max_pages},
            {"Q": Q, "Q_pe": Q_pe, "KV": KV, "K_pe": K_pe, "block_table": table,
             "cache_seqlens": np.array(lens, np.int32), "sm_scale": scale},
            {"Glse": (lse, "float32"), "O": (O, "float16")},
            [("mla_decode_paged", ["batch", "num_pages", "max_pages"]), ("mla_decode_paged_combine", ["batch"])])


def case_mla_decode_paged():
    # The default tiles and 64-key pages; a long, a one-key and a 129-key sequence.
    return mla_paged_case([1000, 1, 129], 64, 1, 576 ** -0.5)


def case_mla_decode_paged_small_pages():
    # 32-key pages of two 16-key tiles, two KV heads, 3 splits; an empty sequence.
    return mla_paged_case([200, 0, 37], 32, 2, 0.2, page_size=32, block_N=16, block_H=16, num_split=3, threads=128)


CASES = {name[5:]: fn for name, fn in list(globals().items()) if name.startswith("case_")}


def compare_inf(got, want, dtype):
    """compare() where the reference may hold -inf, which the result must hold at the same places."""
    inf = np.isneginf(want)
    if got.shape == want.shape and inf.any():
        if not np.isneginf(got[inf]).all():
            return f"{int((~np.isneginf(got[inf])).sum())} elements are not -inf where the reference is"
        got, want = got[~inf], want[~inf]
    return compare(None, got, want, dtype)


def run_chain(tlc, name, path, args, dims, inputs, outputs, targets, kernels):
    """Runs the kernels of `path` one after the other on each target (as
    run_file does one), the first on `inputs`, each later one loading the
    tensors the one before saved, and compares `outputs` with their
    references, each taken from the last run that saved it. `kernels` holds
    (name, the names in `dims` that are its dynamic dimensions)."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        load = write_inputs(tmp, inputs)
        for target in targets:
            dirs, prev = [], load
            for kernel, kernel_dims in kernels:
                save = os.path.join(tmp, target.replace(":", "_"), kernel)
                failure = run_tlc(tlc, name, path, target, prev, save,
                                  ["--kernel", kernel] + args + dim_args({d: dims[d] for d in kernel_dims}))
                if failure:
                    failures.append(failure)
                    break
                dirs.append(save)
                prev = save
            else:
                for out, (want, dtype) in outputs.items():
                    file = next(os.path.join(d, out + ".npy") for d in reversed(dirs)
                                if os.path.exists(os.path.join(d, out + ".npy")))
                    why = compare_inf(np.load(file), f(want), dtype)
                    if why:
                        failures.append(f"{name} [{target}]: {out}: {why}")
    return failures


# Cases whose tiles fit only some targets: the targets they run on.
ONLY_ON = {"mla_decode_keys64": {"interp", "cpu", "cuda:sm_90a"}}


def run_case(tlc, name, targets):
    targets = [t for t in targets if t in ONLY_ON.get(name, targets)]
    file, defines, dims, inputs, outputs, *kernels = CASES[name]()
    args = [a for d, v in defines.items() for a in ("-D", f"{d}={v}")]
    if kernels:
        return run_chain(tlc, name, os.path.join(ROOT, file), args, dims, inputs, outputs, targets, kernels[0])
    return run_file(tlc, name, os.path.join(ROOT, file), args + dim_args(dims), inputs, outputs, targets)


if __name__ == "__main__":
    sys.exit(main(CASES, run_case, "examples"))
