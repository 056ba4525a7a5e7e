// The device helper header (runtime/cuda/tlc_cuda.h) for compilers that
// cannot take its inline PTX: the CUDA emulator's host compiler and the HIP
// compilers. Each function whose body contains `asm` gets another body.
#pragma once

#include <functional>
#include <string>

namespace tlc::backend {

// `header` with the body (braces included) of every function containing
// inline `asm` replaced by `{ <bodyFor(name)> }`, `name` the function's name.
std::string replaceAsmHelpers(const std::string& header, const std::function<std::string(const std::string&)>& bodyFor);

}  // namespace tlc::backend
