// Reading and writing HostTensors as NumPy .npy files (format version 1.0),
// so that a run's tensors can be inspected or checked by other tools.
//
// Writing: float16/float32/float64 and the integer and bool dtypes keep their
// exact bits ('<f2', '<f4', '<f8', '|i1', '<i4', '|b1', ...). NumPy has no
// bfloat16 or float8 types: those are written as float32 values (exact).
// Reading accepts little-endian or byte-sized C-order arrays of those NumPy
// types and gives the matching dtype (f2 -> float16, ...).
#pragma once

#include <optional>
#include <string>

#include "compiler/interp/host_tensor.h"

namespace tlc::interp {

// Returns false and sets *error when the file cannot be written.
bool writeNpy(const HostTensor& t, const std::string& path, std::string* error);
// Returns nullopt and sets *error when the file is unreadable or not a supported .npy.
std::optional<HostTensor> readNpy(const std::string& path, std::string* error);

}  // namespace tlc::interp
