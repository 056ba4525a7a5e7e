// The kernel cache; see kernel_cache.h.
#include "compiler/driver/kernel_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "compiler/backends/metadata.h"
#include "compiler/support/file_io.h"

namespace tlc::driver {
namespace {

// An exclusive lock on the directory of an entry while its two files change
// or a reader decides it is corrupt: writers of one key do not interleave
// their bytes and checksums, and a reader never removes an entry a writer is
// half way through. No lock file: the directory itself is locked (flock).
class EntryLock {
 public:
  explicit EntryLock(const std::string& base)
      : fd_(::open(std::filesystem::path(base).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~EntryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_;
};

// Removes a cache file whatever it has become (a file, a symbolic link, a
// directory); never follows a link.
void removeEntryFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::symlink_status(path, ec)))
    std::filesystem::remove_all(path, ec);
  else
    std::filesystem::remove(path, ec);
}

}  // namespace

// The running compiler's identity beyond its version number: the size and
// modification time of its executable, so that a rebuilt tlc never reuses
// kernels an older build of the same version produced.
static const std::string& compilerBuildId() {
  static const std::string id = [] {
    struct stat st;
    if (stat("/proc/self/exe", &st) != 0) return std::string();
    return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

std::string cacheKey(const CacheKeyParts& parts) {
  // Length-prefixed fields so that no two different inputs serialize alike.
  std::string s;
  auto field = [&](const std::string& tag, const std::string& v) {
    s += tag + ":" + std::to_string(v.size()) + ":" + v + ";";
  };
  field("version", parts.version.empty() ? meta::tlcVersion() : parts.version);
  if (parts.version.empty()) field("build", compilerBuildId());
  field("target", parts.target);
  field("options", parts.options);
  auto defines = parts.defines;
  std::sort(defines.begin(), defines.end());
  for (const auto& [k, v] : defines) field("define", k + "=" + v);
  for (const std::string& src : parts.sources) field("source", src);
  return sha256Hex(s);
}

KernelCache::KernelCache(std::string dir, bool enabled) : dir_(std::move(dir)), enabled_(enabled && !dir_.empty()) {}

KernelCache KernelCache::fromEnvironment() {
  const char* off = std::getenv("TLC_CACHE");
  bool enabled = !(off && (std::string(off) == "0" || std::string(off) == "off" || std::string(off) == "false"));
  std::string dir;
  if (const char* d = std::getenv("TLC_CACHE_DIR"); d && *d) dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/tlc";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/tlc";
  return KernelCache(dir, enabled);
}

std::string KernelCache::entryBase(const std::string& key) const {
  return dir_ + "/v1/" + key.substr(0, 2) + "/" + key;
}

std::optional<std::string> KernelCache::lookup(const std::string& key, const EntryCheck& check) const {
  if (!enabled_ || key.size() < 2) return std::nullopt;
  std::string base = entryBase(key);
  // 1: valid, 0: absent, -1: corrupt (half an entry, a directory or device
  // in its place, changed bytes).
  auto state = [&] {
    std::string bytes, sum, why;
    ReadStatus binStatus = readRegularFile(base + ".bin", &bytes, &why);
    ReadStatus sumStatus = readRegularFile(base + ".sum", &sum, &why, 64);
    if (binStatus == ReadStatus::CannotOpen && sumStatus == ReadStatus::CannotOpen) return 0;
    if (binStatus != ReadStatus::Ok || sumStatus != ReadStatus::Ok || sha256Hex(bytes) != sum ||
        (check && !check(bytes, &why)))
      return -1;
    return 1;
  };
  int s = state();
  if (s == 1) return base + ".bin";
  if (s == 0) return std::nullopt;
  // What looks corrupt may be a writer between its two files: decide again
  // under the entry's lock, and remove it only if it still is, so that the
  // rebuilt entry replaces it.
  EntryLock lock(base);
  s = state();
  if (s == 1) return base + ".bin";
  if (s == -1) {
    removeEntryFile(base + ".sum");
    removeEntryFile(base + ".bin");
  }
  return std::nullopt;
}

std::optional<std::string> KernelCache::store(const std::string& key, const std::string& bytes,
                                              std::string* error) const {
  error->clear();
  if (!enabled_ || key.size() < 2) return std::nullopt;
  std::string base = entryBase(key);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(base).parent_path(), ec);
  if (ec) {
    *error = "cannot create the cache directory " + std::filesystem::path(base).parent_path().string() + ": " +
             ec.message();
    return std::nullopt;
  }
  // Bytes first, then the checksum that makes the entry valid; one writer
  // of the directory's entries at a time.
  EntryLock lock(base);
  if (!replaceFile(base + ".bin", bytes, error, 0644)) return std::nullopt;
  if (!replaceFile(base + ".sum", sha256Hex(bytes), error, 0644)) return std::nullopt;
  return base + ".bin";
}

std::vector<std::string> KernelCache::keys() const {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::path root = std::filesystem::path(dir_) / "v1";
  if (!enabled_ || !std::filesystem::is_directory(root, ec)) return out;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    if (p.extension() == ".bin" && p.stem().string().size() > 2) out.push_back(p.stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> cachedBuild(const KernelCache& cache, const std::string& key,
                                       const std::function<bool(const std::string& path, std::string* error)>& build,
                                       std::string* error, bool* hit, const EntryCheck& check) {
  if (hit) *hit = false;
  if (auto path = cache.lookup(key, check)) {
    if (hit) *hit = true;
    return path;
  }
  std::error_code ec;
  std::filesystem::path tmpDir = std::filesystem::temp_directory_path(ec);
  if (ec) tmpDir = "/tmp";
  std::random_device rd;
  std::string tmp = (tmpDir / ("tlc-build-" + std::to_string(::getpid()) + "-" + std::to_string(rd()))).string();
  if (!build(tmp, error)) {
    ::unlink(tmp.c_str());
    return std::nullopt;
  }
  std::string bytes;
  if (readRegularFile(tmp, &bytes, error) != ReadStatus::Ok) {
    *error = "cannot read the built file: " + *error;
    return std::nullopt;
  }
  std::string storeError;
  if (auto stored = cache.store(key, bytes, &storeError)) {
    ::unlink(tmp.c_str());
    return stored;
  }
  return tmp;  // uncached: the caller owns the temporary file
}

}  // namespace tlc::driver
