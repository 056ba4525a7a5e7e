#include "compiler/backends/cuda/tensor_map.h"

#include <algorithm>
#include <cstring>

namespace tlc::cuda {

int swizzleBytes(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::B32: return 32;
    case TmaSwizzle::B64: return 64;
    case TmaSwizzle::B128: return 128;
    case TmaSwizzle::None: break;
  }
  return 0;
}

bool makeTensorMapSpec(TmaDType dtype, int elemBytes, uint64_t address, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& box, TmaSwizzle swizzle,
                       TensorMapSpec* out, std::string* why) {
  const size_t rank = shape.size();
  if (rank < 1 || rank > 5 || strides.size() != rank || box.size() != rank) {
    *why = "a tensor map needs 1 to 5 dimensions, not " + std::to_string(rank);
    return false;
  }
  if (address % 16 != 0) {
    *why = "the data address is not 16-byte aligned";
    return false;
  }
  TensorMapSpec s;
  s.dtype = dtype;
  s.elemBytes = elemBytes;
  s.rank = (int)rank;
  s.address = address;
  s.swizzle = swizzle;
  for (size_t i = 0; i < rank; ++i) {
    size_t d = rank - 1 - i;  // innermost first
    if (shape[d] < 1 || (uint64_t)shape[d] > (1ull << 32)) {
      *why = "dimension " + std::to_string(d) + " has " + std::to_string(shape[d]) + " elements (1 to 2^32 allowed)";
      return false;
    }
    if (box[d] < 1 || box[d] > 256) {
      *why = "the copied box has " + std::to_string(box[d]) + " elements in dimension " + std::to_string(d) +
             " (1 to 256 allowed)";
      return false;
    }
    s.dims[i] = (uint64_t)shape[d];
    s.box[i] = (uint32_t)box[d];
    uint64_t bytes = (uint64_t)strides[d] * (uint64_t)elemBytes;
    if (i == 0) {
      if (strides[d] != 1) {
        *why = "the innermost dimension is not contiguous (stride " + std::to_string(strides[d]) + ")";
        return false;
      }
    } else if (strides[d] < 1 || bytes % 16 != 0 || bytes >= (1ull << 40)) {
      *why = "the stride of dimension " + std::to_string(d) + " is " + std::to_string(bytes) +
             " bytes, which is not a multiple of 16 below 2^40";
      return false;
    }
    s.strides[i] = bytes;
  }
  uint64_t rowBytes = (uint64_t)s.box[0] * (uint64_t)elemBytes;
  if (rowBytes % 16 != 0) {
    *why = "the copied box's rows are " + std::to_string(rowBytes) + " bytes, not a multiple of 16";
    return false;
  }
  if (swizzle != TmaSwizzle::None && rowBytes > (uint64_t)swizzleBytes(swizzle)) {
    *why = "the copied box's rows (" + std::to_string(rowBytes) + " bytes) are wider than the swizzle span";
    return false;
  }
  *out = s;
  return true;
}

bool tmaDTypeOf(const std::string& dtype, TmaDType* out, int* elemBytes) {
  struct Entry {
    const char* name;
    TmaDType type;
    int bytes;
  };
  static const Entry kTypes[] = {
      {"float16", TmaDType::F16, 2},   {"bfloat16", TmaDType::BF16, 2}, {"float32", TmaDType::F32, 4},
      {"float64", TmaDType::F64, 8},   {"int8", TmaDType::U8, 1},       {"uint8", TmaDType::U8, 1},
      {"float8_e4m3", TmaDType::U8, 1}, {"float8_e5m2", TmaDType::U8, 1}, {"int16", TmaDType::U16, 2},
      {"uint16", TmaDType::U16, 2},    {"int32", TmaDType::I32, 4},     {"uint32", TmaDType::U32, 4},
      {"int64", TmaDType::I64, 8},     {"uint64", TmaDType::U64, 8},
  };
  for (const Entry& e : kTypes)
    if (dtype == e.name) {
      *out = e.type;
      *elemBytes = e.bytes;
      return true;
    }
  return false;
}

