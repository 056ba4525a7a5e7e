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

int encodeTensorMap(EncodeTiledFn encode, const TensorMapSpec& spec, void* out) {
  if (spec.rank == 0) {
    std::memset(out, 0, 128);
    return 0;
  }
  unsigned box[5], elementStrides[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < spec.rank; ++i) box[i] = spec.box[i];
  return encode(out, (int)spec.dtype, (unsigned)spec.rank, reinterpret_cast<void*>(spec.address), spec.dims,
                spec.strides + 1, box, elementStrides, /*interleave none*/ 0, (int)spec.swizzle,
                /*L2 promotion 256B*/ 3, /*zero fill*/ 0);
}

}  // namespace tlc::cuda
