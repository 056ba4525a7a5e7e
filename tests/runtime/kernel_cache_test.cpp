// The kernel cache: SHA-256 vectors, hit, miss on a changed parameter,
// target or version, corrupt entries, TLC_CACHE=0, and concurrent writers
// (threads and processes) of one key.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <atomic>
#include <thread>

#include "compiler/driver/kernel_cache.h"
#include "tests/runtime/build_helpers.h"

using namespace tlc::driver;

namespace {
std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
CacheKeyParts gemmKey() {
  CacheKeyParts k;
  k.sources = {"def gemm[M, N, K](...): ..."};
  k.defines = {{"M", "64"}, {"N", "64"}};
  k.target = "cpu";
  k.options = "cpu=znver5 O3";
  return k;
}
}  // namespace

TEST_CASE("sha256 matches the FIPS 180-4 test vectors") {
  CHECK(sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("cache keys change with every input and not with define order") {
  CacheKeyParts a = gemmKey();
  std::string k = cacheKey(a);
  CHECK(k.size() == 64);
  CacheKeyParts b = a;
  std::swap(b.defines[0], b.defines[1]);
  CHECK(cacheKey(b) == k);
  b = a;
  b.defines[1].second = "128";
  CHECK(cacheKey(b) != k);
  b = a;
  b.target = "cuda:sm_90";
  CHECK(cacheKey(b) != k);
  b = a;
  b.version = "9.9.9";
  CHECK(cacheKey(b) != k);
  b = a;
  b.sources[0] += " ";
  CHECK(cacheKey(b) != k);
  b = a;
  b.options = "cpu=znver4 O3";
  CHECK(cacheKey(b) != k);
}

TEST_CASE("store then lookup hits; a changed parameter misses") {
  auto dir = tlc::test::scratchDir("cache-hit");
  KernelCache cache(dir.string());
  std::string key = cacheKey(gemmKey()), err;
  CHECK(!cache.lookup(key));
  auto stored = cache.store(key, "kernel bytes", &err);
  REQUIRE(stored);
  auto hit = cache.lookup(key);
  REQUIRE(hit);
  CHECK(*hit == *stored);
  CHECK(slurp(*hit) == "kernel bytes");
  CacheKeyParts changed = gemmKey();
  changed.defines[0].second = "65";
  CHECK(!cache.lookup(cacheKey(changed)));
}

TEST_CASE("a corrupt entry is detected, removed and rebuilt") {
  auto dir = tlc::test::scratchDir("cache-corrupt");
  KernelCache cache(dir.string());
  std::string key = cacheKey(gemmKey()), err;
  auto path = cache.store(key, std::string(4096, 'x'), &err);
  REQUIRE(path);
  {
    std::fstream f(*path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('y');
  }
  CHECK(!cache.lookup(key));
  CHECK(!std::filesystem::exists(*path));
  REQUIRE(cache.store(key, std::string(4096, 'x'), &err));
  CHECK(cache.lookup(key));
  // A truncated entry too.
  std::filesystem::resize_file(*path, 10);
  CHECK(!cache.lookup(key));
}

TEST_CASE("TLC_CACHE=0 disables the cache; XDG_CACHE_HOME places it") {
  auto dir = tlc::test::scratchDir("cache-env");
  ::unsetenv("TLC_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", dir.string().c_str(), 1);
  ::setenv("TLC_CACHE", "0", 1);
  KernelCache off = KernelCache::fromEnvironment();
  CHECK(!off.enabled());
  std::string err;
  CHECK(!off.store("abcdef", "x", &err));
  CHECK(err.empty());
  ::unsetenv("TLC_CACHE");
  KernelCache on = KernelCache::fromEnvironment();
  CHECK(on.enabled());
  CHECK(on.dir() == dir.string() + "/tlc");
  CHECK(on.store("abcdef", "x", &err));
  CHECK(std::filesystem::exists(dir / "tlc" / "v1" / "ab" / "abcdef.bin"));
}

TEST_CASE("concurrent writers of one key: threads and processes") {
  auto dir = tlc::test::scratchDir("cache-concurrent");
  KernelCache cache(dir.string());
  std::string key = cacheKey(gemmKey());
  std::string payload(200000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = char(i * 131 % 251);
  // Two builder processes.
  std::vector<pid_t> kids;
  for (int c = 0; c < 2; ++c) {
    pid_t pid = fork();
    if (pid == 0) {
      int bad = 0;
      for (int i = 0; i < 20; ++i) {
        std::string err;
        if (!cache.store(key, payload, &err)) bad++;
        if (auto p = cache.lookup(key); p && slurp(*p) != payload) bad++;
      }
      _exit(bad == 0 ? 0 : 1);
    }
    kids.push_back(pid);
  }
  // Builder threads in this process at the same time (started after fork).
  std::vector<std::thread> threads;
  std::atomic<int> badReads{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        std::string err;
        if (!cache.store(key, payload, &err)) badReads++;
        if (auto p = cache.lookup(key); p && slurp(*p) != payload) badReads++;
      }
    });
  for (auto& t : threads) t.join();
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  CHECK(badReads == 0);
  auto hit = cache.lookup(key);
  REQUIRE(hit);
  CHECK(slurp(*hit) == payload);
  // No temporary files left behind.
  int files = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++files;
  CHECK(files == 2);
}

TEST_CASE("cachedBuild builds on a miss, answers from the cache after, and rebuilds a corrupt entry") {
  auto dir = tlc::test::scratchDir("cache-build");
  KernelCache cache(dir.string());
  int builds = 0;
  auto build = [&](const std::string& path, std::string* err) {
    ++builds;
    std::ofstream(path, std::ios::binary) << "built #" << builds;
    return true;
  };
  std::string key = cacheKey(gemmKey()), err;
  bool hit = true;
  auto p1 = cachedBuild(cache, key, build, &err, &hit);
  REQUIRE(p1);
  CHECK(!hit);
  CHECK(slurp(*p1) == "built #1");
  auto p2 = cachedBuild(cache, key, build, &err, &hit);
  REQUIRE(p2);
  CHECK(hit);
  CHECK(builds == 1);
  std::ofstream(*p2, std::ios::binary | std::ios::app) << "garbage";
  auto p3 = cachedBuild(cache, key, build, &err, &hit);
  REQUIRE(p3);
  CHECK(!hit);
  CHECK(builds == 2);
  CHECK(slurp(*p3) == "built #2");
  auto failing = [](const std::string&, std::string* e) {
    *e = "no compiler";
    return false;
  };
  CacheKeyParts other = gemmKey();
  other.target = "cuda:sm_80";
  CHECK(!cachedBuild(cache, cacheKey(other), failing, &err));
  CHECK(err == "no compiler");
  KernelCache off(dir.string(), /*enabled=*/false);
  auto p4 = cachedBuild(off, key, build, &err, &hit);
  REQUIRE(p4);
  CHECK(!hit);
  CHECK(p4->find(dir.string()) == std::string::npos);
  std::filesystem::remove(*p4);
}
