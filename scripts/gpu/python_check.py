#!/usr/bin/env python3
"""The Python package on a GPU: modules prepare.sh built for cuda:sm_90a
(build-gpu/python/), called through `tlc` on torch CUDA tensors and compared
with torch.

    python_check.py [MODULE_DIR]      (default: build-gpu/python)

Checks: gemm (float16 with and without TMA-describable strides, bfloat16) and
softmax (float16) on a non-default stream, ordered after earlier work on that
stream; outputs allocated and passed; a host tensor refused; the gemm as a
torch custom op (torch.library.opcheck, then inside torch.compile with dynamic
shapes). Prints one PASS/FAIL line per check and exits 1 on any failure.
The runtime library is MODULE_DIR/libtlc_runtime.so unless
TLC_RUNTIME_LIBRARY names another.
"""
import os
import pathlib
import sys
import traceback

root = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root / "python"))
modules = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else root / "build-gpu" / "python")
os.environ.setdefault("TLC_RUNTIME_LIBRARY", str(modules / "libtlc_runtime.so"))

failures = 0


def check(name, fn):
    global failures
    try:
        detail = fn()
        print(f"PASS {name}" + (f": {detail}" if detail else ""), flush=True)
    except Exception as e:  # report every check, whatever it raised
        failures += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc(file=sys.stderr)


def max_rel_err(got, ref):
    return ((got.float() - ref.float()).abs().max() / ref.float().abs().max().clamp_min(1e-6)).item()


def main():
    import torch
    import tlc
    from tlc.torch_op import register_op

    gemm16 = tlc.load(modules / "gemm_f16.cubin")
    gemm_bf16 = tlc.load(modules / "gemm_bf16.cubin")
    softmax = tlc.load(modules / "softmax_f16.cubin")
    torch.manual_seed(0)
    dev = torch.device("cuda")

    def gemm_on_stream(m, dtype, M, N, K):
        def run():
            a = torch.randn(M, K, device=dev, dtype=dtype)
            b = torch.randn(K, N, device=dev, dtype=dtype)
            a2 = torch.zeros_like(a)
            torch.cuda.synchronize()
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                # The kernel must wait for this stream's earlier work: a
                # launch on another stream would read a2 still zero.
                torch.cuda._sleep(50_000_000)
                a2.copy_(a)
                c = m.gemm(a2, b)
                c2 = torch.empty(M, N, device=dev, dtype=dtype)
                m.gemm(a2, b, c2)
            s.synchronize()
            ref = a.float() @ b.float()
            err = max(max_rel_err(c, ref), max_rel_err(c2, ref))
            if c.dtype != dtype or tuple(c.shape) != (M, N):
                raise AssertionError(f"allocated output is {c.dtype} {tuple(c.shape)}")
            if err > 2e-2:
                raise AssertionError(f"max relative error {err:.2e}")
            return f"{M}x{N}x{K} {dtype} max rel err {err:.1e}"
        return run

    check("gemm float16 on a non-default stream (TMA strides)", gemm_on_stream(gemm16, torch.float16, 1000, 776, 520))
    check("gemm float16 on a non-default stream (rows TMA cannot address: staged into padded rows)",
          gemm_on_stream(gemm16, torch.float16, 333, 777, 257))
    check("gemm bfloat16 on a non-default stream", gemm_on_stream(gemm_bf16, torch.bfloat16, 512, 640, 384))

    def softmax_on_stream():
        x = torch.randn(300, 5000, device=dev, dtype=torch.float16) * 3
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.cuda._sleep(50_000_000)
            x2 = x * 1
            y = softmax.softmax(x2)
        s.synchronize()
        ref = torch.softmax(x.float(), dim=-1)
        err = (y.float() - ref).abs().max().item()
        if err > 2e-3:
            raise AssertionError(f"max abs error {err:.2e}")
        return f"300x5000 float16 max abs err {err:.1e}"

    check("softmax float16 on a non-default stream", softmax_on_stream)

    def host_tensor_refused():
        a = torch.randn(64, 64, dtype=torch.float16)
        try:
            gemm16.gemm(a, a)
        except tlc.DeviceError as e:
            if e.param != "A":
                raise AssertionError(f"the error names `{e.param}`")
            return str(e)
        raise AssertionError("a host tensor was accepted")

    check("a CPU tensor given to a CUDA kernel raises DeviceError", host_tensor_refused)

    op = register_op(gemm16.gemm, "tlc_check::gemm")

    def opcheck():
        a = torch.randn(200, 136, device=dev, dtype=torch.float16)
        b = torch.randn(136, 72, device=dev, dtype=torch.float16)
        torch.library.opcheck(op, (a, b))
        return "schema, fake tensor and autograd registration checks"

    check("custom op passes torch.library.opcheck", opcheck)

    def compiled():
        f = torch.compile(lambda a, b: torch.relu(op(a, b).float()) * 2, fullgraph=True, dynamic=True)
        worst = 0.0
        for M, N, K in ((256, 128, 64), (300, 200, 136), (129, 72, 520)):
            a = torch.randn(M, K, device=dev, dtype=torch.float16)
            b = torch.randn(K, N, device=dev, dtype=torch.float16)
            got = f(a, b)
            ref = torch.relu((a.float() @ b.float()).half().float()) * 2
            worst = max(worst, max_rel_err(got, ref))
        if worst > 2e-2:
            raise AssertionError(f"max relative error {worst:.2e}")
        return f"3 shapes, max rel err {worst:.1e}"

    check("custom op inside torch.compile (fullgraph, dynamic shapes)", compiled)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        failures += 1
        print(f"FAIL setup: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc(file=sys.stderr)
    print(f"python checks: {'PASS' if failures == 0 else 'FAIL'} ({failures} failed)")
    sys.exit(1 if failures else 0)
