// Gemms on the CDNA matrix cores (the HIP dialect, gpu_dialect.h): the MFMA
// wavefront grid and block of a gemm, its accumulator layout, and the
// emission of operand loads from LDS and v_mfma calls.
//
// A float16 / bfloat16 gemm with float32 accumulation runs as
// v_mfma_f32_32x32x8{f16,bf16_1k} or v_mfma_f32_16x16x16{f16,bf16_1k}, an
// int8 one with int32 accumulation as v_mfma_i32_32x32x8i8 or
// v_mfma_i32_16x16x16i8 on gfx90a and v_mfma_i32_32x32x16_i8 or
// v_mfma_i32_16x16x32_i8 on gfx942, a float32 one as v_mfma_f32_32x32x2f32
// or v_mfma_f32_16x16x4f32 (full float32 products, unlike NVIDIA's tf32),
// a float8 one (both operands e4m3 or both e5m2, float32 accumulation) on
// gfx942 as v_mfma_f32_32x32x16_{fp8_fp8,bf8_bf8} or
// v_mfma_f32_16x16x32_{fp8_fp8,bf8_bf8}, whose FNUZ inputs are handed the
// OCP bytes as half their values (the accumulator is held at a quarter
// around them; gfx90a has no float8 MFMA)
// (mfmaShapeOf in cuda_mma.h; runtime/hip/tlc_hip.h's tlc::mfma_* helpers).
// With S the block, G = 64 / S lane groups and E elements a lane
// (mfmaLaneElems: 8 for gfx942's int8 and float8 forms, 1 for float32, else 4), lane l
// of a wavefront holds, per k step of E * G
// (compiler/backends/cuda_emu/isa_mfma.h):
//   A[i][k]  i = l % S, k = E * (l / S) + v       (v < E)
//   B[k][j]  j = l % S, k = E * (l / S) + v
//   D[i][j]  j = l % S, i = 4 * G * (r / 4) + 4 * (l / S) + r % 4   (register r)
// so a row of D lies in S consecutive lanes of one half of the wavefront
// (row reductions shuffle within 32 lanes) and each thread holds one column
// of each block.
//
// An A operand held in registers (an accumulator-layout tile, as attention's
// probabilities) is staged through LDS: the accumulator layout gives each
// lane one column and several rows, while the A operand gives each lane one
// row and 4 consecutive k; converting in registers would need a lane
// permutation whose source register depends on the reading lane (one
// ds_bpermute per candidate register), so every thread writes its elements
// to an LDS stage of [M, K] (the kernel's scratch area), the block
// synchronizes, and the operand loads read the stage like a shared A.
#include <functional>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_mma.h"

