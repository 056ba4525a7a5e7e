// The kernel cache; see kernel_cache.h. SHA-256 follows FIPS 180-4.
#include "compiler/driver/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "compiler/backends/metadata.h"

namespace tlc::driver {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compress(uint32_t h[8], const unsigned char* block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
           (uint32_t)block[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

bool readFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// Writes `bytes` to a unique temporary file beside `path`, flushes it, and
// renames it over `path`.
bool writeAtomically(const std::string& path, const std::string& bytes, std::string* error) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
                    std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
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
    left -= (size_t)w;
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

std::string sha256Hex(const std::string& data) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  size_t n = data.size();
  const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t full = n / 64;
  for (size_t i = 0; i < full; ++i) compress(h, p + 64 * i);
  unsigned char tail[128] = {0};
  size_t rem = n - full * 64;
  std::memcpy(tail, p + full * 64, rem);
  tail[rem] = 0x80;
  size_t tailLen = rem + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)n * 8;
  for (int i = 0; i < 8; ++i) tail[tailLen - 1 - i] = (unsigned char)(bits >> (8 * i));
  compress(h, tail);
  if (tailLen == 128) compress(h, tail + 64);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t x : h)
    for (int s = 28; s >= 0; s -= 4) out += hex[(x >> s) & 0xf];
  return out;
}

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

std::optional<std::string> KernelCache::lookup(const std::string& key) const {
  if (!enabled_ || key.size() < 2) return std::nullopt;
  std::string base = entryBase(key), bytes, sum;
  if (!readFile(base + ".bin", &bytes) || !readFile(base + ".sum", &sum)) return std::nullopt;
  if (sha256Hex(bytes) != sum) {
    // Corrupt: remove it so that the rebuilt entry replaces it.
    ::unlink((base + ".sum").c_str());
    ::unlink((base + ".bin").c_str());
    return std::nullopt;
  }
  return base + ".bin";
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
  // Bytes first, then the checksum that makes the entry valid.
  if (!writeAtomically(base + ".bin", bytes, error)) return std::nullopt;
  if (!writeAtomically(base + ".sum", sha256Hex(bytes), error)) return std::nullopt;
  return base + ".bin";
}

std::optional<std::string> cachedBuild(const KernelCache& cache, const std::string& key,
                                       const std::function<bool(const std::string& path, std::string* error)>& build,
                                       std::string* error, bool* hit) {
  if (hit) *hit = false;
  if (auto path = cache.lookup(key)) {
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
  if (!readFile(tmp, &bytes)) {
    *error = "cannot read the built file " + tmp;
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