bool pitchedTensorMapSpec(const std::string& dtype, uint64_t address, const std::vector<int64_t>& shape,
                          int64_t rowPitch, const std::vector<int64_t>& box, int swizzle, TensorMapSpec* out,
                          std::string* why) {
  TmaDType t;
  int bytes;
  if (!tmaDTypeOf(dtype, &t, &bytes)) {
    *why = "TMA cannot copy elements of type " + dtype;
    return false;
  }
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = d + 1 == shape.size() ? rowPitch : strides[d] * shape[d];
  TmaSwizzle sw = swizzle == 128 ? TmaSwizzle::B128 : swizzle == 64 ? TmaSwizzle::B64
                  : swizzle == 32 ? TmaSwizzle::B32 : TmaSwizzle::None;
  return makeTensorMapSpec(t, bytes, address, shape, strides, box, sw, out, why);
}

bool rowMajorTensorMapSpec(const std::string& dtype, uint64_t address, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& box, int swizzle, TensorMapSpec* out, std::string* why) {
  return pitchedTensorMapSpec(dtype, address, shape, shape.empty() ? 1 : shape.back(), box, swizzle, out, why);
}

bool im2colTensorMapSpec(const std::string& dtype, uint64_t address, const std::vector<int64_t>& shape,
                         const Im2colGeometry& geometry, int64_t pixels, int64_t channels, int swizzle,
                         TensorMapSpec* out, std::string* why) {
  if (shape.size() != 4) {
    *why = "an im2col tensor map needs a rank-4 (N, H, W, C) tensor, not one of rank " + std::to_string(shape.size());
    return false;
  }
  TmaDType type;
  int elemBytes = 0;
  if (!tmaDTypeOf(dtype, &type, &elemBytes)) {
    *why = "TMA cannot copy elements of type " + dtype;
    return false;
  }
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128) {
    *why = "the swizzle is " + std::to_string(swizzle) + " bytes (0, 32, 64 or 128 allowed)";
    return false;
  }
  // The convolution, axis by axis (0: h, 1: w), and the corners of the
  // filter's top-left tap over the padded input (TensorMapSpec: w first).
  int lower[2], upper[2];
  for (int a = 0; a < 2; ++a) {
    const std::string axis = a == 0 ? "h" : "w";
    const int k = geometry.kernel[a], step = geometry.stride[a], p = geometry.pad[a], d = geometry.dilation[a];
    auto atLeast = [&](const char* what, int value, int least) {
      if (value >= least) return true;
      *why = std::string("the convolution's ") + what + " along " + axis + " is " + std::to_string(value) +
             " (at least " + std::to_string(least) + " needed)";
      return false;
    };
    if (!atLeast("filter extent", k, 1) || !atLeast("dilation", d, 1) || !atLeast("pad", p, 0)) return false;
    if (step < 1 || step > 8) {
      *why = "the convolution's stride along " + axis + " is " + std::to_string(step) +
             " (TMA's im2col mode steps 1 to 8 elements)";
      return false;
    }
    const int64_t lo = -(int64_t)p, hi = (int64_t)p - (int64_t)d * (k - 1);
    if (lo < -128 || lo > 127 || hi < -128 || hi > 127) {
      *why = "the im2col corners along " + axis + " are " + std::to_string(lo) + " and " + std::to_string(hi) +
             " (pad " + std::to_string(p) + ", filter " + std::to_string(k) + ", dilation " + std::to_string(d) +
             "), outside -128..127";
      return false;
    }
    lower[1 - a] = (int)lo;
    upper[1 - a] = (int)hi;
  }
  if (pixels < 1 || pixels > 1024) {
    *why = "each im2col load copies " + std::to_string(pixels) + " pixels (1 to 1024 allowed)";
    return false;
  }
  if (channels < 1 || channels > 256) {
    *why = "each im2col load copies " + std::to_string(channels) + " channels of a pixel (1 to 256 allowed)";
    return false;
  }
  const int64_t rowBytes = channels * elemBytes;
  if (rowBytes % 16 != 0) {
    *why = "each im2col pixel's channels are " + std::to_string(rowBytes) + " bytes, not a multiple of 16";
    return false;
  }
  if (swizzle != 0 && rowBytes > swizzle) {
    *why = "each im2col pixel's channels (" + std::to_string(rowBytes) + " bytes) are wider than the swizzle span";
    return false;
  }
  // The address, dimensions and strides as for a tiled map; the box is
  // then the pixels' rows of channels.
  TensorMapSpec s;
  if (!rowMajorTensorMapSpec(dtype, address, shape, {1, 1, 1, channels}, swizzle, &s, why)) return false;
  s.im2col = true;
  s.box[1] = (uint32_t)pixels;
  for (int a = 0; a < 2; ++a) {
    s.lower[a] = lower[a];
    s.upper[a] = upper[a];
  }
  s.elementStrides[1] = (uint32_t)geometry.stride[1];  // w
  s.elementStrides[2] = (uint32_t)geometry.stride[0];  // h
  *out = s;
  return true;
}