namespace tlc::cuda {

using namespace ir;

namespace {

bool cdna3(const std::string& arch) { return arch.rfind("gfx94", 0) == 0; }

}  // namespace

int64_t mfmaLaneElems(MmaKind kind, const std::string& arch) {
  if (kind == MmaKind::TF32) return 1;
  return isByteMma(kind) && cdna3(arch) ? 8 : 4;
}

bool mfmaShapeOf(int64_t threads, bool fullRow, const std::string& arch, MmaShape* s) {
  // gfx90a has no float8 MFMA.
  if (isF8(s->kind) && !cdna3(arch)) return false;
  if (threads % 64 || s->m % 16 || s->n % 16) return false;
  const int64_t waves = threads / 64;
  int64_t best = -1, wm = 0, wn = 0;
  for (int64_t a = 1; a <= waves; ++a) {
    if (waves % a) continue;
    int64_t b = waves / a;
    if ((s->m / 16) % a || (s->n / 16) % b) continue;
    int64_t cost = s->m / a + s->n / b;
    if (best < 0 || cost < best || (cost == best && a > wm)) {
      best = cost;
      wm = a;
      wn = b;
    }
  }
  if (best < 0) return false;
  if (fullRow && (s->m / 16) % waves == 0) {
    wm = waves;
    wn = 1;
  }
  s->warpsM = wm;
  s->warpsN = wn;
  s->mfma = (s->m / wm) % 32 == 0 && (s->n / wn) % 32 == 0 ? 32 : 16;
  s->kStep = mfmaKStep(s->kind, s->mfma, arch);
  return s->k % s->kStep == 0;
}

int64_t mfmaStagePitch(int64_t m, int64_t k, int64_t bytes, int64_t E, int64_t S) {
  // A thread's register r holds row 4 * (l / S) + r % 4 (of its block's
  // first 4 G rows), column l % S; the operand reads take row l % S, E
  // elements from column E * (l / S) of each k step.
  auto wavefronts = [&](int64_t pitch) {
    int64_t total = 0;
    std::vector<int64_t> offs;
    for (int64_t half = 0; half < 64; half += 32) {
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t c0 = 0; c0 + S <= k; c0 += S) {
          offs.clear();
          for (int64_t l = half; l < half + 32; ++l) offs.push_back(((4 * (l / S) + r) * pitch + c0 + l % S) * bytes);
          total += ldsWavefronts(offs, bytes);
        }
      for (int64_t k0 = 0; k0 + E * 64 / S <= k; k0 += E * 64 / S) {
        offs.clear();
        for (int64_t l = half; l < half + 32; ++l) offs.push_back(((l % S) * pitch + k0 + E * (l / S)) * bytes);
        total += ldsWavefronts(offs, E * bytes);
      }
    }
    return total;
  };
  int64_t best = k, bestCount = wavefronts(k);
  for (int64_t pad = E; pad * bytes <= 32 && m >= S; pad += E)
    if (int64_t n = wavefronts(k + pad); n < bestCount) {
      best = k + pad;
      bestCount = n;
    }
  return best;
}

std::optional<layout::Layout> mfmaStagingLayout(int64_t rows, int64_t cols, int64_t bytes, int64_t padElems) {
  // `offset(r, c)`: the element offset of (r, c) under a candidate.
  auto wavefronts = [&](const std::function<int64_t(int64_t, int64_t)>& offset) {
    int64_t total = 0;
    std::vector<int64_t> offs;
    for (int64_t S : {16, 32})
      for (int64_t b0 = 0; b0 + 4 * 64 / S <= rows; b0 += 4 * 64 / S)
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t c0 = 0; c0 + S <= cols; c0 += S)
            for (int64_t half = 0; half < 64; half += 32) {
              offs.clear();
              for (int64_t l = half; l < half + 32; ++l) offs.push_back(offset(b0 + 4 * (l / S) + r, c0 + l % S) * bytes);
              total += ldsWavefronts(offs, bytes);
            }
    return total + rowMajorCopyWavefronts(rows, cols, bytes, offset);
  };
  if (16 % bytes || cols % (16 / bytes) || !layout::Layout::chunksXorFits(rows, cols, (int)bytes, 4)) return std::nullopt;
  int64_t bestCount = wavefronts([&](int64_t r, int64_t c) { return r * (cols + padElems) + c; });
  std::optional<layout::Layout> best;
  for (int64_t mask : {1, 2, 4}) {
    layout::Layout l = layout::Layout::chunksXored(rows, cols, (int)bytes, 4, mask);
    int64_t n = wavefronts([&](int64_t r, int64_t c) { return l.apply({r, c})[0]; });
    if (n < bestCount) {
      bestCount = n;
      best = std::move(l);
    }
  }
  return best;
}

std::pair<Expr, Expr> mfmaAccumulatorIndex(int64_t m, int64_t n, int64_t wavesM, int64_t wavesN, int64_t block,
                                           const Expr& tid, const Expr& reg) {
  const int64_t wm = m / wavesM, wn = n / wavesN, blocksN = wn / block, groups = 64 / block,
                regs = block * block / 64;
  Expr wave = floorDiv(tid, makeInt(64)), lane = floorMod(tid, makeInt(64));
  Expr blk = floorDiv(reg, makeInt(regs)), r = floorMod(reg, makeInt(regs));
  Expr inBlockRow = add(add(mul(floorDiv(r, makeInt(4)), makeInt(4 * groups)), mul(floorDiv(lane, makeInt(block)), makeInt(4))),
                        floorMod(r, makeInt(4)));
  Expr row = add(add(mul(floorDiv(wave, makeInt(wavesN)), makeInt(wm)), mul(floorDiv(blk, makeInt(blocksN)), makeInt(block))),
                 inBlockRow);
  Expr col = add(add(mul(floorMod(wave, makeInt(wavesN)), makeInt(wn)), mul(floorMod(blk, makeInt(blocksN)), makeInt(block))),
                 floorMod(lane, makeInt(block)));
  return {row, col};
}

