#!/usr/bin/env python3
"""MLA decode (examples/deepseek_mla/mla_decode.tl): tlc's split kernel and its
combine against torch references, all timed in this process on the same GPU
with CUDA events.

    mla_bench.py --runtime LIB --module M.cubin [--module ...] [--iters N]

Each module is a `tlc build --target=cuda:sm_XX` of mla_decode.tl with batch
and seqlen_kv bound by -D (and any tile parameters); its metadata
(M.cubin.json) says which. Both kernels are launched through libtlc_runtime's
C API (ctypes) on torch tensors, the output is checked against torch's, and
the pair is timed against
  - torch eager: scores = Q K^T in the input type, softmax in float32, P V;
  - scaled_dot_product_attention with the 128 query heads as the query rows
    of one head (every head reads the one latent KV head), where a backend
    takes a value width (512) other than the key width (576).
FLOPs: 2 * batch * h_q * seqlen_kv * (576 + 512). Prints one line per module:
    bench <shape> tlc <ms> <TFLOP/s> | eager <ms> <TFLOP/s> ratio <x> | sdpa(<backend>) ...
"""
import ctypes
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_bench import DTYPES, Arg, parse_and_load, sdpa_columns, tensor_arg, time_ms  # noqa: E402

FLOAT32 = 11


def float_arg(v):
    a = Arg()
    a.kind = 1
    a.scalar.dtype = FLOAT32
    a.scalar.value.f = v
    return a


def main():
    args, rt = parse_and_load()
    failures = 0
    for path in args.module:
        meta = json.load(open(path + ".json"))
        kernels = {k["name"]: k for k in meta["kernels"]}
        split_meta = next(k for n, k in kernels.items() if n.startswith("mla_decode") and "combine" not in n)
        combine_meta = next(k for n, k in kernels.items() if "combine" in n)
        bind = {b["name"]: b["value"] for b in split_meta["bindings"]}
        batch, seqlen = int(bind["batch"]), int(bind["seqlen_kv"])
        h_q, dv, dpe = int(bind.get("h_q", 128)), int(bind.get("dv", 512)), int(bind.get("dpe", 64))
        num_split = int(bind.get("num_split", 4))
        code, dt = DTYPES[bind.get("dtype", "float16")]
        mod = ctypes.c_void_p()
        split, combine = ctypes.c_void_p(), ctypes.c_void_p()
        if rt.tlcLoadModule(path.encode(), ctypes.byref(mod)) or \
           rt.tlcGetKernel(mod, split_meta["name"].encode(), ctypes.byref(split)) or \
           rt.tlcGetKernel(mod, combine_meta["name"].encode(), ctypes.byref(combine)):
            print(f"bench {path}: cannot load: {rt.tlcGetLastError().decode()}")
            failures += 1
            continue
        torch.manual_seed(0)
        q = torch.randn(batch, h_q, dv, device="cuda", dtype=dt)
        q_pe = torch.randn(batch, h_q, dpe, device="cuda", dtype=dt)
        kv = torch.randn(batch, seqlen, 1, dv, device="cuda", dtype=dt)
        k_pe = torch.randn(batch, seqlen, 1, dpe, device="cuda", dtype=dt)
        sm_scale = (dv + dpe) ** -0.5
        glse = torch.empty(batch, h_q, num_split, device="cuda", dtype=torch.float32)
        o_part = torch.empty(batch, h_q, num_split, dv, device="cuda", dtype=torch.float32)
        o = torch.empty(batch, h_q, dv, device="cuda", dtype=dt)
        split_args = (Arg * 7)(tensor_arg(q, code), tensor_arg(q_pe, code), tensor_arg(kv, code),
                               tensor_arg(k_pe, code), float_arg(sm_scale), tensor_arg(glse, FLOAT32),
                               tensor_arg(o_part, FLOAT32))
        combine_args = (Arg * 3)(tensor_arg(glse, FLOAT32), tensor_arg(o_part, FLOAT32), tensor_arg(o, code))
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

        def run_tlc():
            if rt.tlcLaunch(split, split_args, 7, stream) or rt.tlcLaunch(combine, combine_args, 3, stream):
                raise RuntimeError(rt.tlcGetLastError().decode())

        # The keys are [KV, K_pe]; the values KV itself.
        qk = torch.cat([q, q_pe], dim=-1)                        # (batch, h_q, 576)
        keys = torch.cat([kv, k_pe], dim=-1).squeeze(2)          # (batch, seqlen, 576)
        values = kv.squeeze(2)                                   # (batch, seqlen, 512)

        def eager():
            s = torch.matmul(qk, keys.transpose(1, 2))
            pr = torch.softmax(s.float() * sm_scale, dim=-1).to(dt)
            return torch.matmul(pr, values)

        run_tlc()
        ref = eager()
        err = (o.float() - ref.float()).abs().max().item()
        ok = err < 2e-2
        failures += not ok
        flops = 2 * batch * h_q * seqlen * (dv + dpe + dv)
        t = time_ms(run_tlc, args.iters)
        tiles = " ".join(f"{k}={v}" for k, v in bind.items() if k not in ("batch", "seqlen_kv"))
        line = f"bench batch={batch} seqlen_kv={seqlen} {tiles}: tlc {t:.3f} ms {flops / t / 1e9:.0f} TFLOP/s " \
               f"(max err {err:.1e}{'' if ok else ' FAIL'})"
        te = time_ms(eager, args.iters)
        line += f" | eager {te:.3f} ms {flops / te / 1e9:.0f} TFLOP/s ratio {te / t:.3f}"
        qs, ks, vs = qk.unsqueeze(1), keys.unsqueeze(1), values.unsqueeze(1)
        line += sdpa_columns(lambda: F.scaled_dot_product_attention(qs, ks, vs, scale=sm_scale), flops, t, args.iters)
        print(line, flush=True)
        rt.tlcUnloadModule(mod)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
