#!/usr/bin/env python3
"""Writes the wgmma helpers of runtime/cuda/tlc_cuda.h (between the
`wgmma helpers begin/end` markers): per instruction width N, the float16 and
bfloat16 forms of `wgmma.mma_async ... m64nNk16.f32` with A from a
shared-memory descriptor (wgmma_m64nNk16) and from registers
(wgmma_rs_m64nNk16), with one inline-asm operand per accumulator register. Run it after changing the list
of widths:  python3 scripts/gen/wgmma_helpers.py
"""
import pathlib
import re

WIDTHS = [8, 16, 32, 64, 128, 256]
KINDS = [(0, "f16"), (1, "bf16")]

def helper(n):
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    a, b, s, ta, tb = regs, regs + 1, regs + 2, regs + 3, regs + 4
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    lines = [
        f"template <int Kind, int TA, int TB>",
        f"__device__ __forceinline__ void wgmma_m64n{n}k16(float* d, u64 desc_a, u64 desc_b, int scale_d) {{",
    ]
    for i, (kind, t) in enumerate(KINDS):
        kw = "if" if i == 0 else "else if"
        lines.append(f"  {kw} (Kind == {kind})")
        lines.append(f'    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"')
        lines.append(f'                 "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{d}}}, %{a}, %{b}, p, 1, 1, %{ta}, %{tb};\\n}}\\n"')
        lines.append(f"                 : {outs}")
        lines.append(f'                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TA), "n"(TB));')
    lines.append("}")
    return "\n".join(lines)

def helper_rs(n):
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    a0, b, s, tb = regs, regs + 4, regs + 5, regs + 6
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    a = ", ".join(f"%{a0 + i}" for i in range(4))
    lines = [
        f"template <int Kind, int TB>",
        f"__device__ __forceinline__ void wgmma_rs_m64n{n}k16(float* d, const unsigned* a, u64 desc_b, int scale_d) {{",
    ]
    for i, (kind, t) in enumerate(KINDS):
        kw = "if" if i == 0 else "else if"
        lines.append(f"  {kw} (Kind == {kind})")
        lines.append(f'    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"')
        lines.append(f'                 "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{d}}}, {{{a}}}, %{b}, p, 1, 1, %{tb};\\n}}\\n"')
        lines.append(f"                 : {outs}")
        lines.append(f'                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TB));')
    lines.append("}")
    return "\n".join(lines)

path = pathlib.Path(__file__).resolve().parents[2] / "runtime/cuda/tlc_cuda.h"
text = path.read_text()
begin, end = "// ---- wgmma helpers begin (scripts/gen/wgmma_helpers.py) ----", "// ---- wgmma helpers end ----"
# The SS forms (both operands from shared-memory descriptors), then the RS
# forms (A from four 32-bit registers per thread, the mma.sync A fragment of
# the thread's 16-row slice; no A transpose).
body = "\n".join([helper(n) for n in WIDTHS] + [helper_rs(n) for n in WIDTHS])
new = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: begin + "\n" + body + "\n" + end, text, flags=re.S)
assert new != text or body in text, "markers not found"
path.write_text(new)