void KernelEmitter::emitGemmMfma(const GemmStmt* g, const MmaShape& s, const std::string& acc) {
  const int64_t S = s.mfma, regs = S * S / 64, wm = s.m / s.warpsM, wn = s.n / s.warpsN, bm = wm / S, bn = wn / S;
  const int64_t E = mfmaLaneElems(s.kind, options_.arch);  // A and B elements per lane
  const std::string type = s.kind == MmaKind::S8       ? "i8"
                           : s.kind == MmaKind::BF16   ? "bf16"
                           : s.kind == MmaKind::TF32   ? "f32"
                           : s.kind == MmaKind::F8E4M3 ? "e4m3"
                           : s.kind == MmaKind::F8E5M2 ? "e5m2"
                                                       : "f16";
  const std::string fn = "tlc::mfma_" + std::to_string(S) + "x" + std::to_string(S) + "x" + std::to_string(s.kStep) + "_" + type;
  const std::string T = typeName(g->a.buffer->dtype);
  const std::string unroll = "#pragma unroll\n" + std::string(indent_ * 2, ' ');
  Var lane = makeVar("lane"), wr = makeVar("wave_m"), wc = makeVar("wave_n");
  for (auto& v : {lane, wr, wc}) markNonNegative(v);
  line("const int " + varName(lane) + " = tid % 64;");
  line("const int " + varName(wr) + " = (tid / 64) / " + std::to_string(s.warpsN) + ";");
  line("const int " + varName(wc) + " = (tid / 64) % " + std::to_string(s.warpsN) + ";");

  // A from registers: every thread writes its elements of the tile to the
  // stage, then the block synchronizes.
  const BufferInfo& aInfo = bufs_[g->a.buffer.get()];
  const bool aRegister = aInfo.place == Placement::Register;
  const int64_t pitch = aRegister ? mfmaStagePitches_.at(g) : 0;
  std::string stage;
  if (aRegister) {
    TLC_CHECK(rowScratchOffset_ >= 0, "an MFMA register A operand has its LDS stage");
    stage = fresh("a_stage");
    line(T + "* " + stage + " = reinterpret_cast<" + T + "*>(tlc_smem + " + std::to_string(rowScratchOffset_) + ");");
    Var r = makeVar("r");
    markNonNegative(r);
    open(unroll + "for (int " + varName(r) + " = 0; " + varName(r) + " < " + std::to_string(aInfo.elems) + "; ++" +
         varName(r) + ")");
    auto [i, k] = mmaAccumulatorIndex(s.m, s.k, aInfo.warpsM, aInfo.warpsN, threadIdx(), makeVarRef(r), aInfo.mfma,
                                      aInfo.colMajor, aInfo.mmaVector);
    line(stage + "[" + expr(add(mul(i, makeInt(pitch)), k)) + "] = " + aInfo.name + "[" + varName(r) + "];");
    close();
    line(syncThreads());
  }
  auto aElem = [&](const Expr& row, const Expr& k) {
    if (aRegister) return stage + "[" + expr(add(mul(row, makeInt(pitch)), k)) + "]";
    return access(g->a.buffer, operandIndex(g->a, g->transA, row, k));
  };
  auto bElem = [&](const Expr& k, const Expr& col) { return access(g->b.buffer, operandIndex(g->b, g->transB, k, col)); };
  // An operand whose k runs along its buffer's contiguous dimension gives a
  // lane its E elements as one read (8 bytes, 4 for gfx90a's int8): k0 +
  // E * (l / S) is a multiple of E, rows (with their padding) are whole
  // reads, and the swizzles move 16-byte chunks or runs of at least one
  // read whole.
  auto vectorK = [&](const Region& r, bool kLast) {
    int d0, d1;
    int64_t e0, e1, last, mn;
    const BufferInfo& info = bufs_[r.buffer.get()];
    return kLast && matrixDims(r, &d0, &d1, &e0, &e1) && d1 == (int)r.buffer->shape.size() - 1 &&
           info.place == Placement::Shared && info.rowPad % E == 0 && info.elems % E == 0 &&
           constInt(r.buffer->shape.back(), &last) && last % E == 0 && constInt(r.ranges[d1].min, &mn) && mn % E == 0;
  };
  const bool vecA = aRegister || vectorK(g->a, !g->transA), vecB = vectorK(g->b, g->transB);

  // The float8 helpers add a quarter of the product (tlc_hip.h: the OCP
  // operands read as FNUZ are half their values): the accumulator is held at
  // a quarter of its value around them (a power of two: exact but below
  // 2^-124, where float32 loses bits).
  const bool quarter = isF8(s.kind);
  auto scaleAccumulator = [&](const char* by) {
    line("#pragma unroll");
    line("for (int r_ = 0; r_ < " + std::to_string(bm * bn * regs) + "; ++r_) " + acc + "[r_] *= " + by + ";");
  };
  if (quarter && !g->clearAccum) scaleAccumulator("0.25f");

  Var kk = makeVar("kk"), v = makeVar("v");
  markNonNegative(kk);
  markNonNegative(v);
  open(unroll + "for (int " + varName(kk) + " = 0; " + varName(kk) + " < " + std::to_string(s.k) + "; " + varName(kk) +
       " += " + std::to_string(s.kStep) + ")");
  std::string af = fresh("a_frag"), bfr = fresh("b_frag");
  const std::string e = std::to_string(E);
  line("__align__(8) " + T + " " + af + "[" + std::to_string(bm) + "][" + e + "];");
  line("__align__(8) " + T + " " + bfr + "[" + std::to_string(bn) + "][" + e + "];");
  Expr laneE = makeVarRef(lane), vE = makeVarRef(v);
  Expr inBlock = floorMod(laneE, makeInt(S));
  Expr k0 = add(makeVarRef(kk), mul(floorDiv(laneE, makeInt(S)), makeInt(E))), k = add(k0, vE);
  const std::string vLoop = "#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(v) + " = 0; " + varName(v) + " < " + e + "; ++" + varName(v) + ") ";
  for (int64_t bi = 0; bi < bm; ++bi) {
    Expr row = add(mul(makeVarRef(wr), makeInt(wm)), add(makeInt(bi * S), inBlock));
    std::string dst = af + "[" + std::to_string(bi) + "]";
    if (vecA) line("tlc::copy_vec<" + T + ", " + e + ">(" + dst + ", &" + aElem(row, k0) + ");");
    else line(vLoop + dst + "[" + varName(v) + "] = " + aElem(row, k) + ";");
  }
  for (int64_t bj = 0; bj < bn; ++bj) {
    Expr col = add(mul(makeVarRef(wc), makeInt(wn)), add(makeInt(bj * S), inBlock));
    std::string dst = bfr + "[" + std::to_string(bj) + "]";
    if (vecB) line("tlc::copy_vec<" + T + ", " + e + ">(" + dst + ", &" + bElem(k0, col) + ");");
    else line(vLoop + dst + "[" + varName(v) + "] = " + bElem(k, col) + ";");
  }
  for (int64_t bi = 0; bi < bm; ++bi)
    for (int64_t bj = 0; bj < bn; ++bj)
      line(fn + "(&" + acc + "[" + std::to_string((bi * bn + bj) * regs) + "], " + af + "[" + std::to_string(bi) +
           "], " + bfr + "[" + std::to_string(bj) + "]);");
  close();
  if (quarter) scaleAccumulator("4.0f");
  // The stage is scratch space that the next staging or reduction rewrites;
  // after this barrier nothing of the gemm is pending.
  if (aRegister) {
    line(syncThreads());
    pendingAfter_ = Accesses();
  }
}

}  // namespace tlc::cuda
