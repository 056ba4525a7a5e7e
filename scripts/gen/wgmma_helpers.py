#!/usr/bin/env python3
"""Writes the wgmma helpers of runtime/cuda/tlc_cuda_hopper.h (between the
`wgmma helpers begin/end` markers): per instruction width N, the float16 and
bfloat16 forms of `wgmma.mma_async ... m64nNk16.f32` with A from a
shared-memory descriptor (wgmma_m64nNk16) and from registers
(wgmma_rs_m64nNk16), the int8 form `m64nNk32.s32.s8.s8` (wgmma_s8_m64nNk32),
the float8 forms `m64nNk32.f32.e4m3.e4m3` / `.e5m2.e5m2` (wgmma_f8_m64nNk32)
and the tf32 form `m64nNk8.f32.tf32.tf32` (wgmma_tf32_m64nNk8), and these two
and the int8 one with A from registers (wgmma_f8_rs_m64nNk32,
wgmma_tf32_rs_m64nNk8, wgmma_s8_rs_m64nNk32), with one
inline-asm operand per accumulator register.
Run it after changing the list of widths:  python3 scripts/gen/wgmma_helpers.py
"""
import pathlib
import re

WIDTHS = [8, 16, 32, 64, 128, 256]
KINDS = [(0, "f16"), (1, "bf16")]

def function(template, signature, n, a_operand, inputs, first_input):
    """One helper: `first_input` is the asm operand number of its first
    input (the accumulators come first); `a_operand` the A operand text of
    the instruction given that numbering; `inputs` the input constraints."""
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    lines = [template, f"__device__ __forceinline__ void {signature} {{"]
    for i, (kind, t) in enumerate(KINDS):
        kw = "if" if i == 0 else "else if"
        a, rest = a_operand(first_input)
        lines.append(f"  {kw} (Kind == {kind})")
        lines.append(f'    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{rest[1]}, 0;\\n"')
        trans = ", ".join(f"%{x}" for x in rest[2:])
        lines.append(f'                 "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{d}}}, {a}, %{rest[0]}, p, 1, 1, {trans};\\n}}\\n"')
        lines.append(f"                 : {outs}")
        lines.append(f"                 : {inputs});")
    lines.append("}")
    return "\n".join(lines)

def helper(n):
    # A and B descriptors, scale_d, TA, TB.
    def operands(first):
        return f"%{first}", [first + 1, first + 2, first + 3, first + 4]
    return function("template <int Kind, int TA, int TB>",
                    f"wgmma_m64n{n}k16(float* d, u64 desc_a, u64 desc_b, int scale_d)", n, operands,
                    '"l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TA), "n"(TB)', n // 2)

def helper_rs(n):
    # A's four registers, the B descriptor, scale_d, TB.
    def operands(first):
        return "{" + ", ".join(f"%{first + i}" for i in range(4)) + "}", [first + 4, first + 5, first + 6]
    return function("template <int Kind, int TB>",
                    f"wgmma_rs_m64n{n}k16(float* d, const unsigned* a, u64 desc_b, int scale_d)", n, operands,
                    '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TB)', n // 2)

def kmajor(name, n, acc_type, constraint, instructions, scales, rs):
    """A K-major form without transposes: `instructions` (one wgmma, with its
    shape and types, per value of the template argument Kind; a single one
    takes no template), `acc_type` D registers bound with `constraint`; A
    from a shared-memory descriptor, or, `rs`, from four 32-bit registers
    per thread (the A fragment of the thread's 16-row slice); `scales`: the
    float forms' immediate scale-a and scale-b operands."""
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"{constraint}"(d[{i}])' for i in range(regs))
    tail = ", 1, 1" if scales else ""
    if rs:
        a, b, p = "{" + ", ".join(f"%{regs + i}" for i in range(4)) + "}", regs + 4, regs + 5
        params, inputs = "const unsigned* a, u64 desc_b", '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d)'
    else:
        a, b, p = f"%{regs}", regs + 1, regs + 2
        params, inputs = "u64 desc_a, u64 desc_b", '"l"(desc_a), "l"(desc_b), "r"(scale_d)'
    lines = ["template <int Kind>"] if len(instructions) > 1 else []
    lines.append(f"__device__ __forceinline__ void {name}({acc_type}* d, {params}, int scale_d) {{")
    for i, instruction in enumerate(instructions):
        pad = "  "
        if len(instructions) > 1:
            lines.append(f"  {'if' if i == 0 else 'else if'} (Kind == {i})")
            pad = "    "
        lines.append(f'{pad}asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{p}, 0;\\n"')
        lines.append(f'{pad}             "{instruction} {{{d}}}, {a}, %{b}, p{tail};\\n}}\\n"')
        lines.append(f"{pad}             : {outs}")
        lines.append(f"{pad}             : {inputs});")
    lines.append("}")
    return "\n".join(lines)

def helper_s8(n, rs):
    """int8: `wgmma ... m64nNk32.s32.s8.s8`, both operands K-major (8-bit
    wgmma has no transposes), A from a shared-memory descriptor or (`rs`)
    registers, int32 D."""
    return kmajor(f"wgmma_s8{'_rs' if rs else ''}_m64n{n}k32", n, "int", "+r",
                  [f"wgmma.mma_async.sync.aligned.m64n{n}k32.s32.s8.s8"], False, rs)

def helper_f8(n, rs):
    """float8: `wgmma ... m64nNk32.f32.T.T` with T = e4m3 (Kind 0) or e5m2
    (Kind 1) for both operands, K-major (8-bit wgmma has no transposes), A
    from a shared-memory descriptor or (`rs`) registers, float32 D."""
    return kmajor(f"wgmma_f8{'_rs' if rs else ''}_m64n{n}k32", n, "float", "+f",
                  [f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{t}.{t}" for t in ["e4m3", "e5m2"]], True, rs)

def helper_tf32(n, rs):
    """float32 operands read as tf32: `wgmma ... m64nNk8.f32.tf32.tf32`, both
    operands K-major (no transposes), A from a shared-memory descriptor or
    (`rs`) registers; the tensor cores ignore the low 13 mantissa bits of
    each float32."""
    return kmajor(f"wgmma_tf32{'_rs' if rs else ''}_m64n{n}k8", n, "float", "+f",
                  [f"wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32"], True, rs)

path = pathlib.Path(__file__).resolve().parents[2] / "runtime/cuda/tlc_cuda_hopper.h"
text = path.read_text()
begin, end = "// ---- wgmma helpers begin (scripts/gen/wgmma_helpers.py) ----", "// ---- wgmma helpers end ----"
# The SS forms (both operands from shared-memory descriptors), then the RS
# forms (A from four 32-bit registers per thread, the mma.sync A fragment of
# the thread's 16-row slice; no A transpose), then the int8, float8 and tf32
# SS forms and their RS forms.
body = "\n".join([helper(n) for n in WIDTHS] + [helper_rs(n) for n in WIDTHS] + [helper_s8(n, False) for n in WIDTHS] +
                 [helper_f8(n, False) for n in WIDTHS] + [helper_tf32(n, False) for n in WIDTHS] +
                 [helper_s8(n, True) for n in WIDTHS] + [helper_f8(n, True) for n in WIDTHS] +
                 [helper_tf32(n, True) for n in WIDTHS])
new = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: begin + "\n" + body + "\n" + end, text, flags=re.S)
assert new != text or body in text, "markers not found"
path.write_text(new)
