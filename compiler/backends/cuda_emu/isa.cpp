// The emulated PTX instruction set (see isa.h).
#include "compiler/backends/cuda_emu/isa.h"

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "runtime/cuda_emu/emu_float.h"

namespace tlc::cuda_emu::isa {

namespace fl = tlc_emu_float;

int elemBits(ElemType t) {
  switch (t) {
    case ElemType::F16:
    case ElemType::BF16: return 16;
    case ElemType::TF32:
    case ElemType::F32:
    case ElemType::S32: return 32;
    case ElemType::S8:
    case ElemType::U8:
    case ElemType::E4M3:
    case ElemType::E5M2: return 8;
  }
  return 32;
}

namespace {

const MmaInfo kMmaTable[TLC_EMU_MMA_KIND_COUNT] = {
    {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, ElemType::F16, ElemType::F16,
     ElemType::F32, 4, 2, 4},
    {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, ElemType::BF16,
     ElemType::BF16, ElemType::F32, 4, 2, 4},
    {"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 16, 8, 8, ElemType::F16, ElemType::F16,
     ElemType::F32, 2, 1, 4},
    {"mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 16, 8, 8, ElemType::BF16, ElemType::BF16,
     ElemType::F32, 2, 1, 4},
    {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 16, 8, 16, ElemType::F16, ElemType::F16,
     ElemType::F16, 4, 2, 2},
    {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, ElemType::TF32,
     ElemType::TF32, ElemType::F32, 4, 2, 4},
    {"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 16, 8, 4, ElemType::TF32,
     ElemType::TF32, ElemType::F32, 2, 1, 4},
    {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 16, 8, 32, ElemType::S8, ElemType::S8,
     ElemType::S32, 4, 2, 4},
    {"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 16, 8, 16, ElemType::S8, ElemType::S8,
     ElemType::S32, 2, 1, 4},
    {"mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", 16, 8, 32, ElemType::U8, ElemType::U8,
     ElemType::S32, 4, 2, 4},
    {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 16, 8, 32, ElemType::E4M3,
     ElemType::E4M3, ElemType::F32, 4, 2, 4},
    {"mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 16, 8, 32, ElemType::E5M2,
     ElemType::E5M2, ElemType::F32, 4, 2, 4},
};

}  // namespace

const MmaInfo* mmaInfo(int kind) {
  if (kind < 0 || kind >= TLC_EMU_MMA_KIND_COUNT) return nullptr;
  return &kMmaTable[kind];
}

// The A layouts by element width (PTX ISA, "Matrix Fragments for mma.m16n8k*").
Coord mmaAElement(int kind, int lane, int i) {
  const MmaInfo& in = *mmaInfo(kind);
  const int g = lane >> 2, t = lane & 3;
  switch (elemBits(in.a)) {
    case 16:
      if (in.k == 16) return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
      return {g + 8 * (i >> 1), 2 * t + (i & 1)};  // k8
    case 32:                                         // tf32
      if (in.k == 8) return {g + 8 * (i & 1), t + 4 * (i >> 1)};
      return {g + 8 * i, t};  // k4
    default:                  // 8-bit
      if (in.k == 32) return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
      return {g + 8 * (i >> 2), 4 * t + (i & 3)};  // k16
  }
}

Coord mmaBElement(int kind, int lane, int i) {
  const MmaInfo& in = *mmaInfo(kind);
  const int g = lane >> 2, t = lane & 3;
  switch (elemBits(in.b)) {
    case 16:
      if (in.k == 16) return {2 * t + (i & 1) + 8 * (i >> 1), g};
      return {2 * t + i, g};  // k8
    case 32:
      if (in.k == 8) return {t + 4 * i, g};
      return {t, g};  // k4
    default:
      if (in.k == 32) return {4 * t + (i & 3) + 16 * (i >> 2), g};
      return {4 * t + i, g};  // k16
  }
}

Coord mmaCElement(int kind, int lane, int i) {
  (void)kind;
  const int g = lane >> 2, t = lane & 3;
  return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}

double fragElement(ElemType t, const uint32_t* regs, int i) {
  switch (t) {
    case ElemType::F16: return fl::halfToFloat((uint16_t)(regs[i / 2] >> (16 * (i % 2))));
    case ElemType::BF16: return fl::bf16ToFloat((uint16_t)(regs[i / 2] >> (16 * (i % 2))));
    case ElemType::TF32: return fl::tf32Operand(regs[i]);
    case ElemType::F32: return fl::bitsFloat(regs[i]);
    case ElemType::S32: return (double)(int32_t)regs[i];
    case ElemType::S8: return (double)(int8_t)(uint8_t)(regs[i / 4] >> (8 * (i % 4)));
    case ElemType::U8: return (double)(uint8_t)(regs[i / 4] >> (8 * (i % 4)));
    case ElemType::E4M3: return fl::e4m3ToFloat((uint8_t)(regs[i / 4] >> (8 * (i % 4))));
    case ElemType::E5M2: return fl::e5m2ToFloat((uint8_t)(regs[i / 4] >> (8 * (i % 4))));
  }
  return 0;
}

void setFragElement(ElemType t, uint32_t* regs, int i, double v) {
  auto put16 = [&](uint16_t bits) {
    int sh = 16 * (i % 2);
    regs[i / 2] = (regs[i / 2] & ~(0xffffu << sh)) | ((uint32_t)bits << sh);
  };
  switch (t) {
    case ElemType::F16: put16(fl::floatToHalf((float)v)); break;
    case ElemType::BF16: put16(fl::floatToBf16((float)v)); break;
    case ElemType::TF32:
    case ElemType::F32: regs[i] = fl::floatBits((float)v); break;
    case ElemType::S32: regs[i] = (uint32_t)(int64_t)v; break;
    default: {
      int sh = 8 * (i % 4);
      uint8_t b = t == ElemType::E4M3   ? fl::floatToE4M3((float)v)
                  : t == ElemType::E5M2 ? fl::floatToE5M2((float)v)
                                        : (uint8_t)(int64_t)v;
      regs[i / 4] = (regs[i / 4] & ~(0xffu << sh)) | ((uint32_t)b << sh);
    }
  }
}

void mma(int kind, const uint32_t* const a[kWarpSize], const uint32_t* const b[kWarpSize],
         const uint32_t* const c[kWarpSize], uint32_t* const d[kWarpSize]) {
  const MmaInfo& in = *mmaInfo(kind);
  const int aElems = in.aRegs * 32 / elemBits(in.a);
  const int bElems = in.bRegs * 32 / elemBits(in.b);
  const int cElems = 4;
  std::vector<double> A(in.m * in.k), B(in.k * in.n), C(in.m * in.n);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int i = 0; i < aElems; ++i) {
      Coord p = mmaAElement(kind, lane, i);
      A[p.row * in.k + p.col] = fragElement(in.a, a[lane], i);
    }
    for (int i = 0; i < bElems; ++i) {
      Coord p = mmaBElement(kind, lane, i);
      B[p.row * in.n + p.col] = fragElement(in.b, b[lane], i);
    }
    for (int i = 0; i < cElems; ++i) {
      Coord p = mmaCElement(kind, lane, i);
      C[p.row * in.n + p.col] = fragElement(in.c, c[lane], i);
    }
  }
  const bool integer = in.c == ElemType::S32;
  std::vector<double> D(in.m * in.n);
  for (int r = 0; r < in.m; ++r)
    for (int col = 0; col < in.n; ++col) {
      if (integer) {
        int64_t acc = (int64_t)C[r * in.n + col];
        for (int kk = 0; kk < in.k; ++kk)
          acc += (int64_t)A[r * in.k + kk] * (int64_t)B[kk * in.n + col];
        D[r * in.n + col] = (double)(int32_t)(uint32_t)(uint64_t)acc;
      } else {
        double acc = C[r * in.n + col];
        for (int kk = 0; kk < in.k; ++kk) acc += A[r * in.k + kk] * B[kk * in.n + col];
        D[r * in.n + col] = acc;
      }
    }
  // Results are written only after all inputs were read: d may alias c.
  for (int lane = 0; lane < kWarpSize; ++lane) {
    uint32_t regs[4] = {0, 0, 0, 0};
    for (int i = 0; i < cElems; ++i) {
      Coord p = mmaCElement(kind, lane, i);
      setFragElement(in.c, regs, i, D[p.row * in.n + p.col]);
    }
    std::memcpy(d[lane], regs, sizeof(uint32_t) * in.cRegs);
  }
}

