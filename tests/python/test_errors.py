"""Bad calls raise Python exceptions that name the parameter (dimensions
numbered from 0) and never crash the process: wrong dtype, shape, rank,
layout, device, missing and extra arguments, read-only outputs, unknown
kernels, device modules without a GPU, compile errors, and a runtime library
that is missing or of another ABI version."""
import os
import pathlib
import re
import subprocess
import sys
import unittest

import support
import numpy as np

import tlc

GEMM_DEFINES = {"dtype": "float32", "block_M": 32, "block_N": 32, "block_K": 16, "stages": 2}


def gemm():
    if not hasattr(gemm, "module"):
        gemm.module = tlc.load(support.build("examples/gemm/gemm.tl", "errors_gemm.so", defines=GEMM_DEFINES))
    return gemm.module


def inputs(m=40, k=24, n=33, dtype=np.float32):
    rng = np.random.default_rng(3)
    return (rng.uniform(0.5, 1.5, (m, k)).astype(dtype), rng.uniform(0.5, 1.5, (k, n)).astype(dtype),
            np.empty((m, n), dtype))


class Cuda:
    """A CPU array that says it lives on a CUDA device (DLPack)."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()


class DLPackOnly:
    """An object that offers only the DLPack protocol (no numpy, no torch)."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()


class BadCalls(unittest.TestCase):
    def check(self, exc, fn, *patterns, param=None):
        with self.assertRaises(exc) as cm:
            fn()
        text = str(cm.exception)
        for p in patterns:
            self.assertRegex(text, p)
        if param is not None:
            self.assertEqual(cm.exception.param, param)
        self.assertIsInstance(cm.exception, tlc.TlcError)
        return cm.exception

    def test_wrong_dtype(self):
        a, b, c = inputs()
        self.check(tlc.DtypeError, lambda: gemm().gemm(a.astype(np.float64), b, c),
                   r"argument `A` .*expected dtype float32 but got float64", param="A")
        self.check(tlc.DtypeError, lambda: gemm().gemm(a.astype(np.complex64), b, c),
                   r"argument `A`.*complex64", param="A")
        self.check(tlc.DtypeError, lambda: gemm().gemm([[1.0]], b, c), r"argument `A`.*got list", param="A")

    def test_wrong_shape_names_dimension_0(self):
        a, b, c = inputs()
        err = self.check(tlc.ShapeError, lambda: gemm().gemm(a, b, np.empty((41, 33), np.float32)),
                         r"argument `C`.*expected shape \(M, N\) with M = 40 \(dimension 0 of `A`\) but got \(41, 33\)",
                         param="C")
        self.assertEqual(err.status, "TLC_ERROR_SHAPE")
        self.check(tlc.ShapeError, lambda: gemm().gemm(a, np.empty((25, 33), np.float32), c),
                   r"argument `B`.*K = 24 \(dimension 1 of `A`\)", param="B")
        self.check(tlc.ShapeError, lambda: gemm().gemm(a[None], b, c), r"argument `A`.*rank-2.*got rank 3", param="A")

    def test_non_contiguous(self):
        a, b, c = inputs(m=24, k=24)
        self.check(tlc.LayoutError, lambda: gemm().gemm(a.T, b, c),
                   r"argument `A`.*contiguous.*strides \(1, 24\)", param="A")
        wide = np.ones((24, 48), np.float32)
        self.check(tlc.LayoutError, lambda: gemm().gemm(wide[:, ::2], b, c), r"argument `A`", param="A")

    def test_missing_extra_and_duplicate_arguments(self):
        a, b, c = inputs()
        self.check(tlc.ArgumentError, lambda: gemm().gemm(a), r"argument `B` of kernel `gemm` is missing.*C", param="B")
        self.check(tlc.ArgumentError, lambda: gemm().gemm(a, b, c, c), r"takes 3 arguments \(A, B, C\) but was given 4")
        self.check(tlc.ArgumentError, lambda: gemm().gemm(a, b, D=c), r"no parameter `D`", param="D")
        self.check(tlc.ArgumentError, lambda: gemm().gemm(a, b, c, A=a), r"`A`.*given twice", param="A")

    def test_read_only_output(self):
        a, b, c = inputs()
        c.flags.writeable = False
        self.check(tlc.ArgumentError, lambda: gemm().gemm(a, b, c), r"argument `C`.*read-only", param="C")
        a.flags.writeable = False  # inputs may be read-only
        gemm().gemm(a, b, np.empty_like(c))

    def test_device_memory_for_a_cpu_kernel(self):
        a, b, c = inputs()
        self.check(tlc.DeviceError, lambda: gemm().gemm(Cuda(a), b, c), r"argument `A`.*cuda.*runs on the CPU",
                   param="A")

    def test_dlpack_objects_are_read_through_the_protocol(self):
        a, b, _ = inputs()
        c = np.zeros((40, 33), np.float32) + 1
        self.assertIsNone(gemm().gemm(DLPackOnly(a), DLPackOnly(b), DLPackOnly(c)))
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5)

    def test_unknown_kernel(self):
        self.check(tlc.KernelNotFoundError, lambda: gemm().matmul, r"no kernel `matmul`; it has `gemm`")
        self.check(tlc.KernelNotFoundError, lambda: gemm()["matmul"], r"no kernel `matmul`")
        self.assertIn("gemm", gemm())

    def test_bad_module_files(self):
        bogus = support.SCRATCH / "bogus.so"
        bogus.write_bytes(b"not a module")
        self.check(tlc.LoadError, lambda: tlc.load(bogus), r"is not a tlc module")
        self.check(tlc.LoadError, lambda: tlc.load(support.SCRATCH / "missing.so"), r"cannot read module")

    def test_cubin_module_without_a_gpu(self):
        path = support.build("examples/gemm/gemm.tl", "errors_gemm.cubin", target="cuda:sm_80")
        try:
            m = tlc.load(path)
        except tlc.BackendUnavailableError as e:
            self.assertRegex(str(e), r"CUDA")
            self.assertEqual(e.status, "TLC_ERROR_BACKEND_UNAVAILABLE")
            return
        # A machine with a GPU: the module loads; host memory is refused.
        a, b, c = inputs(dtype=np.float16)
        self.check(tlc.DeviceError, lambda: m.gemm(a, b, c), r"argument `A`.*cuda")

    def test_unbound_output_shape(self):
        # row_sum's `out` is (M,): N is bound by X; a kernel whose output has
        # a symbol no input gives cannot allocate it.
        src = support.SCRATCH / "unbound.tl"
        src.write_text("def fill[M, N](X: Tensor[(M,), float32], Y: Tensor[(N,), float32]):\n"
                       "    with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:\n"
                       "        for i in T.Parallel(32):\n"
                       "            if bx * 32 + i < N:\n"
                       "                Y[bx * 32 + i] = 1.0\n")
        m = tlc.load(support.build(src, "unbound.so"))
        self.check(tlc.ShapeError, lambda: m.fill(np.ones(4, np.float32)), r"`Y` of kernel `fill` was left out.*needs `N`", param="Y")
        y = np.zeros(5, np.float32)
        m.fill(np.ones(4, np.float32), y)
        np.testing.assert_array_equal(y, np.ones(5))


