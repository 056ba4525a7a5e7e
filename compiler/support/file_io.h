// Reading whole files safely: only regular files (never a directory, a
// device such as /dev/zero, or a FIFO), and never more than a size limit, so
// that a wrong path fails at once with a reason instead of hanging or
// exhausting memory. Writing them safely: a new file renamed over the old
// one, never the old one rewritten. Shared by the compiler (sources, the
// kernel cache, build outputs) and the host runtime (modules); C++17.
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

// Writes `bytes` to a unique temporary file beside `path` (created with
// `mode`, less the umask), flushes it to disk and renames it over `path`. The
// old file is never truncated or rewritten: a process that has it open or
// mapped (a loaded shared object) keeps the old contents, and no reader sees
// a partial file; of concurrent writers, the last rename wins. A symbolic
// link at `path` is replaced, not followed. False and *error on failure, with
// the temporary file removed.
bool replaceFile(const std::string& path, const std::string& bytes, std::string* error, unsigned mode = 0666);
// replaceFile for a file a user named (a build's output): a symbolic link at
// `path` is followed, and the file it names is replaced; the link stays.
bool replaceNamedFile(const std::string& path, const std::string& bytes, std::string* error);

}  // namespace tlc
