// Tensor maps for Hopper tensor copies (TMA): what a kernel parameter of type
// tlc::TensorMap describes, computed at launch from the tensor's address,
// shape and strides and the box that the kernel copies.
//
// The GPU launchers hand a TensorMapSpec to cuTensorMapEncodeTiled, or in
// im2col mode to cuTensorMapEncodeIm2col (driver entry points loaded at run
// time); the CUDA emulator encodes the same spec into its own 128-byte form
// (cuda_emu::encodeTensorMap).
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
  // Im2col mode (cuTensorMapEncodeIm2col) over a rank-4 (N, H, W, C)
  // tensor (dims innermost first: C, W, H, N): each load copies
  // `pixels` pixels of `channels` channels (box[0] = channels, box[1] =
  // pixels; box[2..] unused), walking the output positions of a
  // convolution: the bounding box of a filter's top-left corner runs over
  // W from lower[0] to dims[1] - 1 + upper[0] and over H from lower[1] to
  // dims[2] - 1 + upper[1] (inclusive), in steps of elementStrides[1] (W)
  // and elementStrides[2] (H), then on to the next image; the load's
  // im2col offsets (w, h) shift every pixel read, and what falls outside
  // the tensor reads zero.
  bool im2col = false;
  int lower[2] = {}, upper[2] = {};             // (w, h)
  uint32_t elementStrides[5] = {1, 1, 1, 1, 1};  // innermost first; 1 except in im2col mode
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
// `im2col`: the map is in im2col mode over a rank-4 (N, H, W, C) tensor
// (TensorMapSpec::im2col): a convolution of filter `kernel`, `stride`,
// zero `pad` on each side and `dilation`, each (h, w); `box` is then
// {pixels, channels} (outermost first).
struct Im2colGeometry {
  int kernel[2] = {1, 1}, stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};  // (h, w)
};
struct TensorMapArg {
  int paramIndex = -1;
  std::vector<int64_t> box;
  int swizzle = 0;
  bool stage = false;
  bool store = false;
  bool im2col = false;
  Im2colGeometry geometry;
};

// The spec of an im2col map over a contiguous row-major (N, H, W, C)
// tensor of dtype `dtype` (a tlc dtype name) for a convolution of
// `geometry`: loads of `pixels` pixels of `channels` channels with a swizzle
// of `swizzle` bytes (0, 32, 64, 128). The corners bound the filter's
// top-left tap over the padded input: lower (w, h) = (-pad_w, -pad_h),
// upper = (pad_w - dilation_w * (kernel_w - 1), pad_h - dilation_h *
// (kernel_h - 1)); the element strides are (1, stride_w, stride_h, 1).
// False with *why when TMA cannot describe it: a rank other than 4, an
// element type TMA cannot copy, a kernel or dilation below 1 or a negative
// pad, a stride outside 1..8, a corner outside -128..127, `channels` outside
// 1..256 or whose row is not a multiple of 16 bytes or wider than the
// swizzle span, `pixels` outside 1..1024, or the address, dimensions and
// strides that makeTensorMapSpec rejects.
bool im2colTensorMapSpec(const std::string& dtype, uint64_t address, const std::vector<int64_t>& shape,
                         const Im2colGeometry& geometry, int64_t pixels, int64_t channels, int swizzle,
                         TensorMapSpec* out, std::string* why);

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
// An im2col map (im2colTensorMapSpec) is never staged nor passed as zeros.
LaunchMaps planLaunchMaps(const std::string& kernel, const std::vector<TensorMapArg>& maps,
                          const std::function<LaunchTensor(int)>& tensorOf, bool hasFallback, bool canStage);
// Points the staged maps of `plan` into the workspace at `workspace`.
void placeStagedMaps(LaunchMaps* plan, uint64_t workspace);
// The note a launcher prints for a staged tensor (`tlc run`, the emulator).
std::string tmaStagedNote(const std::string& kernel, const std::string& tensor, const StagedTensor& t);

// cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col, as loaded from the
// driver library (either may be missing: null).
using EncodeTiledFn = int (*)(void* map, int dtype, unsigned rank, void* address, const uint64_t* dims,
                              const uint64_t* strides, const unsigned* box, const unsigned* elementStrides,
                              int interleave, int swizzle, int l2Promotion, int oobFill);
using EncodeIm2colFn = int (*)(void* map, int dtype, unsigned rank, void* address, const uint64_t* dims,
                               const uint64_t* strides, const int* lowerCorner, const int* upperCorner,
                               unsigned channelsPerPixel, unsigned pixelsPerColumn, const unsigned* elementStrides,
                               int interleave, int swizzle, int l2Promotion, int oobFill);
// The driver entry point that encodes `spec` ("cuTensorMapEncodeTiled" or
// "cuTensorMapEncodeIm2col"), for messages.
const char* tensorMapEncoderName(const TensorMapSpec& spec);
// What encodeTensorMap returns when the entry point `spec` needs is null
// (not a driver result code: those are never negative).
inline constexpr int kTensorMapEncoderMissing = -1;
// Encodes `spec` into the 128 bytes at `out` (64-byte aligned) with the
// driver, through `im2col` for an im2col spec and `tiled` otherwise: no
// interleave, 256-byte L2 promotion, zero fill out of bounds; a spec of
// rank 0 (a store map TMA cannot describe) as 128 zero bytes. Returns the
// driver's result code (0: success), or kTensorMapEncoderMissing.
int encodeTensorMap(EncodeTiledFn tiled, EncodeIm2colFn im2col, const TensorMapSpec& spec, void* out);

}  // namespace tlc::cuda
