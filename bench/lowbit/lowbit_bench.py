#!/usr/bin/env python3
"""fp8 gemms and conv2d: tlc's examples against cuBLAS and cuDNN through torch,
timed in this process on the same GPU with CUDA events.

    lowbit_bench.py MODULE_DIR [--iters N] [--only fp8|conv]

MODULE_DIR holds what scripts/gpu/prepare.sh built into build-gpu/lowbit
(cubins with their metadata, and libtlc_runtime.so, through which the `tlc`
Python package in python/ launches them on torch tensors). Each kernel is checked against a
torch computation of what its example's header says, then timed:

- examples/gemm_fp8/gemm_fp8.tl (e4m3, per-tensor scales, bfloat16 C) and
  examples/gemm_fp8/gemm_fp8_blockscale.tl (1x128 / 128x128 block scales)
  against torch._scaled_mm with per-tensor scales (cuBLASLt fp8) on the
  same shapes;
- examples/convolution/conv2d_nhwc.tl against torch's conv2d on
  channels-last float16 tensors (cuDNN): every conv2d_k<K>*.cubin of
  MODULE_DIR (the example's defaults as conv2d_k3 / conv2d_k1, other tiles
  under longer names), each beside cuDNN in this process.

Prints one line per case: `bench <case>: tlc <ms> <TFLOP/s> | <ref> <ms> <TFLOP/s> ratio <ref/tlc>`.
Exits 1 when a check fails.
"""
import argparse
import os
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(root / "python"))
sys.path.insert(0, str(root / "bench" / "attention"))


def rel_err(got, ref):
    return ((got.float() - ref.float()).abs().max() / ref.float().abs().max().clamp_min(1e-6)).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("modules")
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--only", choices=["fp8", "conv"], help="run only the fp8 gemms or only the convolutions")
    args = p.parse_args()
    mods = pathlib.Path(args.modules)
    os.environ.setdefault("TLC_RUNTIME_LIBRARY", str(mods / "libtlc_runtime.so"))
    import torch
    import torch.nn.functional as F
    import tlc
    from attention_bench import time_ms  # CUDA events around `iters` launches after a warm-up

    dev = torch.device("cuda")
    torch.manual_seed(0)
    failures = 0

    def report(name, flops, t, ref_name, tr, err, tol):
        nonlocal failures
        ok = err <= tol
        failures += not ok
        print(f"bench {name}: tlc {t:.3f} ms {flops / t / 1e9:.0f} TFLOP/s (rel err {err:.1e}{'' if ok else ' FAIL'})"
              f" | {ref_name} {tr:.3f} ms {flops / tr / 1e9:.0f} TFLOP/s ratio {tr / t:.3f}", flush=True)

    def e4m3(shape):
        return (torch.randn(*shape, device=dev) * 0.5).to(torch.float8_e4m3fn)

    fp8_shapes = [] if args.only == "conv" else [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 7168, 2048),
                                                 (4096, 2112, 7168)]
    if fp8_shapes:
        fp8 = tlc.load(mods / "gemm_fp8.cubin")
        fp8_bs = tlc.load(mods / "gemm_fp8_blockscale.cubin")
    for M, N, K in fp8_shapes:
        A, B = e4m3((M, K)), e4m3((N, K))
        sa = torch.tensor([0.7], device=dev)
        sb = torch.tensor([1.3], device=dev)
        C = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        flops = 2.0 * M * N * K

        def ref_pt():
            return torch._scaled_mm(A, B.t(), scale_a=sa[0], scale_b=sb[0], out_dtype=torch.bfloat16)

        run = lambda: fp8.gemm_fp8(A, B, sa, sb, C)
        run()
        # The reference in float32: torch._scaled_mm's result is rounded to
        # bfloat16 as tlc's is, and two roundings of the largest elements
        # alone come near the bound at K = 7168.
        err = rel_err(C, (A.float() @ B.float().t()) * (sa[0] * sb[0]))
        report(f"gemm_fp8 per-tensor {M}x{N}x{K}", flops, time_ms(run, args.iters), "cublas fp8 (torch._scaled_mm)",
               time_ms(ref_pt, args.iters), err, 1e-2)

        KB, NB = -(-K // 128), -(-N // 128)
        As = torch.rand(M, KB, device=dev) * 0.1 + 0.01
        Bs = torch.rand(NB, KB, device=dev) * 0.1 + 0.01
        run_bs = lambda: fp8_bs.gemm_fp8_blockscale(A, B, As, Bs, C)
        run_bs()
        # The reference: A and B dequantized with their block scales, in float32.
        Af = A.float() * As.repeat_interleave(128, dim=1)[:, :K]
        Bf = B.float() * Bs.repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)[:, :K]
        err = rel_err(C, Af @ Bf.t())
        report(f"gemm_fp8 block-scaled {M}x{N}x{K}", flops, time_ms(run_bs, args.iters),
               "cublas fp8 per-tensor (torch._scaled_mm)", time_ms(ref_pt, args.iters), err, 1e-2)

    convs = [] if args.only == "fp8" else sorted(mods.glob("conv2d_k*.cubin"))
    for path in convs:
        name = path.stem
        k = int(name.split("_")[1][1:])
        conv = tlc.load(path)
        Nb, H, W, Cin, Fout = 128, 64, 64, 128, 128
        pad = (k - 1) // 2
        X = torch.randn(Nb, H, W, Cin, device=dev, dtype=torch.float16)
        Wt = torch.randn(k, k, Cin, Fout, device=dev, dtype=torch.float16) * 0.05
        Out = torch.empty(Nb * H * W, Fout, device=dev, dtype=torch.float16)
        Wf = Wt.reshape(k * k * Cin, Fout)
        run = lambda: conv.conv2d_nhwc(X, Wf, Out)
        # torch: NCHW views of channels-last storage, filter as (F, C, KH, KW).
        Xt = X.permute(0, 3, 1, 2)
        Wtt = Wt.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
        ref = lambda: F.conv2d(Xt, Wtt, padding=pad)
        run()
        err = rel_err(Out.reshape(Nb, H, W, Fout), ref().permute(0, 2, 3, 1))
        flops = 2.0 * Nb * H * W * Fout * Cin * k * k
        report(f"{name} N{Nb} C{Cin} {H}x{W} F{Fout} k{k}", flops, time_ms(run, args.iters),
               "cudnn (torch conv2d, channels_last)", time_ms(ref, args.iters), err, 1e-2)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
