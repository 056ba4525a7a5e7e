#!/usr/bin/env python3
"""torch's own implementations of the zoo's memory-bound kernels that stay
below 0.85 of copy bandwidth in tlc (bench/zoo/README.md), timed in one
process against torch's device-to-device copy of the same bytes, so that
tlc's ratio (zoo_bench.sh) can be read beside what torch reaches on the
same GPU and sizes.

    torch_mem_bench.py [--iters N]

Prints `torch <kernel>: <ms> ms <GB/s> GB/s | copy <GB/s> GB/s ratio <x>`.
The bytes counted are those tlc_cuda_runner counts (every tensor once, the
whole table of a gather included), and the copy is the runner's: 1 GiB
device to device, read + write counted.
"""
import argparse
import pathlib
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "attention"))
from attention_bench import time_ms  # noqa: E402  CUDA events around `iters` launches after a warm-up


def copy_gbps(iters):
    """Device-to-device copy of 1 GiB, read + write counted."""
    a = torch.ones(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t = time_ms(lambda: b.copy_(a), iters)
    del a, b
    return 2 * (1 << 30) / t / 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=50)
    args = p.parse_args()
    torch.manual_seed(0)
    dev = "cuda"

    def report(name, fn, nbytes):
        t = time_ms(fn, args.iters)
        gbps = nbytes / t / 1e6
        ref = copy_gbps(args.iters)
        print(f"torch {name}: {t:.3f} ms {gbps:.0f} GB/s | copy {ref:.0f} GB/s ratio {gbps / ref:.3f}", flush=True)

    # embedding: T_ 65536, V 32000, D 1024, float16 (zoo_bench.sh's large size)
    T_, V, D = 65536, 32000, 1024
    W = torch.randn(V, D, dtype=torch.float16, device=dev)
    ids = torch.randint(0, V, (T_,), dtype=torch.int32, device=dev)
    report("embedding", lambda: F.embedding(ids, W), T_ * 4 + V * D * 2 + T_ * D * 2)
    # gather_rows: M 65536, R 32768, N 1024, float32
    M, R, N = 65536, 32768, 1024
    X = torch.randn(R, N, dtype=torch.float32, device=dev)
    index = torch.randint(0, R, (M,), dtype=torch.int32, device=dev)
    report("gather_rows", lambda: torch.index_select(X, 0, index), M * 4 + R * N * 4 + M * N * 4)
    # groupnorm: B 32, C 512, HW 4096, 32 groups, float16 with affine parameters
    B, C, HW = 32, 512, 4096
    Xg = torch.randn(B, C, HW, dtype=torch.float16, device=dev)
    g = torch.randn(C, dtype=torch.float16, device=dev)
    b = torch.randn(C, dtype=torch.float16, device=dev)
    report("groupnorm", lambda: F.group_norm(Xg, 32, g, b, 1e-5), 2 * B * C * HW * 2 + 2 * C * 2)


if __name__ == "__main__":
    main()