void ldmatrix(int num, bool trans, const uint16_t rows[4][8][8], uint32_t out[kWarpSize][4]) {
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int m = 0; m < num; ++m) {
      uint16_t lo, hi;
      const int r = lane / 4, c = 2 * (lane % 4);
      if (!trans) {
        lo = rows[m][r][c];
        hi = rows[m][r][c + 1];
      } else {
        lo = rows[m][c][r];
        hi = rows[m][c + 1][r];
      }
      out[lane][m] = (uint32_t)lo | ((uint32_t)hi << 16);
    }
}

void stmatrix(int num, bool trans, const uint32_t in[kWarpSize][4], uint16_t rows[4][8][8]) {
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int m = 0; m < num; ++m) {
      const int r = lane / 4, c = 2 * (lane % 4);
      uint16_t lo = (uint16_t)in[lane][m], hi = (uint16_t)(in[lane][m] >> 16);
      if (!trans) {
        rows[m][r][c] = lo;
        rows[m][r][c + 1] = hi;
      } else {
        rows[m][c][r] = lo;
        rows[m][c + 1][r] = hi;
      }
    }
}

namespace {

// A shuffle over `lanes` lanes (32 or 64): the lanes of `mask` take part;
// each reads its source within its segment of `width` lanes.
void shflOver(int lanes, int mode, uint64_t mask, const uint32_t* value, const int* arg, int width, uint32_t* out,
              bool* valid, int* srcLane) {
  if (width <= 0 || width > lanes) width = lanes;
  for (int lane = 0; lane < lanes; ++lane) {
    if (!(mask >> lane & 1u)) continue;
    const int segStart = lane & ~(width - 1);
    const int segEnd = segStart + width;  // exclusive
    int src = lane;
    bool inRange = true;
    switch (mode) {
      case TLC_EMU_SHFL_IDX: src = segStart + (arg[lane] & (width - 1)); break;
      case TLC_EMU_SHFL_UP:
        src = lane - arg[lane];
        inRange = src >= segStart;
        break;
      case TLC_EMU_SHFL_DOWN:
        src = lane + arg[lane];
        inRange = src < segEnd;
        break;
      case TLC_EMU_SHFL_XOR:
        src = lane ^ arg[lane];
        inRange = src >= segStart && src < segEnd;
        break;
    }
    if (!inRange) src = lane;
    srcLane[lane] = src;
    bool srcActive = src >= 0 && src < lanes && (mask >> src & 1u);
    valid[lane] = inRange && srcActive;
    out[lane] = srcActive ? value[src] : value[lane];
  }
}

}  // namespace

