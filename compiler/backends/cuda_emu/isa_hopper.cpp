// The emulated Hopper instructions (see isa.h): wgmma operand addressing and
// arithmetic, mbarrier phase rules, tensor-copy boxes and the emulator's
// tensor-map encoding.
#include <cstring>

#include "compiler/backends/cuda/tensor_map.h"
#include "compiler/backends/cuda_emu/emulator.h"
#include "compiler/backends/cuda_emu/isa.h"

namespace tlc::cuda_emu {

namespace {

// The emulator's tensor map: 128 bytes, little-endian fields. Version 2
// added im2col mode (its flag, corners and element strides).
constexpr uint32_t kMapMagic = 0x4d544c54;  // "TLTM"
constexpr uint8_t kMapVersion = 2;
struct EmuTensorMap {
  uint32_t magic;
  uint8_t version, rank, elemBytes, swizzleBytes;  // swizzle span 0/32/64/128
  uint8_t dtype, im2col;   // im2col: 1 in im2col mode
  int8_t lower[2], upper[2];  // im2col corners (w, h)
  uint8_t pad[2];
  uint64_t address;
  uint64_t dims[5];        // elements, innermost first
  uint64_t strides[4];     // byte strides of dimensions 1..4
  uint16_t box[5];         // box elements, innermost first (im2col: channels, pixels)
  uint8_t elementStrides[5];  // innermost first
};
static_assert(sizeof(EmuTensorMap) <= 128, "the tensor map is 128 bytes");


bool validSpec(const tlc::cuda::TensorMapSpec& s, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  if (s.rank < 1 || s.rank > 5) return fail("tensor map rank must be 1..5");
  if (s.im2col && s.rank != 4) return fail("an im2col tensor map must have rank 4 (C, W, H, N)");
  if (s.elemBytes != 1 && s.elemBytes != 2 && s.elemBytes != 4 && s.elemBytes != 8)
    return fail("tensor map element size must be 1, 2, 4 or 8 bytes");
  if (s.address % 16) return fail("tensor map address must be 16-byte aligned");
  for (int i = 0; i < s.rank; ++i) {
    if (s.dims[i] < 1 || s.dims[i] > (1ull << 32)) return fail("tensor map dimension outside 1..2^32");
    if (!s.im2col && (s.box[i] < 1 || s.box[i] > 256)) return fail("tensor map box dimension outside 1..256");
    if (i > 0 && (s.strides[i] % 16 || s.strides[i] >= (1ull << 40)))
      return fail("tensor map stride must be a multiple of 16 bytes below 2^40");
    // Im2col maps step over W and H (the convolution's strides); the
    // emulator models no other element strides.
    const bool stepped = s.im2col && (i == 1 || i == 2) && s.elementStrides[i] >= 1 && s.elementStrides[i] <= 8;
    if (s.elementStrides[i] != 1 && !stepped)
      return fail(s.im2col ? "an im2col tensor map's element strides must be 1..8 along W and H and 1 along C and N"
                           : "the emulator's tiled tensor maps have element strides of 1");
  }
  if (s.im2col) {
    if (s.box[0] < 1 || s.box[0] > 256) return fail("an im2col tensor map's channels per pixel must be 1..256");
    if (s.box[1] < 1 || s.box[1] > 1024) return fail("an im2col tensor map's pixels per column must be 1..1024");
    for (int a = 0; a < 2; ++a)
      if (s.lower[a] < -128 || s.lower[a] > 127 || s.upper[a] < -128 || s.upper[a] > 127)
        return fail("an im2col tensor map's corners must be -128..127 (rank 4)");
  }
  uint64_t row = (uint64_t)s.box[0] * s.elemBytes;
  if (row % 16) return fail("tensor map inner box row must be a multiple of 16 bytes");
  int span = isa::swizzleSpan(s.swizzle);
  if (span && row > (uint64_t)span) return fail("tensor map inner box row is wider than the swizzle span");
  return true;
}

}  // namespace

bool encodeTensorMap(const tlc::cuda::TensorMapSpec& spec, void* out128, std::string* why) {
  if (spec.rank == 0) {  // a store map TMA cannot describe: zeros, as the driver's launchers pass
    std::memset(out128, 0, 128);
    return true;
  }
  if (!validSpec(spec, why)) return false;
  EmuTensorMap m{};
  m.magic = kMapMagic;
  m.version = kMapVersion;
  m.rank = (uint8_t)spec.rank;
  m.elemBytes = (uint8_t)spec.elemBytes;
  m.swizzleBytes = (uint8_t)isa::swizzleSpan(spec.swizzle);
  m.dtype = (uint8_t)spec.dtype;
  m.im2col = spec.im2col ? 1 : 0;
  for (int a = 0; a < 2 && spec.im2col; ++a) {
    m.lower[a] = (int8_t)spec.lower[a];
    m.upper[a] = (int8_t)spec.upper[a];
  }
  m.address = spec.address;
  for (int i = 0; i < spec.rank; ++i) {
    m.dims[i] = spec.dims[i];
    m.box[i] = (uint16_t)spec.box[i];
    m.elementStrides[i] = (uint8_t)spec.elementStrides[i];
    if (i > 0) m.strides[i - 1] = spec.strides[i];
  }
  std::memset(out128, 0, 128);
  std::memcpy(out128, &m, sizeof m);
  return true;
}

namespace isa {

int swizzleSpan(tlc::cuda::TmaSwizzle s) {
  switch (s) {
    case tlc::cuda::TmaSwizzle::B32: return 32;
    case tlc::cuda::TmaSwizzle::B64: return 64;
    case tlc::cuda::TmaSwizzle::B128: return 128;
    default: return 0;
  }
}

bool decodeTensorMap(const void* map128, tlc::cuda::TensorMapSpec* spec) {
  EmuTensorMap m;
  std::memcpy(&m, map128, sizeof m);
  if (m.magic != kMapMagic || m.version != kMapVersion) return false;
  tlc::cuda::TensorMapSpec s;
  s.rank = m.rank;
  s.elemBytes = m.elemBytes;
  s.dtype = (tlc::cuda::TmaDType)m.dtype;
  s.address = m.address;
  s.swizzle = m.swizzleBytes == 128  ? tlc::cuda::TmaSwizzle::B128
              : m.swizzleBytes == 64 ? tlc::cuda::TmaSwizzle::B64
              : m.swizzleBytes == 32 ? tlc::cuda::TmaSwizzle::B32
                                     : tlc::cuda::TmaSwizzle::None;
  if (m.swizzleBytes != 0 && isa::swizzleSpan(s.swizzle) != m.swizzleBytes) return false;
  if (s.rank < 1 || s.rank > 5) return false;
  if (m.im2col > 1) return false;
  s.im2col = m.im2col == 1;
  for (int a = 0; a < 2 && s.im2col; ++a) {
    s.lower[a] = m.lower[a];
    s.upper[a] = m.upper[a];
  }
  s.strides[0] = s.elemBytes;
  for (int i = 0; i < s.rank; ++i) {
    s.dims[i] = m.dims[i];
    s.box[i] = m.box[i];
    s.elementStrides[i] = m.elementStrides[i];
    if (i > 0) s.strides[i] = m.strides[i - 1];
  }
  if (!validSpec(s, nullptr)) return false;
  *spec = s;
  return true;
}

uint64_t tmaBoxBytes(const tlc::cuda::TensorMapSpec& spec) {
  uint64_t n = (uint64_t)spec.elemBytes;
  for (int i = 0; i < (spec.im2col ? 2 : spec.rank); ++i) n *= spec.box[i];
  return n;
}

void tmaBox(const tlc::cuda::TensorMapSpec& spec, const int* coords, std::vector<uint64_t>* gaddr,
            std::vector<uint8_t>* inBounds) {
  uint64_t elems = tmaBoxBytes(spec) / spec.elemBytes;
  gaddr->assign(elems, 0);
  inBounds->assign(elems, 0);
  int idx[5] = {0, 0, 0, 0, 0};
  for (uint64_t e = 0; e < elems; ++e) {
    bool in = true;
    uint64_t a = spec.address;
    for (int d = 0; d < spec.rank; ++d) {
      int64_t c = (int64_t)coords[d] + idx[d];
      if (c < 0 || (uint64_t)c >= spec.dims[d]) in = false;
      else a += (uint64_t)c * spec.strides[d];
    }
    (*inBounds)[e] = in;
    (*gaddr)[e] = in ? a : 0;
    for (int d = 0; d < spec.rank; ++d) {
      if (++idx[d] < (int)spec.box[d]) break;
      idx[d] = 0;
    }
  }
}

void tmaIm2colBox(const tlc::cuda::TensorMapSpec& spec, const int* coords, const uint16_t* offsets,
                  std::vector<uint64_t>* gaddr, std::vector<uint8_t>* inBounds) {
  const uint32_t channels = spec.box[0], pixels = spec.box[1];
  gaddr->assign((size_t)channels * pixels, 0);
  inBounds->assign((size_t)channels * pixels, 0);
  // The pixel walk: W in steps of its element stride from the lower corner
  // to the last position the upper corner allows, then the next H row,
  // then the next image.
  const int64_t wLast = (int64_t)spec.dims[1] - 1 + spec.upper[0];
  const int64_t hLast = (int64_t)spec.dims[2] - 1 + spec.upper[1];
  int64_t w = coords[1], h = coords[2], n = coords[3];
  auto inside = [&](int64_t v, int d) { return v >= 0 && (uint64_t)v < spec.dims[d]; };
  for (uint32_t p = 0; p < pixels; ++p) {
    const int64_t x = w + offsets[0], y = h + offsets[1];
    const bool pixelIn = inside(x, 1) && inside(y, 2) && inside(n, 3);
    for (uint32_t k = 0; k < channels; ++k) {
      const int64_t c = (int64_t)coords[0] + k;
      const size_t e = (size_t)p * channels + k;
      if (!pixelIn || !inside(c, 0)) continue;
      (*inBounds)[e] = 1;
      (*gaddr)[e] = spec.address + (uint64_t)c * spec.strides[0] + (uint64_t)x * spec.strides[1] +
                    (uint64_t)y * spec.strides[2] + (uint64_t)n * spec.strides[3];
    }
    w += spec.elementStrides[1];
    if (w > wLast) {
      w = spec.lower[0];
      h += spec.elementStrides[2];
      if (h > hLast) {
        h = spec.lower[1];
        n += 1;
      }
    }
  }
}

SmemDesc decodeSmemDesc(uint64_t desc) {
  SmemDesc d;
  d.start = (uint32_t)(desc & 0x3fff) << 4;
  d.lbo = (uint32_t)((desc >> 16) & 0x3fff) << 4;
  d.sbo = (uint32_t)((desc >> 32) & 0x3fff) << 4;
  d.baseOffset = (int)((desc >> 49) & 7);
  static const int spans[4] = {0, 128, 64, 32};
  d.swizzle = spans[(desc >> 62) & 3];
  return d;
}

uint32_t swizzleAddress(uint32_t addr, int spanBytes) {
  int bits = spanBytes == 128 ? 3 : spanBytes == 64 ? 2 : spanBytes == 32 ? 1 : 0;
  if (!bits) return addr;
  uint32_t mask = ((1u << bits) - 1) << 4;
  return addr ^ ((addr >> 3) & mask);
}

uint32_t wgmmaElementAddress(const SmemDesc& d, bool mnMajor, int mn, int k, int elemBytes) {
  const int T = 16 / elemBytes;  // elements per 16-byte chunk
  uint32_t a;
  if (!mnMajor) {
    if (d.swizzle == 0)
      a = d.start + (mn / 8) * d.sbo + (mn % 8) * 16 + (k / T) * d.lbo + (k % T) * elemBytes;
    else
      a = d.start + (mn / 8) * d.sbo + (mn % 8) * d.swizzle + k * elemBytes;
  } else {
    if (d.swizzle == 0) {
      a = d.start + (mn / T) * d.sbo + (mn % T) * elemBytes + (k / 8) * d.lbo + (k % 8) * 16;
    } else {
      const int per = d.swizzle / elemBytes;  // MN elements per swizzle row
      a = d.start + (mn / per) * d.lbo + (mn % per) * elemBytes + (k / 8) * d.sbo + (k % 8) * d.swizzle;
    }
  }
  return swizzleAddress(a, d.swizzle);
}

Coord wgmmaAccElement(int thread, int reg) {
  const int w = thread / 32, g = (thread % 32) / 4, q = thread % 4;
  const int j = reg / 4, e = reg % 4;
  return {16 * w + g + 8 * (e / 2), 8 * j + 2 * q + (e % 2)};
}

void wgmma(int n, int k, const double* a, const double* b, float* const d[128], const int scaleD[128]) {
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < n / 2; ++r) {
      Coord p = wgmmaAccElement(t, r);
      double acc = scaleD[t] ? (double)d[t][r] : 0.0;
      for (int kk = 0; kk < k; ++kk) acc += a[p.row * k + kk] * b[kk * n + p.col];
      d[t][r] = (float)acc;
    }
}

void wgmmaS8(int n, const double* a, const double* b, int32_t* const d[128], const int scaleD[128]) {
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < n / 2; ++r) {
      Coord p = wgmmaAccElement(t, r);
      int64_t acc = scaleD[t] ? d[t][r] : 0;
      for (int kk = 0; kk < 32; ++kk) acc += (int64_t)a[p.row * 32 + kk] * (int64_t)b[kk * n + p.col];
      d[t][r] = (int32_t)(uint32_t)(uint64_t)acc;
    }
}

void mbarInit(MbarState& s, uint32_t count) {
  s.count = count;
  s.pending = count;
  s.tx = 0;
  s.phase = 0;
}

static MbarEvent settle(MbarState& s) {
  if (s.pending != 0) return MbarEvent::None;
  if (s.tx < 0) return MbarEvent::TxOverflow;
  if (s.tx > 0) return MbarEvent::None;
  s.phase++;
  s.pending = s.count;
  s.tx = 0;
  return MbarEvent::Completed;
}

MbarEvent mbarArrive(MbarState& s, uint32_t expectTx) {
  if (s.pending == 0) return MbarEvent::ArrivalOverflow;
  s.tx += expectTx;
  s.pending--;
  return settle(s);
}

MbarEvent mbarCompleteTx(MbarState& s, uint32_t bytes) {
  s.tx -= bytes;
  return settle(s);
}

bool mbarParityDone(const MbarState& s, unsigned parity) { return (s.phase & 1) != (parity & 1); }

}  // namespace isa
}  // namespace tlc::cuda_emu
