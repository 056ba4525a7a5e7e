// The files the `tlc` command line reads and writes: inputs that are not
// regular files, outputs that would overwrite a source or each other, output
// directories that do not exist, --depfile, and repeated options.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/driver/run_tlc.h"

namespace fs = std::filesystem;
using driver_test::Result;
using driver_test::tlc;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = driver_test::scratchDir("cli_files") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const char* kAdd =
    "def add(A: Tensor[(64,), float32], B: Tensor[(64,), float32]):\n"
    "    with T.Kernel(1) as bx:\n"
    "        for i in T.Parallel(64):\n"
    "            B[i] = A[i] + 1.0\n";

// kAdd with its size a parameter: builds with other -D N differ in code and metadata.
const char* kSizedAdd =
    "def add[N=64](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):\n"
    "    with T.Kernel(1) as bx:\n"
    "        for i in T.Parallel(N):\n"
    "            B[i] = A[i] + 1.0\n";

// An output file held open across a rebuild, with what it held then.
struct HeldFile {
  fs::path path;
  int fd;
  ino_t inode;
  std::string text;
};

std::vector<HeldFile> holdOpen(const std::vector<fs::path>& paths) {
  std::vector<HeldFile> held;
  for (const fs::path& p : paths) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE_MESSAGE(fd >= 0, p);
    struct stat st;
    REQUIRE(::fstat(fd, &st) == 0);
    std::string text(static_cast<size_t>(st.st_size), '\0');
    REQUIRE(::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
    held.push_back({p, fd, st.st_ino, text});
  }
  return held;
}

// Each path now names a new file, and the open one still reads as before.
void checkReplaced(const std::vector<HeldFile>& held) {
  for (const HeldFile& h : held) {
    INFO(h.path);
    struct stat st;
    REQUIRE(::stat(h.path.c_str(), &st) == 0);
    CHECK(st.st_ino != h.inode);
    std::string now(h.text.size() + 1, '\0');
    ssize_t n = ::pread(h.fd, now.data(), now.size(), 0);
    now.resize(n > 0 ? static_cast<size_t>(n) : 0);
    CHECK(now == h.text);
    ::close(h.fd);
  }
}

fs::path writeSource(const fs::path& dir, const std::string& name = "k.tl", const std::string& text = kAdd) {
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("an input that is a directory or a device is file-not-readable, at once") {
  fs::path dir = scratch("inputs");
  fs::path fifo = dir / "fifo.tl";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& input : {dir.string(), std::string("/dev/zero"), fifo.string()}) {
    for (const std::string& command : {"check " + input, "emit --stage=tokens " + input,
                                       "build " + input + " -o " + (dir / "x.so").string()}) {
      INFO(command);
      auto start = std::chrono::steady_clock::now();
      Result r = tlc(command);
      INFO(r.out);
      CHECK(r.code == 1);
      CHECK(r.out.find("not a file") != std::string::npos);
      CHECK(r.out.find("[file-not-readable]") != std::string::npos);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }
  }
  CHECK(!fs::exists(dir / "x.so"));
}

TEST_CASE("build refuses an output that is the source, and outputs that are one file") {
  fs::path dir = scratch("clobber");
  fs::path src = writeSource(dir);
  std::string text = slurp(src);
  fs::create_symlink(src, dir / "link.tl");
  std::string so = (dir / "k.so").string();
  for (const std::string& args : {"-o " + src.string(), "-o " + (dir / "." / "k.tl").string(),
                                  "-o " + (dir / "link.tl").string(), "-o " + so + " --header " + src.string(),
                                  "-o " + so + " --embed " + src.string(), "-o " + so + " --depfile " + src.string()}) {
    INFO(args);
    Result r = tlc("build " + src.string() + " " + args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find("is a source of the program") != std::string::npos);
    CHECK(slurp(src) == text);
  }
  for (const std::string& args : {"-o " + so + " --header " + so, "-o " + so + " --header " + (dir / "./k.so").string(),
                                  "-o " + so + " --header " + (dir / "k.h").string() + " --embed " +
                                      (dir / "k.h").string()}) {
    INFO(args);
    Result r = tlc("build " + src.string() + " " + args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find("are the same file") != std::string::npos);
  }
  CHECK(!fs::exists(so));
}

TEST_CASE("build refuses an output that would overwrite an imported module") {
  fs::path dir = scratch("clobber-import");
  writeSource(dir, "helpers.tl", "macro one():\n    return 1.0\n");
  fs::path src = writeSource(dir, "k.tl", std::string("import helpers\n") + kAdd);
  std::string before = slurp(dir / "helpers.tl");
  Result r = tlc("build " + src.string() + " -o " + (dir / "helpers.tl").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("is a source of the program") != std::string::npos);
  CHECK(slurp(dir / "helpers.tl") == before);
}