void shfl(int mode, uint32_t mask, const uint32_t value[kWarpSize], const int arg[kWarpSize],
          int width, uint32_t out[kWarpSize], bool valid[kWarpSize], int srcLane[kWarpSize]) {
  shflOver(kWarpSize, mode, mask, value, arg, width, out, valid, srcLane);
}

void waveShfl(int mode, uint64_t active, const uint32_t value[kWavefrontSize], const int arg[kWavefrontSize], int width,
              uint32_t out[kWavefrontSize], bool valid[kWavefrontSize], int srcLane[kWavefrontSize]) {
  shflOver(kWavefrontSize, mode, active, value, arg, width, out, valid, srcLane);
}

uint32_t vote(int mode, uint32_t mask, const bool pred[kWarpSize]) {
  uint32_t ballot = 0;
  for (int lane = 0; lane < kWarpSize; ++lane)
    if ((mask >> lane & 1u) && pred[lane]) ballot |= 1u << lane;
  switch (mode) {
    case TLC_EMU_VOTE_ALL: return ballot == mask ? 1u : 0u;
    case TLC_EMU_VOTE_ANY: return ballot != 0 ? 1u : 0u;
    default: return ballot;
  }
}

int atomicTypeBytes(int type) {
  switch (type) {
    case TLC_EMU_TY_S32:
    case TLC_EMU_TY_U32:
    case TLC_EMU_TY_F32:
    case TLC_EMU_TY_F16X2:
    case TLC_EMU_TY_BF16X2: return 4;
    case TLC_EMU_TY_S64:
    case TLC_EMU_TY_U64:
    case TLC_EMU_TY_F64: return 8;
    case TLC_EMU_TY_F16:
    case TLC_EMU_TY_BF16:
    case TLC_EMU_TY_U16: return 2;
  }
  return 0;
}

