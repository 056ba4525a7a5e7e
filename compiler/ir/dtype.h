// Scalar element types of the tile language.
//
// The names are the language's spellings (int8 .. uint64, bool, float16,
// bfloat16, float32, float64, float8_e4m3, float8_e5m2). Index arithmetic is
// int32 unless a wider type is requested; literals are int32 / float32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tlc {

#define TLC_DTYPES(X)                 \
  X(Bool, "bool", 8)                  \
  X(Int8, "int8", 8)                  \
  X(Int16, "int16", 16)               \
  X(Int32, "int32", 32)               \
  X(Int64, "int64", 64)               \
  X(UInt8, "uint8", 8)                \
  X(UInt16, "uint16", 16)             \
  X(UInt32, "uint32", 32)             \
  X(UInt64, "uint64", 64)             \
  X(Float16, "float16", 16)           \
  X(BFloat16, "bfloat16", 16)         \
  X(Float32, "float32", 32)           \
  X(Float64, "float64", 64)           \
  X(Float8E4M3, "float8_e4m3", 8)     \
  X(Float8E5M2, "float8_e5m2", 8)

enum class DType : uint8_t {
#define X(Name, Spelling, Bits) Name,
  TLC_DTYPES(X)
#undef X
};

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
// Storage size in bits (bool is stored as one byte).
int dtypeBits(DType t);
inline int dtypeBytes(DType t) { return dtypeBits(t) / 8; }
bool isFloat(DType t);     // float16, bfloat16, float32, float64, float8_*
bool isInteger(DType t);   // signed or unsigned ints (not bool)
bool isSigned(DType t);    // signed ints and floats
inline bool isBool(DType t) { return t == DType::Bool; }

// The type both operands of a binary arithmetic operation are converted to
// (floats win over ints, wider wins over narrower, signed int wins ties).
DType promote(DType a, DType b);

}  // namespace tlc
