#include "compiler/support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>

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

bool replaceFile(const std::string& path, const std::string& bytes, std::string* error, unsigned mode) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
                    std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) {
    *error = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      *error = "cannot write " + tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  int flushError = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && flushError == 0) flushError = errno;
  if (flushError != 0) {
    *error = "cannot write " + tmp + ": " + std::strerror(flushError);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool replaceNamedFile(const std::string& path, const std::string& bytes, std::string* error) {
  // Follows the chain of links by hand: the last one may name a file that
  // does not exist yet.
  std::filesystem::path target = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec)); ++hops) {
    std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return replaceFile(target.string(), bytes, error);
}

}  // namespace tlc