namespace {
template <class T>
T asType(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
template <class T>
uint64_t asBits(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
bool intOp(int op, uint64_t oldb, uint64_t vb, uint64_t cb, uint64_t* out) {
  T o = asType<T>(oldb), v = asType<T>(vb), c = asType<T>(cb);
  T r;
  switch (op) {
    case TLC_EMU_ATOM_ADD: r = (T)(o + v); break;
    case TLC_EMU_ATOM_MIN: r = o < v ? o : v; break;
    case TLC_EMU_ATOM_MAX: r = o > v ? o : v; break;
    case TLC_EMU_ATOM_EXCH: r = v; break;
    case TLC_EMU_ATOM_CAS: r = o == c ? v : o; break;
    case TLC_EMU_ATOM_AND: r = o & v; break;
    case TLC_EMU_ATOM_OR: r = o | v; break;
    case TLC_EMU_ATOM_XOR: r = o ^ v; break;
    case TLC_EMU_ATOM_INC: r = o >= v ? 0 : (T)(o + 1); break;
    case TLC_EMU_ATOM_DEC: r = (o == 0 || o > v) ? v : (T)(o - 1); break;
    default: return false;
  }
  *out = asBits(r);
  return true;
}
}  // namespace

bool atomicApply(int op, int type, uint64_t old, uint64_t value, uint64_t compare,
                 uint64_t* result) {
  switch (type) {
    case TLC_EMU_TY_S32: return intOp<int32_t>(op, old, value, compare, result);
    case TLC_EMU_TY_U32: return intOp<uint32_t>(op, old, value, compare, result);
    case TLC_EMU_TY_S64: return intOp<int64_t>(op, old, value, compare, result);
    case TLC_EMU_TY_U64: return intOp<uint64_t>(op, old, value, compare, result);
    case TLC_EMU_TY_U16:
      if (op != TLC_EMU_ATOM_CAS && op != TLC_EMU_ATOM_EXCH) return false;
      return intOp<uint16_t>(op, old, value, compare, result);
    case TLC_EMU_TY_F32:
    case TLC_EMU_TY_F64: {
      double o = type == TLC_EMU_TY_F32 ? asType<float>(old) : asType<double>(old);
      double v = type == TLC_EMU_TY_F32 ? asType<float>(value) : asType<double>(value);
      double r;
      switch (op) {
        case TLC_EMU_ATOM_ADD: r = o + v; break;
        case TLC_EMU_ATOM_MIN: r = std::fmin(o, v); break;
        case TLC_EMU_ATOM_MAX: r = std::fmax(o, v); break;
        case TLC_EMU_ATOM_EXCH: r = v; break;
        case TLC_EMU_ATOM_CAS:
          *result = old == compare ? value : old;
          return true;
        default: return false;
      }
      *result = type == TLC_EMU_TY_F32 ? asBits((float)r) : asBits(r);
      return true;
    }
    case TLC_EMU_TY_F16:
    case TLC_EMU_TY_BF16:
    case TLC_EMU_TY_F16X2:
    case TLC_EMU_TY_BF16X2: {
      const bool bf = type == TLC_EMU_TY_BF16 || type == TLC_EMU_TY_BF16X2;
      const int lanes = (type == TLC_EMU_TY_F16 || type == TLC_EMU_TY_BF16) ? 1 : 2;
      if (op == TLC_EMU_ATOM_CAS || op == TLC_EMU_ATOM_EXCH) {
        *result = op == TLC_EMU_ATOM_EXCH ? value : (old == compare ? value : old);
        return true;
      }
      uint64_t r = 0;
      for (int l = 0; l < lanes; ++l) {
        uint16_t ob = (uint16_t)(old >> (16 * l)), vb = (uint16_t)(value >> (16 * l));
        float o = bf ? fl::bf16ToFloat(ob) : fl::halfToFloat(ob);
        float v = bf ? fl::bf16ToFloat(vb) : fl::halfToFloat(vb);
        float x;
        switch (op) {
          case TLC_EMU_ATOM_ADD: x = o + v; break;
          case TLC_EMU_ATOM_MIN: x = std::fmin(o, v); break;
          case TLC_EMU_ATOM_MAX: x = std::fmax(o, v); break;
          default: return false;
        }
        uint16_t xb = bf ? fl::floatToBf16(x) : fl::floatToHalf(x);
        r |= (uint64_t)xb << (16 * l);
      }
      *result = r;
      return true;
    }
  }
  return false;
}

Wavefronts sharedWavefronts(const uint64_t addr[kWarpSize], uint32_t activeMask, int bytes) {
  return backend::bankWavefronts(
      kWarpSize, bytes, [&](int l) { return addr[l]; }, [&](int l) { return (activeMask >> l & 1u) != 0; });
}

}  // namespace tlc::cuda_emu::isa
