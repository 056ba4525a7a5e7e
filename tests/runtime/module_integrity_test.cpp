// Damaged and wrong module files: the runtime checks a CPU module's bytes
// (the integrity trailer and ELF headers of compiler/support/module_image.h)
// before dlopen, and reads only regular files, so a truncated, altered or
// non-file module is a status, never a crash, hang or huge allocation.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "compiler/support/file_io.h"
#include "compiler/support/module_image.h"
#include "tests/runtime/build_helpers.h"
#include "tlc/runtime.h"

using namespace tlc::test;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

const std::string& scaleModule() {
  static std::string path = [] {
    std::string p = (scratchDir("module-integrity") / "scale.so").string();
    buildCpuModule("tests/runtime/data/scale.tl", {}, p);
    return p;
  }();
  return path;
}

// Loads `bytes` from a file and from memory; both must give `want`.
void expectLoad(const std::string& bytes, tlc_status want, const std::string& messagePart) {
  std::string path = scaleModule() + ".damaged.so";
  spit(path, bytes);
  tlc_module* m = nullptr;
  tlc_status st = tlcLoadModule(path.c_str(), &m);
  INFO(tlcGetLastError());
  CHECK(st == want);
  if (st == TLC_SUCCESS) tlcUnloadModule(m);
  else CHECK(std::string(tlcGetLastError()).find(messagePart) != std::string::npos);
  m = nullptr;
  st = tlcLoadModuleFromMemory(bytes.data(), bytes.size(), nullptr, &m);
  INFO(tlcGetLastError());
  CHECK(st == want);
  if (st == TLC_SUCCESS) tlcUnloadModule(m);
}

}  // namespace

TEST_CASE("a built CPU module ends with a trailer that checks") {
  std::string bytes = slurp(scaleModule());
  REQUIRE(bytes.size() > tlc::kModuleTrailerBytes);
  std::string why;
  CHECK(tlc::checkCpuModuleImage(bytes.data(), bytes.size(), &why));
  CHECK(bytes.substr(bytes.size() - 8) == std::string("tlcimg1\0", 8));
  expectLoad(bytes, TLC_SUCCESS, "");
}

TEST_CASE("a truncated CPU module is refused before dlopen") {
  std::string bytes = slurp(scaleModule());
  for (double fraction : {0.3, 0.9}) {
    INFO(fraction);
    expectLoad(bytes.substr(0, size_t(double(bytes.size()) * fraction)), TLC_ERROR_INVALID_MODULE, "cannot be loaded");
  }
  expectLoad(bytes.substr(0, bytes.size() - 1), TLC_ERROR_INVALID_MODULE, "no tlc integrity trailer");
  // Without the trailer: an intact ELF file, but not known to be what tlc wrote.
  expectLoad(bytes.substr(0, bytes.size() - tlc::kModuleTrailerBytes), TLC_ERROR_INVALID_MODULE,
             "no tlc integrity trailer");
  // Truncated and given a fresh trailer: the ELF headers still tell.
  std::string cut = bytes.substr(0, bytes.size() / 2);
  expectLoad(cut + tlc::moduleTrailer(cut.data(), cut.size()), TLC_ERROR_INVALID_MODULE, "truncated");
}

TEST_CASE("a CPU module with changed bytes is refused before dlopen") {
  std::string bytes = slurp(scaleModule());
  std::string one = bytes;
  one[one.size() / 2] ^= 0x5a;  // in the code or data, past the ELF header
  expectLoad(one, TLC_ERROR_INVALID_MODULE, "do not match the checksum");
  std::string all = bytes;
  for (size_t i = 16; i < all.size(); ++i) all[i] ^= 0x5a;  // every byte after the ELF identification
  expectLoad(all, TLC_ERROR_INVALID_MODULE, "cannot be loaded");
  std::string recorded = bytes;
  recorded[recorded.size() - 16] ^= 1;  // the trailer's length field
  expectLoad(recorded, TLC_ERROR_INVALID_MODULE, "trailer records");
}

