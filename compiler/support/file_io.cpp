#include "compiler/support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tlc {
namespace {

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

ReadStatus readRegularFile(const std::string& path, std::string* out, std::string* error, uint64_t maxBytes) {
  out->clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    return ReadStatus::CannotOpen;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return ReadStatus::CannotOpen;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "'" + path + "' is " + fileTypeName(st.st_mode) + ", not a file";
    ::close(fd);
    return ReadStatus::NotRegular;
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    *error = "'" + path + "' is too large (" + std::to_string(st.st_size) + " bytes; the limit is " +
             std::to_string(maxBytes) + ")";
    ::close(fd);
    return ReadStatus::TooLarge;
  }
  // The file may change while it is read: never read past the limit.
  std::string bytes;
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t have = 0;
  while (true) {
    if (have == bytes.size()) {
      if (bytes.size() > maxBytes) break;
      bytes.resize(bytes.size() + 4096);
    }
    ssize_t n = ::read(fd, &bytes[have], bytes.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return ReadStatus::ReadError;
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  if (have > maxBytes) {
    *error = "'" + path + "' grew past the size limit of " + std::to_string(maxBytes) + " bytes while being read";
    return ReadStatus::TooLarge;
  }
  bytes.resize(have);
  *out = std::move(bytes);
  return ReadStatus::Ok;
}

}  // namespace tlc