TEST_CASE("build says clearly when an output directory does not exist or is a directory") {
  fs::path dir = scratch("outdir");
  fs::path src = writeSource(dir);
  Result missing = tlc("build " + src.string() + " -o " + (dir / "no" / "such" / "k.so").string());
  INFO(missing.out);
  CHECK(missing.code == 2);
  CHECK(missing.out.find("does not exist") != std::string::npos);
  CHECK(missing.out.find(" ld") == std::string::npos);
  Result header = tlc("build " + src.string() + " -o " + (dir / "k.so").string() + " --header " +
                      (dir / "nodir" / "k.h").string());
  CHECK(header.code == 2);
  CHECK(header.out.find("--header") != std::string::npos);
  Result isDir = tlc("build " + src.string() + " -o " + dir.string());
  CHECK(isDir.code == 2);
  CHECK(isDir.out.find("is a directory") != std::string::npos);
}

TEST_CASE("build --depfile lists the source and every imported module") {
  fs::path dir = scratch("depfile dir");  // a space, escaped in the depfile
  fs::create_directories(dir / "lib");
  writeSource(dir / "lib", "consts.tl", "macro two():\n    return 2.0\n");
  writeSource(dir, "helpers.tl", "import lib.consts\nmacro one():\n    return 1.0\n");
  fs::path src = writeSource(dir, "k.tl", std::string("import helpers\n") + kAdd);
  fs::path so = dir / "k.so", dep = dir / "k.d";
  Result r = tlc("build '" + src.string() + "' -o '" + so.string() + "' --depfile '" + dep.string() + "'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::string text = slurp(dep);
  INFO(text);
  auto escaped = [](std::string s) {
    std::string out;
    for (char c : s) out += c == ' ' ? std::string("\\ ") : std::string(1, c);
    return out;
  };
  CHECK(text.rfind(escaped(so.string()) + ":", 0) == 0);
  CHECK(text.find(escaped(src.string())) != std::string::npos);
  CHECK(text.find(escaped((dir / "helpers.tl").string())) != std::string::npos);
  CHECK(text.find(escaped((dir / "lib" / "consts.tl").string())) != std::string::npos);
}

TEST_CASE("a --dim given twice is a command-line error") {
  fs::path dir = scratch("dims");
  fs::path src = writeSource(dir, "k.tl",
                             "def f[M](A: Tensor[(M,), float32]):\n"
                             "    with T.Kernel(1) as bx:\n"
                             "        A[0] = 1.0\n");
  Result r = tlc("run " + src.string() + " --target=interp --dim M=4 --dim M=8");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("given twice (M=4 and M=8)") != std::string::npos);
  CHECK(tlc("run " + src.string() + " --target=interp --dim M=4").code == 0);
}

TEST_CASE("a rebuild replaces its outputs whole: a library loaded from the old one and open files keep their bytes") {
  fs::path dir = scratch("rebuild");
  fs::path src = writeSource(dir, "k.tl", kSizedAdd);
  fs::path so = dir / "k.so", header = dir / "k.h", embed = dir / "k_embed.c", dep = dir / "k.d";
  // The header goes through a symbolic link, to a file that is not there yet.
  fs::create_symlink("k_real.h", header);
  auto build = [&](int n) {
    Result r = tlc("build " + src.string() + " -D N=" + std::to_string(n) + " -o " + so.string() + " --header " +
                   header.string() + " --embed " + embed.string() + " --depfile " + dep.string());
    INFO(r.out);
    return r.code;
  };
  REQUIRE(build(64) == 0);
  CHECK(fs::is_symlink(fs::symlink_status(header)));
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "k_real.h")));
  // Linked nodelete, the library stays mapped until this process exits.
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  const char* metadata = static_cast<const char*>(dlsym(lib, "tlc_module_metadata"));
  REQUIRE(metadata != nullptr);
  std::string loaded = metadata;
  std::vector<HeldFile> held = holdOpen({so, dir / "k_real.h", embed, dep});
  REQUIRE(build(128) == 0);
  CHECK(std::string(metadata) == loaded);
  CHECK(slurp(so) != held[0].text);
  checkReplaced(held);
  CHECK(fs::is_symlink(fs::symlink_status(header)));
  dlclose(lib);
#ifdef TLC_TEST_HAVE_CUDA
  fs::path cubin = dir / "k.cubin";
  std::string cudaBuild = "build --target=cuda:sm_80 " + src.string() + " -o " + cubin.string() + " -D N=";
  Result first = tlc(cudaBuild + "64");
  INFO(first.out);
  REQUIRE(first.code == 0);
  std::vector<HeldFile> device = holdOpen({cubin, dir / "k.cubin.json"});
  Result second = tlc(cudaBuild + "128");
  INFO(second.out);
  REQUIRE(second.code == 0);
  checkReplaced(device);
#endif
}
