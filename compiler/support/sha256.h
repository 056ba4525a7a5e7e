// SHA-256 (FIPS 180-4), for the kernel cache's keys and checksums and for the
// integrity trailer of built modules (module_image.h). C++17.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tlc {

std::array<uint8_t, 32> sha256(const void* data, size_t size);
// Lowercase hex of sha256(data).
std::string sha256Hex(const std::string& data);

}  // namespace tlc