std::string tmaUnsupportedError(const std::string& kernel, const std::string& tensor, const std::string& why) {
  return "kernel `" + kernel + "` copies tensor `" + tensor + "` with TMA, which needs a layout TMA can describe: " + why +
         " (compile with --no-warp-specialize for any layout)";
}

std::string tmaFallbackNote(const std::string& kernel, const std::string& tensor, const std::string& why) {
  return "note: `" + kernel + "` runs its version without TMA: tensor `" + tensor + "`: " + why + "\n";
}

std::string stageRowsKernel() {
  return std::string("extern \"C\" __global__ void __launch_bounds__(128) ") + kStageRowsEntry +
         "(const void* src, void* dst, long long rows, long long row_bytes, long long pitch, int elem_bytes, "
         "int row_threads) {\n  tlc::stage_rows_of(src, dst, rows, row_bytes, pitch, elem_bytes, row_threads);\n}\n";
}

int64_t stagedPitch(int64_t rowBytes) {
  const int64_t to = rowBytes >= 2048 ? 128 : 16;
  return (rowBytes + to - 1) / to * to;
}

StageLaunch stageLaunch(const StagedTensor& t) {
  StageLaunch l;
  const int64_t chunks = t.pitch / 16;  // 16-byte vectors per row, one per thread
  int rowThreads = 1;
  while (rowThreads < 128 && rowThreads < chunks) rowThreads *= 2;
  l.rowThreads = rowThreads;
  const int64_t rowsPerBlock = l.threads / rowThreads;
  l.grid[0] = (unsigned)std::min<int64_t>((chunks + rowThreads - 1) / rowThreads, 2147483647);
  l.grid[1] = (unsigned)std::min<int64_t>((t.rows + rowsPerBlock - 1) / rowsPerBlock, 65535);
  return l;
}

