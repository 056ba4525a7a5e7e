"""Every example under examples/ that builds for the CPU, built with
`tlc build --target=cpu` and called from Python on numpy arrays, against a
numpy reference written here. Inputs are random (never zeros) and the sizes
are not multiples of the tiles."""
import pathlib
import sys
import unittest

import support  # noqa: F401  (puts the package on sys.path)
import numpy as np

import tlc

# The low-bit, fp8 and convolution examples: inputs (the 4-bit weights packed
# by the test) and NumPy references of tests/examples/check_examples.py.
sys.path.insert(0, str(support.SOURCE_DIR / "tests" / "examples"))
import check_examples  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # numpy holds no float8 or bfloat16 without it
    ml_dtypes = None

RNG = np.random.default_rng(20261201)


def rand(shape, dtype=np.float32, low=0.5):
    """Random values away from zero, with random signs."""
    mag = RNG.uniform(low, 1.5, size=shape)
    sign = RNG.choice([-1.0, 1.0], size=shape)
    return (mag * sign).astype(dtype)


def attention(q, k, v, causal, groups):
    """softmax(q k^T / sqrt(D)) v per (batch, head); q, k, v in (B, H, S, D)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    k = np.repeat(k, groups, axis=1)
    v = np.repeat(v, groups, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def close(test, got, ref, rtol, atol):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    test.assertEqual(got.shape, ref.shape)
    err = np.abs(got - ref) - (atol + rtol * np.abs(ref))
    worst = np.unravel_index(np.argmax(err), err.shape)
    test.assertTrue(np.all(err <= 0), f"mismatch at {worst}: got {got[worst]}, expected {ref[worst]}")


class Examples(unittest.TestCase):
    def test_every_example_has_a_reference(self):
        found = {str(p.relative_to(support.SOURCE_DIR)) for p in (support.SOURCE_DIR / "examples").rglob("*.tl")}
        self.assertEqual(found, set(TESTED), "an example without a Python test: add its reference here")

    def test_elementwise_add(self):
        for dtype in ("float32", "float16"):
            m = tlc.load(support.build("examples/elementwise_add/add.tl", f"add_{dtype}.so", defines={"dtype": dtype}))
            a, b = rand((77, 150), dtype), rand((77, 150), dtype)
            c = m.elementwise_add(a, b)  # C left out: allocated
            self.assertEqual(c.dtype, np.dtype(dtype))
            close(self, c, (a.astype(np.float32) + b.astype(np.float32)).astype(dtype), 0, 0)

    def test_gemm_float32(self):
        m = tlc.load(support.build("examples/gemm/gemm.tl", "gemm_f32.so", defines={
            "dtype": "float32", "block_M": 32, "block_N": 32, "block_K": 16, "stages": 2}))
        a, b = rand((70, 37)), rand((37, 45))
        c = np.full((70, 45), np.nan, dtype=np.float32)
        self.assertIsNone(m.gemm(a, b, c))  # nothing allocated: nothing returned
        close(self, c, a.astype(np.float64) @ b, 1e-5, 1e-4)
        c2 = m["gemm"](A=a, B=b)  # by name, C allocated
        close(self, c2, c, 0, 0)

    def test_gemm_float16_passes_without_conversion(self):
        m = tlc.load(support.build("examples/gemm/gemm.tl", "gemm_f16.so", defines={
            "block_M": 32, "block_N": 64, "block_K": 32, "stages": 2}))
        a, b = rand((65, 100), np.float16), rand((100, 33), np.float16)
        c = m.gemm(a, b)
        self.assertEqual(c.dtype, np.float16)
        ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
        close(self, c, ref, 2e-3, 2e-2)

    def test_rmsnorm(self):
        m = tlc.load(support.build("examples/rmsnorm/rmsnorm.tl", "rmsnorm.so", defines={
            "N": 200, "block_M": 4, "dtype": "float32"}))
        x, w = rand((13, 200)), rand((200,))
        y = m.rmsnorm(x, w)
        xd = x.astype(np.float64)
        close(self, y, xd / np.sqrt((xd * xd).mean(1, keepdims=True) + 1e-6) * w, 1e-5, 1e-5)

    def test_row_sum(self):
        m = tlc.load(support.build("examples/row_reduce/row_sum.tl", "row_sum.so"))
        x = rand((100, 300))
        out = m.row_sum(x)
        close(self, out, x.astype(np.float64).sum(1), 1e-5, 1e-4)

    def test_softmax(self):
        for dtype, tol in (("float32", 1e-5), ("float16", 2e-3)):
            m = tlc.load(support.build("examples/softmax/softmax.tl", f"softmax_{dtype}.so", defines={
                "block_N": 128, "threads": 128, "dtype": dtype}))
            x = (rand((7, 300)) * 4).astype(dtype)
            y = m.softmax(x)
            xd = x.astype(np.float64)
            e = np.exp(xd - xd.max(1, keepdims=True))
            close(self, y, e / e.sum(1, keepdims=True), tol, tol)

    def _attention(self, layout):
        tiles = {"D": 32, "block_M": 32, "block_N": 32, "threads": 128, "stages": 2, "dtype": "float32"}
        for causal, groups in ((False, 1), (True, 2)):
            name = f"mha_fwd_{layout}"
            m = tlc.load(support.build(f"examples/flash_attention/{name}.tl", f"{name}_{causal}_{groups}.so",
                                       defines=dict(tiles, causal=causal, groups=groups)))
            B, H, S, D = 2, 4, 70, 32
            q, k, v = rand((B, H, S, D)), rand((B, H // groups, S, D)), rand((B, H // groups, S, D))
            ref = attention(q, k, v, causal, groups)
            if layout == "bshd":
                q, k, v = (np.ascontiguousarray(x.transpose(0, 2, 1, 3)) for x in (q, k, v))
                ref = ref.transpose(0, 2, 1, 3)
            o = m[name](q, k, v)
            close(self, o, ref, 1e-4, 1e-5)

    def test_attention_bhsd(self):
        self._attention("bhsd")

    def _check_case(self, case):
        """Builds the example of a check_examples case for the CPU and calls it on the case's inputs."""
        file, defines, _, inputs, outputs = getattr(check_examples, "case_" + case)()
        path = pathlib.Path(file)
        m = tlc.load(support.build(file, f"{case}.so", defines=defines))
        params = {p.name: p for p in m[path.stem].params}
        args = {}
        for name, v in inputs.items():
            if params[name].dtype == "float8_e4m3":
                v = v.astype(ml_dtypes.float8_e4m3fn)
            args[name] = v
        got = m[path.stem](**args)  # the one output left out: allocated and returned
        (want, dtype), = outputs.values()
        rtol, atol = {"float16": (1e-2, 2e-3), "bfloat16": (2e-2, 1e-2)}[dtype]
        scale = max(1.0, float(np.abs(want).max()))
        close(self, np.asarray(got, dtype=np.float64), want, rtol, atol * scale)

    def test_w4a16(self):
        self._check_case("w4a16")
        self._check_case("w4a16_decode")

    def test_w4a16_split(self):
        self._check_case("w4a16_split")
        self._check_case("w4a16_split_m1")

    def test_w4a16_gemv(self):
        self._check_case("w4a16_gemv")
        self._check_case("w4a16_gemv_m16")

    def test_fp4(self):
        self._check_case("fp4")

    @unittest.skipUnless(ml_dtypes, "numpy needs ml_dtypes for float8 arrays")
    def test_fp8(self):
        self._check_case("fp8")

    @unittest.skipUnless(ml_dtypes, "numpy needs ml_dtypes for float8 and bfloat16 arrays")
    def test_fp8_blockscale(self):
        self._check_case("fp8_blockscale")

    def test_conv2d(self):
        self._check_case("conv3x3")
        self._check_case("conv3x3_runtime_shape")
        self._check_case("conv1x1_stride2")

    def test_attention_bshd(self):
        self._attention("bshd")

    def test_attention_varlen(self):
        tiles = {"D": 32, "block_M": 32, "block_N": 32, "threads": 128, "stages": 2, "dtype": "float32"}
        lens = [37, 1, 70, 32]  # past, at and below a tile; a one-token sequence
        cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
        T, H, D = int(cu[-1]), 4, 32
        for causal, groups in ((False, 1), (True, 2)):
            m = tlc.load(support.build("examples/flash_attention/mha_fwd_varlen.tl", f"mha_fwd_varlen_{causal}_{groups}.so",
                                       defines=dict(tiles, causal=causal, groups=groups)))
            q, k, v = rand((T, H, D)), rand((T, H // groups, D)), rand((T, H // groups, D))
            o = np.full((T, H, D), np.nan, dtype=np.float32)
            m.mha_fwd_varlen(q, k, v, cu, max(lens), o)
            for b in range(len(lens)):
                s, e = cu[b], cu[b + 1]
                ref = attention(*(x[s:e].transpose(1, 0, 2)[None] for x in (q, k, v)), causal, groups)
                close(self, o[s:e], ref[0].transpose(1, 0, 2), 1e-4, 1e-5)

    def _mla(self, case, kernel, *names):
        """Calls the split kernel then the combine of a check_examples MLA case on its inputs."""
        file, defines, _, inputs, outputs, _ = getattr(check_examples, "case_" + case)()
        m = tlc.load(support.build(file, f"{case}.so", defines=defines))
        glse, o_partial = m[kernel](*(inputs[n] for n in names), float(inputs["sm_scale"][0]))
        o = m[kernel + "_combine"](glse, o_partial)
        want, _ = outputs["O"]
        close(self, np.asarray(o, dtype=np.float64), want, 1e-2, 2e-3)
        lse, _ = outputs["Glse"]
        self.assertTrue(np.array_equal(np.isneginf(glse), np.isneginf(lse)))
        finite = ~np.isneginf(lse)
        close(self, glse[finite], lse[finite], 1e-5, 1e-5)

    def test_mla_decode(self):
        # 129 keys with an empty split; one key, two KV heads.
        for case in ("mla_decode_short", "mla_decode_one_key"):
            self._mla(case, "mla_decode", "Q", "Q_pe", "KV", "K_pe")

    def test_mla_decode_paged(self):
        self._mla("mla_decode_paged_small_pages", "mla_decode_paged", "Q", "Q_pe", "KV", "K_pe", "block_table",
                  "cache_seqlens")


TESTED = {
    "examples/elementwise_add/add.tl": Examples.test_elementwise_add,
    "examples/gemm/gemm.tl": Examples.test_gemm_float32,
    "examples/rmsnorm/rmsnorm.tl": Examples.test_rmsnorm,
    "examples/row_reduce/row_sum.tl": Examples.test_row_sum,
    "examples/softmax/softmax.tl": Examples.test_softmax,
    "examples/flash_attention/mha_fwd_bhsd.tl": Examples.test_attention_bhsd,
    "examples/flash_attention/mha_fwd_bshd.tl": Examples.test_attention_bshd,
    "examples/flash_attention/mha_fwd_varlen.tl": Examples.test_attention_varlen,
    "examples/dequantize_gemm/w4a16_gemm.tl": Examples.test_w4a16,
    "examples/dequantize_gemm/w4a16_gemv.tl": Examples.test_w4a16_gemv,
    "examples/dequantize_gemm/w4a16_decode.tl": Examples.test_w4a16_split,
    "examples/dequantize_gemm/fp4_gemm.tl": Examples.test_fp4,
    "examples/gemm_fp8/gemm_fp8.tl": Examples.test_fp8,
    "examples/gemm_fp8/gemm_fp8_blockscale.tl": Examples.test_fp8_blockscale,
    "examples/convolution/conv2d_nhwc.tl": Examples.test_conv2d,
    "examples/deepseek_mla/mla_decode.tl": Examples.test_mla_decode,
    "examples/deepseek_mla/mla_decode_paged.tl": Examples.test_mla_decode_paged,
}

if __name__ == "__main__":
    unittest.main()
