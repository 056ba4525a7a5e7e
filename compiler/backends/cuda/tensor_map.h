// Tensor maps for Hopper tensor copies (TMA): what a kernel parameter of type
// tlc::TensorMap describes, computed at launch from the tensor's address,
// shape and strides and the box that the kernel copies.
//
// The GPU launchers hand a TensorMapSpec to cuTensorMapEncodeTiled (the
// driver entry point loaded at run time); the CUDA emulator encodes the same
// spec into its own 128-byte form (cuda_emu::encodeTensorMap).
#pragma once

#include <cstdint>
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

// What a launcher says when tensor `tensor` of kernel `kernel` has a layout
// TMA cannot describe (`why`, from makeTensorMapSpec): the error when the
// kernel has no version without TMA, the note when that version runs instead.
std::string tmaUnsupportedError(const std::string& kernel, const std::string& tensor, const std::string& why);
std::string tmaFallbackNote(const std::string& kernel, const std::string& tensor, const std::string& why);

// cuTensorMapEncodeTiled, as loaded from the driver library.
using EncodeTiledFn = int (*)(void* map, int dtype, unsigned rank, void* address, const uint64_t* dims,
                              const uint64_t* strides, const unsigned* box, const unsigned* elementStrides,
                              int interleave, int swizzle, int l2Promotion, int oobFill);
// Encodes `spec` into the 128 bytes at `out` (64-byte aligned) with the
// driver: no interleave, 256-byte L2 promotion, zero fill out of bounds.
// Returns the driver's result code (0: success).
int encodeTensorMap(EncodeTiledFn encode, const TensorMapSpec& spec, void* out);

}  // namespace tlc::cuda