TEST_CASE("a module path that is not a regular file is TLC_ERROR_FILE at once") {
  auto dir = scratchDir("module-not-file");
  std::string fifo = (dir / "fifo.so").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {dir.string(), std::string("/dev/zero"), fifo}) {
    INFO(path);
    auto start = std::chrono::steady_clock::now();
    tlc_module* m = nullptr;
    CHECK(tlcLoadModule(path.c_str(), &m) == TLC_ERROR_FILE);
    CHECK(m == nullptr);
    CHECK(std::string(tlcGetLastError()).find("not a file") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
  tlc_module* m = nullptr;
  CHECK(tlcLoadModule((dir / "missing.so").c_str(), &m) == TLC_ERROR_FILE);
  CHECK(std::string(tlcGetLastError()).find("No such file") != std::string::npos);
}

TEST_CASE("readRegularFile reads files and refuses directories, devices and oversized files") {
  auto dir = scratchDir("read-regular");
  std::string file = (dir / "f.txt").string();
  spit(file, "hello");
  std::string out, why;
  CHECK(tlc::readRegularFile(file, &out, &why) == tlc::ReadStatus::Ok);
  CHECK(out == "hello");
  CHECK(tlc::readRegularFile(file, &out, &why, 4) == tlc::ReadStatus::TooLarge);
  CHECK(out.empty());
  CHECK(why.find("too large") != std::string::npos);
  CHECK(tlc::readRegularFile(dir.string(), &out, &why) == tlc::ReadStatus::NotRegular);
  CHECK(why.find("is a directory") != std::string::npos);
  CHECK(tlc::readRegularFile("/dev/zero", &out, &why) == tlc::ReadStatus::NotRegular);
  CHECK(why.find("character device") != std::string::npos);
  CHECK(tlc::readRegularFile((dir / "none").string(), &out, &why) == tlc::ReadStatus::CannotOpen);
}

TEST_CASE("replaceFile puts a new file in place; what had the old one open keeps it; replaceNamedFile follows links") {
  namespace fs = std::filesystem;
  fs::path dir = scratchDir("replace-file");
  std::string file = (dir / "f.txt").string(), why;
  spit(file, "old contents");
  struct stat before;
  REQUIRE(::stat(file.c_str(), &before) == 0);
  std::ifstream held(file, std::ios::binary);
  REQUIRE(tlc::replaceFile(file, "new", &why));
  struct stat after;
  REQUIRE(::stat(file.c_str(), &after) == 0);
  CHECK(after.st_ino != before.st_ino);
  CHECK(std::string(std::istreambuf_iterator<char>(held), {}) == "old contents");
  std::string out;
  REQUIRE(tlc::readRegularFile(file, &out, &why) == tlc::ReadStatus::Ok);
  CHECK(out == "new");
  // No temporary file is left behind, after a success or a failure.
  CHECK(!tlc::replaceFile((dir / "missing" / "g.txt").string(), "x", &why));
  CHECK(why.find("cannot create") != std::string::npos);
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  // A chain of links whose last names no file yet: the links stay, the file appears.
  fs::create_directories(dir / "real");
  fs::create_symlink("real/target.txt", dir / "middle");
  fs::create_symlink(dir / "middle", dir / "named");
  REQUIRE(tlc::replaceNamedFile((dir / "named").string(), "through links", &why));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "named")));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "middle")));
  REQUIRE(tlc::readRegularFile((dir / "real" / "target.txt").string(), &out, &why) == tlc::ReadStatus::Ok);
  CHECK(out == "through links");
  // replaceFile itself replaces a link (the kernel cache never writes through one).
  REQUIRE(tlc::replaceFile((dir / "middle").string(), "the link's place", &why));
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "middle")));
  REQUIRE(tlc::readRegularFile((dir / "real" / "target.txt").string(), &out, &why) == tlc::ReadStatus::Ok);
  CHECK(out == "through links");
}

TEST_CASE("modules loaded one after another are each their own library") {
  std::string add = (scratchDir("module-sequence") / "add.so").string();
  REQUIRE(buildCpuModule("examples/elementwise_add/add.tl", {"dtype=float32"}, add));
  // Unloading frees the first module's in-memory file number for reuse: the
  // second load must still get its own library, not the first one again.
  for (int round = 0; round < 2; ++round) {
    for (const auto& [path, kernel] : {std::pair<std::string, std::string>{scaleModule(), "scale"},
                                       std::pair<std::string, std::string>{add, "elementwise_add"}}) {
      INFO(path);
      tlc_module* m = nullptr;
      REQUIRE(tlcLoadModule(path.c_str(), &m) == TLC_SUCCESS);
      tlc_kernel* k = nullptr;
      CHECK(tlcGetKernel(m, kernel.c_str(), &k) == TLC_SUCCESS);
      CHECK(tlcModuleNumKernels(m) == 1);
      tlcUnloadModule(m);
    }
  }
  // The same bytes loaded twice at once share one library and both work.
  tlc_module *a = nullptr, *b = nullptr;
  REQUIRE(tlcLoadModule(add.c_str(), &a) == TLC_SUCCESS);
  REQUIRE(tlcLoadModule(add.c_str(), &b) == TLC_SUCCESS);
  tlc_kernel* k = nullptr;
  CHECK(tlcGetKernel(b, "elementwise_add", &k) == TLC_SUCCESS);
  tlcUnloadModule(a);
  CHECK(tlcGetKernel(b, "elementwise_add", &k) == TLC_SUCCESS);
  tlcUnloadModule(b);
}
