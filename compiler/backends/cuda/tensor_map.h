// Tensor maps for Hopper tensor copies (TMA): what a kernel parameter of type
// tlc::TensorMap describes, computed at launch from the tensor's address,
// shape and strides and the box that the kernel copies.
//
// The GPU launchers hand a TensorMapSpec to cuTensorMapEncodeTiled (the
// driver entry point loaded at run time); the CUDA emulator encodes the same
// spec into its own 128-byte form (cuda_emu::encodeTensorMap).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tlc::cuda {

// The values of CUtensorMapDataType / CUtensorMapSwizzle.
enum class TmaDType : int { U8 = 0, U16 = 1, U32 = 2, I32 = 3, U64 = 4, I64 = 5, F16 = 6, F32 = 7, F64 = 8, BF16 = 9 };
enum class TmaSwizzle : int { None = 0, B32 = 1, B64 = 2, B128 = 3 };

struct TensorMapSpec {
  TmaDType dtype = TmaDType::U8;
  int elemBytes = 1;
  int rank = 0;                  // 1..5
  uint64_t address = 0;          // the tensor's data
  uint64_t dims[5] = {};         // elements per dimension, innermost first
  uint64_t strides[5] = {};      // byte strides, innermost first (strides[0] is elemBytes)
  uint32_t box[5] = {};          // the copied box, innermost first
  TmaSwizzle swizzle = TmaSwizzle::None;
};

// The spec of a map over a row-major tensor (shape outermost first, element
// strides outermost first) copying `box` (outermost first); false with *why
// when TMA cannot describe it (a rank above 5, an address not 16-byte
// aligned, a stride that is not a multiple of 16 bytes or not below 2^40, a
// dimension above 2^32, a box dimension outside 1..256, an inner box row
// that is not a multiple of 16 bytes or wider than the swizzle span).
bool makeTensorMapSpec(TmaDType dtype, int elemBytes, uint64_t address, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& box, TmaSwizzle swizzle,
                       TensorMapSpec* out, std::string* why);

// Swizzle span in bytes (0, 32, 64, 128).
int swizzleBytes(TmaSwizzle s);

// The TMA element type of a tlc dtype name ("float16", "int8", ...; 8-bit
// floats are bytes); false for types TMA cannot copy.
bool tmaDTypeOf(const std::string& dtype, TmaDType* out, int* elemBytes);

// The spec of a map over a contiguous row-major tensor of dtype `dtype`
// (a tlc dtype name), copying `box` (outermost first) with a swizzle of
// `swizzle` bytes (0, 32, 64, 128); false with *why as makeTensorMapSpec.
bool rowMajorTensorMapSpec(const std::string& dtype, uint64_t address, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& box, int swizzle, TensorMapSpec* out, std::string* why);
// The same with the last dimension's rows `rowPitch` elements apart (the
// other dimensions packed over them): a staged tensor's padded rows.
bool pitchedTensorMapSpec(const std::string& dtype, uint64_t address, const std::vector<int64_t>& shape,
                          int64_t rowPitch, const std::vector<int64_t>& box, int swizzle, TensorMapSpec* out,
                          std::string* why);

// What a launcher says when tensor `tensor` of kernel `kernel` has a layout
// TMA cannot describe (`why`, from makeTensorMapSpec): the error when the
// kernel has no version without TMA, the note when that version runs instead.
std::string tmaUnsupportedError(const std::string& kernel, const std::string& tensor, const std::string& why);
std::string tmaFallbackNote(const std::string& kernel, const std::string& tensor, const std::string& why);

// A tensor map argument of a kernel (tlc::TensorMap, passed by value after
// the function's arguments) over tensor parameter `paramIndex`: the kernel
// copies boxes of `box` elements (one per tensor dimension, outermost first)
// with a swizzle of `swizzle` bytes (0, 32, 64, 128). `stage`: the kernel
// only reads the tensor and reads each element many times (a gemm operand),
// so that when TMA cannot address the tensor where it lies (rows that are
// not a multiple of 16 bytes, an address that is not 16-byte aligned), the
// launch copies it into rows padded to 16 bytes and maps the copy, rather
// than run the kernel's version without TMA.
// `store`: the kernel writes the tensor through the map (TMA stores of an
// epilogue); where TMA cannot address the tensor, the launch passes a map
// of zeros (a TensorMapSpec of rank 0) and the kernel, which tests the map
// (tlc::tensor_map_valid), stores it without TMA.
struct TensorMapArg {
  int paramIndex = -1;
  std::vector<int64_t> box;
  int swizzle = 0;
  bool stage = false;
  bool store = false;
};

