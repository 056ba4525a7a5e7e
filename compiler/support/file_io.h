// Reading whole files safely: only regular files (never a directory, a
// device such as /dev/zero, or a FIFO), and never more than a size limit, so
// that a wrong path fails at once with a reason instead of hanging or
// exhausting memory. Shared by the compiler (sources, the kernel cache) and
// the host runtime (modules); C++17.
#pragma once

#include <cstdint>
#include <string>

namespace tlc {

// The largest file read as a source, module or cache entry: 1 GiB.
inline constexpr uint64_t kMaxReadableFileBytes = uint64_t(1) << 30;

enum class ReadStatus { Ok, CannotOpen, NotRegular, TooLarge, ReadError };

// Reads the regular file at `path` (symbolic links followed) into *out.
// On failure leaves *out empty and sets *error to a sentence fragment such
// as "'x' is a directory, not a file".
ReadStatus readRegularFile(const std::string& path, std::string* out, std::string* error,
                           uint64_t maxBytes = kMaxReadableFileBytes);

}  // namespace tlc
