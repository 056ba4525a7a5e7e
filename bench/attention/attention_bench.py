#!/usr/bin/env python3
"""Flash-attention forward: tlc's kernel against torch's scaled_dot_product_attention,
both timed in this process on the same GPU with CUDA events.

    attention_bench.py --runtime LIB --module M.cubin [--module ...] [--iters N]

Each module is a `tlc build --target=cuda:sm_XX` of
examples/flash_attention/mha_fwd_bshd.tl with B, S, H, D, causal, groups and dtype
bound by -D; its metadata (M.cubin.json) says which. The kernel is loaded and
launched through libtlc_runtime's C API (ctypes) on torch tensors, checked
against torch's output, and timed against SDPA on the same inputs (in torch's
(B, H, S, D) layout): the backend torch picks by default, and each backend
torch has (flash, cuDNN, efficient) where it runs. Prints one line per module:
    bench <name> tlc <ms> <TFLOP/s> | sdpa(<backend>) <ms> <TFLOP/s> ratio <x> | ...
"""
import argparse
import ctypes
import json
import sys

import torch
import torch.nn.functional as F

TLC_MAX_RANK = 8
DTYPES = {"float16": (9, torch.float16), "bfloat16": (10, torch.bfloat16)}


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * TLC_MAX_RANK)]


class ScalarValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double)]


class Scalar(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("value", ScalarValue)]


class Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tensor", Tensor), ("scalar", Scalar)]


def tensor_arg(t, code):
    a = Arg()
    a.kind = 0
    a.tensor.data = t.data_ptr()
    a.tensor.dtype = code
    a.tensor.rank = t.dim()
    for i, s in enumerate(t.shape):
        a.tensor.shape[i] = s
    return a


def time_ms(fn, iters):
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def parse_and_load():
    """The command line (--runtime, --module..., --iters) and libtlc_runtime loaded through ctypes."""
    p = argparse.ArgumentParser()
    p.add_argument("--runtime", required=True)
    p.add_argument("--module", action="append", required=True)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()
    rt = ctypes.CDLL(args.runtime)
    rt.tlcGetLastError.restype = ctypes.c_char_p
    rt.tlcLaunch.argtypes = [ctypes.c_void_p, ctypes.POINTER(Arg), ctypes.c_int32, ctypes.c_void_p]
    return args, rt


def sdpa_columns(fn, flops, t, iters):
    """` | sdpa(<backend>) <ms> <TFLOP/s> ratio <x>` for torch's default choice and each backend
    it has (flash, cuDNN, efficient), timing `fn` (a scaled_dot_product_attention call) under
    each against tlc's `t` ms; `n/a` where the backend does not take the inputs."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    out = ""
    for name, be in [("default", None), ("flash", SDPBackend.FLASH_ATTENTION),
                     ("cudnn", SDPBackend.CUDNN_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION)]:
        try:
            if be is None:
                ts = time_ms(fn, iters)
            else:
                with sdpa_kernel(be):
                    ts = time_ms(fn, iters)
        except RuntimeError:
            out += f" | sdpa({name}) n/a"
            continue
        out += f" | sdpa({name}) {ts:.3f} ms {flops / ts / 1e9:.0f} TFLOP/s ratio {ts / t:.3f}"
    return out


def main():
    args, rt = parse_and_load()
    failures = 0
    for path in args.module:
        meta = json.load(open(path + ".json"))
        kernel_meta = meta["kernels"][0]
        bind = {b["name"]: b["value"] for b in kernel_meta["bindings"]}
        B, S, H, D = (int(bind[k]) for k in ("B", "S", "H", "D"))
        groups = int(bind.get("groups", 1))
        causal = bind.get("causal", "False") in ("True", "true", "1")
        code, dt = DTYPES[bind.get("dtype", "float16")]
        mod, ker = ctypes.c_void_p(), ctypes.c_void_p()
        if rt.tlcLoadModule(path.encode(), ctypes.byref(mod)) or \
           rt.tlcGetKernel(mod, kernel_meta["name"].encode(), ctypes.byref(ker)):
            print(f"bench {path}: cannot load: {rt.tlcGetLastError().decode()}")
            failures += 1
            continue
        torch.manual_seed(0)
        q = torch.randn(B, S, H, D, device="cuda", dtype=dt)
        k = torch.randn(B, S, H // groups, D, device="cuda", dtype=dt)
        v = torch.randn(B, S, H // groups, D, device="cuda", dtype=dt)
        o = torch.empty_like(q)
        argv = (Arg * 4)(*(tensor_arg(t, code) for t in (q, k, v, o)))
        stream = torch.cuda.current_stream().cuda_stream

        def run_tlc():
            if rt.tlcLaunch(ker, argv, 4, ctypes.c_void_p(stream)):
                raise RuntimeError(rt.tlcGetLastError().decode())

        # torch's layout: (B, H, S, D), K/V heads repeated for grouped queries.
        qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
        if groups > 1:
            kt, vt = (x.repeat_interleave(groups, dim=1) for x in (kt, vt))
        run_tlc()
        ref = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal).transpose(1, 2)
        err = (o.float() - ref.float()).abs().max().item()
        ok = err < 2e-2
        failures += not ok
        flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
        t = time_ms(run_tlc, args.iters)
        line = f"bench {B}x{S}x{H}x{D} causal={causal} groups={groups} {bind.get('dtype', 'float16')}: " \
               f"tlc {t:.3f} ms {flops / t / 1e9:.0f} TFLOP/s (max err {err:.1e}{'' if ok else ' FAIL'})"
        line += sdpa_columns(lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal), flops, t, args.iters)
        print(line, flush=True)
        rt.tlcUnloadModule(mod)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
