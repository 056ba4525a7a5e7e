// Base64 (RFC 4648, with padding): binary images carried inside JSON text
// (a CUDA module's second cubin in its kernel metadata).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tlc {

std::string base64Encode(std::string_view bytes);
// nullopt when `text` is not padded base64 (a wrong length, a character
// outside the alphabet, padding inside the text).
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace tlc
