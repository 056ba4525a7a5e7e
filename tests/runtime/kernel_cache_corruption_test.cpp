// Kernel cache entries that are not what the cache wrote: a directory or a
// link to /dev/zero in place of the .bin or .sum, a truncated .bin whose .sum
// matches, and CPU modules that fail the module check. Each is a miss: the
// entry is removed, rebuilt and replaced, quickly and without a crash.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "compiler/driver/cpu_cache.h"
#include "compiler/driver/kernel_cache.h"
#include "compiler/support/module_image.h"
#include "tests/runtime/build_helpers.h"

using namespace tlc;
using namespace tlc::driver;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string testKey() {
  CacheKeyParts k;
  k.sources = {"def f(...): ..."};
  k.target = "cpu";
  return cacheKey(k);
}

// Stores "payload", damages the entry with `damage(bin, sum)`, and checks
// that the next cachedBuild misses, rebuilds and leaves a good entry.
template <class Damage>
void expectRebuilt(const std::string& name, Damage damage) {
  auto dir = test::scratchDir("cache-corrupt-" + name);
  KernelCache cache(dir.string());
  std::string key = testKey(), err;
  int builds = 0;
  auto build = [&](const std::string& path, std::string*) {
    ++builds;
    std::ofstream(path, std::ios::binary) << "payload";
    return true;
  };
  auto first = cachedBuild(cache, key, build, &err);
  REQUIRE(first);
  std::string bin = *first, sum = bin.substr(0, bin.size() - 4) + ".sum";
  damage(bin, sum);
  auto start = std::chrono::steady_clock::now();
  bool hit = true;
  auto again = cachedBuild(cache, key, build, &err, &hit);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  REQUIRE(again);
  CHECK(!hit);
  CHECK(builds == 2);
  CHECK(*again == bin);
  CHECK(fs::is_regular_file(fs::symlink_status(bin)));
  CHECK(slurp(bin) == "payload");
  CHECK(cache.lookup(key));
}

void makeDirectory(const std::string& path) {
  fs::remove(path);
  fs::create_directories(path + "/inside");
}

}  // namespace

TEST_CASE("a cache .bin or .sum that is a directory is a miss, and the entry is replaced") {
  expectRebuilt("bin-dir", [](const std::string& bin, const std::string&) { makeDirectory(bin); });
  expectRebuilt("sum-dir", [](const std::string&, const std::string& sum) { makeDirectory(sum); });
}

TEST_CASE("a cache .bin linked to /dev/zero is a miss, not an endless read") {
  expectRebuilt("bin-zero", [](const std::string& bin, const std::string&) {
    fs::remove(bin);
    fs::create_symlink("/dev/zero", bin);
  });
  expectRebuilt("sum-zero", [](const std::string&, const std::string& sum) {
    fs::remove(sum);
    fs::create_symlink("/dev/zero", sum);
  });
}

TEST_CASE("a cache entry missing its .sum is a miss") {
  expectRebuilt("no-sum", [](const std::string&, const std::string& sum) { fs::remove(sum); });
}

TEST_CASE("a truncated CPU module with a matching .sum is rebuilt, not opened") {
  auto dir = test::scratchDir("cpu-cache-truncated");
  KernelCache cache(dir.string());
  cpu::CpuOptions options;
  auto compileOnce = [&](bool* hit) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    auto m = test::compileTl(sources, diags, "tests/runtime/data/scale.tl", {});
    REQUIRE(m);
    auto jit = compileForCpuCached(*m, options, diags, cache, hit);
    INFO(diags.renderAll());
    REQUIRE(jit);
    return cpuCacheKey(*m, options);
  };
  bool hit = true;
  std::string key = compileOnce(&hit);
  CHECK(!hit);
  auto bin = cache.lookup(key);
  REQUIRE(bin);
  std::string bytes = slurp(*bin);
  // The truncated bytes, stored with their own checksum: only the module check can tell.
  EntryCheck moduleCheck = [](const std::string& b, std::string* why) {
    return checkCpuModuleImage(b.data(), b.size(), why);
  };
  std::string err;
  REQUIRE(cache.store(key, bytes.substr(0, bytes.size() * 3 / 10), &err));
  CHECK(cache.lookup(key));  // the checksum alone accepts it
  CHECK(!cache.lookup(key, moduleCheck));
  CHECK(!cache.lookup(key));  // removed by the failed check
  REQUIRE(cache.store(key, bytes.substr(0, bytes.size() * 3 / 10), &err));
  compileOnce(&hit);
  CHECK(!hit);
  CHECK(cache.lookup(key, moduleCheck));
  compileOnce(&hit);
  CHECK(hit);
}
