// Gemms on GPUs without NVIDIA's tensor cores (the HIP dialect, gpu_dialect.h):
// the accumulator keeps the mma.sync register layout that layout inference
// planned (so epilogues and reductions stay in registers), and each thread
// accumulates its own elements of it with multiply-adds, reading the
// operands from shared memory. An A operand held in registers (an mma group's
// tile, cuda_fragment_layout.h) is read from the lane of the thread's row
// group that holds it, with a 32-lane shuffle.
//
// On the HIP targets float16, bfloat16, float32, int8 and (gfx942) float8
// gemms run on MFMA instead (cuda_mfma.cpp); this correct, slow path remains
// for float8 on gfx90a (no float8 MFMA), for mixed float8 operands, and for
// tiles that are not whole 16 x 16 blocks per wavefront
// (docs/hip-backend.md).
#include "compiler/backends/cuda/cuda_kernel_emitter.h"

namespace tlc::cuda {

using namespace ir;

void KernelEmitter::emitGemmLayoutFma(const GemmStmt* g, const MmaShape& s, const std::string& acc, int64_t regs) {
  const DType accT = s.kind == MmaKind::S8 ? DType::Int32 : DType::Float32;
  const BufferInfo& aInfo = bufs_[g->a.buffer.get()];
  const bool aRegister = aInfo.place == Placement::Register;
  // A register A operand holds V columns per lane and atom (RegisterLayout::vector).
  const int64_t V = aInfo.mmaVector;
  const int64_t wn = s.n / s.warpsN, atomsN = wn / 8, atomsK = s.k / (4 * V);
  Var r = makeVar("r"), k = makeVar("k");
  markNonNegative(r);
  markNonNegative(k);
  Expr rE = makeVarRef(r), kE = makeVarRef(k);
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(r) + " = 0; " + varName(r) + " < " +
       std::to_string(regs) + "; ++" + varName(r) + ")");
  auto [i, j] = mmaAccumulatorIndex(s.m, s.n, s.warpsM, s.warpsN, threadIdx(), rE, 0, s.colMajor);
  std::string sum = fresh("sum");
  line(typeName(accT) + " " + sum + " = " + acc + "[" + varName(r) + "];");
  open("for (int " + varName(k) + " = 0; " + varName(k) + " < " + std::to_string(s.k) + "; ++" + varName(k) + ")");
  std::string a;
  if (aRegister) {
    // A(i, k) of the thread's row sits in lane (i % 8) * 4 + (k % 4V) / V of
    // its warp, register (atom row * atomsK + k / 4V) * 2V + row half * V + k % V.
    Expr atom = floorDiv(rE, makeInt(4)), half = floorDiv(floorMod(rE, makeInt(4)), makeInt(2));
    Expr reg =
        add(mul(add(mul(floorDiv(atom, makeInt(atomsN)), makeInt(atomsK)), floorDiv(kE, makeInt(4 * V))), makeInt(2 * V)),
            add(mul(half, makeInt(V)), floorMod(kE, makeInt(V))));
    Expr lane = add(mul(floorDiv(floorMod(threadIdx(), makeInt(32)), makeInt(4)), makeInt(4)),
                    floorDiv(floorMod(kE, makeInt(4 * V)), makeInt(V)));
    a = "__shfl_sync(0xffffffffu, tlc::f(" + aInfo.name + "[" + expr(reg) + "]), " + expr(lane) + ", 32)";
  } else {
    a = cast(accT, g->a.buffer->dtype, access(g->a.buffer, operandIndex(g->a, g->transA, i, kE)));
  }
  std::string b = cast(accT, g->b.buffer->dtype, access(g->b.buffer, operandIndex(g->b, g->transB, kE, j)));
  line(sum + " += " + a + " * " + b + ";");
  close();
  line(acc + "[" + varName(r) + "] = " + sum + ";");
  close();
}

}  // namespace tlc::cuda