LaunchMaps planLaunchMaps(const std::string& kernel, const std::vector<TensorMapArg>& maps,
                          const std::function<LaunchTensor(int)>& tensorOf, bool hasFallback, bool canStage) {
  LaunchMaps plan;
  plan.specs.resize(maps.size());
  plan.stagedOf.assign(maps.size(), -1);
  for (size_t m = 0; m < maps.size(); ++m) {
    const TensorMapArg& tm = maps[m];
    LaunchTensor x = tensorOf(tm.paramIndex);
    std::string why;
    if (tm.im2col) {
      // Im2col loads read the tensor where it lies: no staged copy (its
      // padded rows would be pixels of the wrong width), no zero map (there
      // is no im2col store); what TMA cannot describe takes the version
      // without TMA, else fails.
      if (tm.box.size() == 2 && im2colTensorMapSpec(x.dtype, x.address, x.shape, tm.geometry, tm.box[0], tm.box[1],
                                                    tm.swizzle, &plan.specs[m], &why))
        continue;
      if (tm.box.size() != 2)
        why = "an im2col map's box is {pixels, channels}, not " + std::to_string(tm.box.size()) + " values";
    } else {
      if (rowMajorTensorMapSpec(x.dtype, x.address, x.shape, tm.box, tm.swizzle, &plan.specs[m], &why)) continue;
      if (tm.store) {  // the kernel stores the tensor without TMA
        plan.specs[m] = TensorMapSpec{};
        continue;
      }
      // Staged: the same map over padded rows in the workspace (at offset 0
      // until placed), when that is a map TMA can describe.
      TmaDType type;
      int elemBytes = 0;
      if (tm.stage && canStage && !x.shape.empty() && tmaDTypeOf(x.dtype, &type, &elemBytes)) {
        StagedTensor st;
        st.paramIndex = tm.paramIndex;
        st.source = x.address;
        st.elemBytes = elemBytes;
        st.rowBytes = x.shape.back() * elemBytes;
        st.rows = 1;
        for (size_t d = 0; d + 1 < x.shape.size(); ++d) st.rows *= x.shape[d];
        st.pitch = stagedPitch(st.rowBytes);
        std::string stagedWhy;
        if (st.rows > 0 && st.rowBytes > 0 &&
            pitchedTensorMapSpec(x.dtype, 0, x.shape, st.pitch / elemBytes, tm.box, tm.swizzle, &plan.specs[m],
                                 &stagedWhy)) {
          int found = -1;
          for (size_t s = 0; s < plan.staged.size(); ++s)
            if (plan.staged[s].paramIndex == tm.paramIndex) found = (int)s;
          if (found < 0) {
            st.offset = plan.workspaceBytes;
            plan.workspaceBytes += ((uint64_t)(st.rows * st.pitch) + 255) / 256 * 256;
            found = (int)plan.staged.size();
            plan.staged.push_back(st);
          }
          plan.stagedOf[m] = found;
          continue;
        }
      }
    }
    // Neither: the version without TMA, else the error; no maps.
    LaunchMaps none;
    if (hasFallback) {
      none.fallback = true;
      none.note = tmaFallbackNote(kernel, x.name, why);
    } else {
      none.error = tmaUnsupportedError(kernel, x.name, why);
    }
    return none;
  }
  return plan;
}

void placeStagedMaps(LaunchMaps* plan, uint64_t workspace) {
  for (size_t m = 0; m < plan->specs.size(); ++m)
    if (plan->stagedOf[m] >= 0) plan->specs[m].address = workspace + plan->staged[plan->stagedOf[m]].offset;
}

std::string tmaStagedNote(const std::string& kernel, const std::string& tensor, const StagedTensor& t) {
  return "note: `" + kernel + "` reads tensor `" + tensor + "` through a copy whose rows are padded from " +
         std::to_string(t.rowBytes) + " to " + std::to_string(t.pitch) +
         " bytes (TMA addresses rows of multiples of 16 bytes at 16-byte aligned addresses)\n";
}

const char* tensorMapEncoderName(const TensorMapSpec& spec) {
  return spec.im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
}

int encodeTensorMap(EncodeTiledFn tiled, EncodeIm2colFn im2col, const TensorMapSpec& spec, void* out) {
  if (spec.rank == 0) {
    std::memset(out, 0, 128);
    return 0;
  }
  unsigned box[5], elementStrides[5];
  for (int i = 0; i < spec.rank; ++i) {
    box[i] = spec.box[i];
    elementStrides[i] = spec.elementStrides[i];
  }
  // The driver takes the strides of dimensions 1 and up (dimension 0 is
  // contiguous), and in im2col mode the corners innermost first (w, h).
  if (spec.im2col) {
    if (!im2col) return kTensorMapEncoderMissing;
    return im2col(out, (int)spec.dtype, (unsigned)spec.rank, reinterpret_cast<void*>(spec.address), spec.dims,
                  spec.strides + 1, spec.lower, spec.upper, /*channelsPerPixel*/ box[0], /*pixelsPerColumn*/ box[1],
                  elementStrides, /*interleave none*/ 0, (int)spec.swizzle, /*L2 promotion 256B*/ 3, /*zero fill*/ 0);
  }
  if (!tiled) return kTensorMapEncoderMissing;
  return tiled(out, (int)spec.dtype, (unsigned)spec.rank, reinterpret_cast<void*>(spec.address), spec.dims,
               spec.strides + 1, box, elementStrides, /*interleave none*/ 0, (int)spec.swizzle,
               /*L2 promotion 256B*/ 3, /*zero fill*/ 0);
}

}  // namespace tlc::cuda