// A tensor staged before a launch: `rows` rows of `rowBytes` bytes, back to
// back at `source`, copied to rows `pitch` bytes apart (stagedPitch,
// each row's tail zero) at `offset` bytes into the launch's workspace by the
// module's kernel kStageRowsEntry.
struct StagedTensor {
  int paramIndex = -1;
  uint64_t source = 0;
  int64_t rows = 0, rowBytes = 0, pitch = 0;
  int elemBytes = 0;
  uint64_t offset = 0;
};

// The pitch of a staged row of `rowBytes` bytes: a multiple of 16 bytes,
// and of 128 (a whole line, which TMA reads in fewer requests) where that
// adds at most a sixteenth to the row.
int64_t stagedPitch(int64_t rowBytes);

// The kernel every module with a map that may be staged defines:
//   tlc_stage_rows(const void* src, void* dst, long long rows, long long row_bytes,
//                  long long pitch, int elem_bytes, int row_threads)
inline constexpr const char* kStageRowsEntry = "tlc_stage_rows";
// Its CUDA C definition (over tlc::stage_rows_of, tlc_cuda_memory.h).
std::string stageRowsKernel();

// The launch of kStageRowsEntry for `t`: a 1-D block of `threads` threads,
// `rowThreads` of them per row (a power of two), over `grid` blocks.
struct StageLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned threads = 128;
  int rowThreads = 1;
};
StageLaunch stageLaunch(const StagedTensor& t);

// A tensor argument as a launcher sees it.
struct LaunchTensor {
  std::string dtype;  // a tlc dtype name
  uint64_t address = 0;
  std::vector<int64_t> shape;
  std::string name;
};

// How a launch provides its tensor maps: `specs` (one per map, encoded by
// the launcher) once the maps over staged tensors have their workspace
// (placeStagedMaps), or the kernel's version without TMA (`fallback`, with
// `note` saying why), or neither (`error`); with either, no maps at all.
struct LaunchMaps {
  std::vector<TensorMapSpec> specs;
  std::vector<int> stagedOf;  // per map: index into `staged`, or -1
  std::vector<StagedTensor> staged;
  uint64_t workspaceBytes = 0;
  bool fallback = false;
  std::string note, error;
};
// Plans the maps of kernel `kernel` over the tensors `tensorOf(param)`.
// A tensor TMA cannot address where it lies is staged when its map allows
// it and `canStage` (the launcher can allocate a workspace); otherwise the
// version without TMA runs when `hasFallback`, and it is an error when not.
LaunchMaps planLaunchMaps(const std::string& kernel, const std::vector<TensorMapArg>& maps,
                          const std::function<LaunchTensor(int)>& tensorOf, bool hasFallback, bool canStage);
// Points the staged maps of `plan` into the workspace at `workspace`.
void placeStagedMaps(LaunchMaps* plan, uint64_t workspace);
// The note a launcher prints for a staged tensor (`tlc run`, the emulator).
std::string tmaStagedNote(const std::string& kernel, const std::string& tensor, const StagedTensor& t);

// cuTensorMapEncodeTiled, as loaded from the driver library.
using EncodeTiledFn = int (*)(void* map, int dtype, unsigned rank, void* address, const uint64_t* dims,
                              const uint64_t* strides, const unsigned* box, const unsigned* elementStrides,
                              int interleave, int swizzle, int l2Promotion, int oobFill);
// Encodes `spec` into the 128 bytes at `out` (64-byte aligned) with the
// driver: no interleave, 256-byte L2 promotion, zero fill out of bounds;
// a spec of rank 0 (a store map TMA cannot describe) as 128 zero bytes.
// Returns the driver's result code (0: success).
int encodeTensorMap(EncodeTiledFn encode, const TensorMapSpec& spec, void* out);

}  // namespace tlc::cuda