class Compile(unittest.TestCase):
    def setUp(self):
        os.environ["TLC_CACHE_DIR"] = str(support.SCRATCH / "cache")

    def test_compile_builds_through_the_cache_and_loads(self):
        cache = support.SCRATCH / "cache"
        m = tlc.compile(support.SOURCE_DIR / "examples/row_reduce/row_sum.tl", defines={"block_M": 16, "block_N": 32})
        x = np.random.default_rng(5).uniform(0.5, 1.5, (50, 70)).astype(np.float32)
        np.testing.assert_allclose(m.row_sum(x), x.astype(np.float64).sum(1), rtol=1e-5)
        self.assertEqual(m.metadata["kernels"][0]["bindings"][0:1], [{"name": "block_M", "value": "16"}])
        entries = sorted(cache.rglob("*.bin"))
        self.assertTrue(entries, "tlc build stored nothing in the kernel cache")
        stamp = [e.stat().st_mtime_ns for e in entries]
        tlc.compile(support.SOURCE_DIR / "examples/row_reduce/row_sum.tl", defines={"block_M": 16, "block_N": 32})
        self.assertEqual([e.stat().st_mtime_ns for e in sorted(cache.rglob("*.bin"))], stamp, "not a cache hit")

    def test_compile_error_carries_located_diagnostics(self):
        src = support.SCRATCH / "broken.tl"
        src.write_text("def k[M](A: Tensor[(M,), float32]):\n"
                       "    with T.Kernel(1, threads=32) as bx:\n"
                       "        A[0] = undefined_name\n")
        with self.assertRaises(tlc.CompileError) as cm:
            tlc.compile(src)
        self.assertRegex(cm.exception.diagnostics, re.escape(str(src)) + r":3:\d+: error: .*undefined_name")
        self.assertIn("^", cm.exception.diagnostics)
        self.assertNotEqual(cm.exception.returncode, 0)

    def test_compile_reports_a_missing_compiler(self):
        saved = os.environ.get("TLC_COMPILER")
        os.environ["TLC_COMPILER"] = str(support.SCRATCH / "no-tlc")
        try:
            with self.assertRaisesRegex(tlc.CompileError, "TLC_COMPILER=.*not an executable"):
                tlc.compile(support.SOURCE_DIR / "examples/row_reduce/row_sum.tl")
        finally:
            os.environ["TLC_COMPILER"] = saved


def run_python(code, **env):
    e = dict(os.environ, **env)
    r = subprocess.run([sys.executable, "-c", "import support, tlc\n" + code], cwd=pathlib.Path(__file__).parent,
                       env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


class RuntimeLibrary(unittest.TestCase):
    def test_abi_versions_agree(self):
        header = (support.SOURCE_DIR / "runtime/include/tlc/runtime.h").read_text()
        abi = int(re.search(r"#define TLC_RUNTIME_ABI_VERSION (\d+)", header).group(1))
        self.assertEqual(tlc.ABI_VERSION, abi)
        project = (support.SOURCE_DIR / "python/pyproject.toml").read_text()
        self.assertEqual(re.search(r'^version = "(\d+)\.', project, re.M).group(1), str(abi))
        self.assertEqual(tlc.__version__.split(".")[0], str(abi))
        self.assertEqual(tlc.library().abi_version, abi)

    def test_missing_library(self):
        rc, out = run_python("tlc.load('x.so')", TLC_RUNTIME_LIBRARY=str(support.SCRATCH / "nothing.so"))
        self.assertNotEqual(rc, 0)
        self.assertRegex(out, r"RuntimeLibraryError: cannot load the tlc runtime library.*TLC_RUNTIME_LIBRARY")

    def test_other_abi_version(self):
        src, lib = support.SCRATCH / "abi99.c", support.SCRATCH / "libabi99.so"
        src.write_text("int tlcRuntimeAbiVersion(void) { return 99; }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
        rc, out = run_python("tlc.load('x.so')", TLC_RUNTIME_LIBRARY=str(lib))
        self.assertNotEqual(rc, 0)
        self.assertRegex(out, r"RuntimeLibraryError: the tlc runtime .*libabi99.so has ABI version 99 but this "
                              r"package \(tlc for Python\) needs ABI version 1")


if __name__ == "__main__":
    unittest.main()
