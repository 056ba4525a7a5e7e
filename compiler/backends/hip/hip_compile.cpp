#include "compiler/backends/hip/hip_compile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <vector>

#include "compiler/backends/asm_helpers.h"
#include "compiler/backends/rtc_library.h"
#include "compiler/support/sha256.h"

namespace tlc::hip {

namespace fs = std::filesystem;

namespace {

#include "tlc_hip_headers.inc"  // kTlcHipShim, kTlcCudaHelpers, kEmuFloat

// ---- hiprtc -----------------------------------------------------------------

// hiprtc's entry points beyond those every runtime compiler has.
struct Hiprtc : backend::RtcLibrary {
  SizeFn codeSize = nullptr;
  GetFn code = nullptr;
};

Hiprtc& hiprtc() {
  static Hiprtc lib;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("TLC_HIPRTC"); env && *env) candidates.push_back(env);
    for (const char* n : {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so", "libamdhip64.so.6",
                          "libamdhip64.so.5", "/opt/rocm/lib/libhiprtc.so", "/opt/rocm/lib/libamdhip64.so"})
      candidates.push_back(n);
    if (lib.load(candidates, "hiprtc")) {
      lib.codeSize = (Hiprtc::SizeFn)lib.symbol("hiprtcGetCodeSize");
      lib.code = (Hiprtc::GetFn)lib.symbol("hiprtcGetCode");
      if (lib.codeSize && lib.code) return;
      lib.handle = nullptr;
    }
    lib.error = "cannot load hiprtc (libhiprtc.so, or libamdhip64.so of ROCm 5): install ROCm's HIP runtime "
                "(Debian: apt-get install libamdhip64-dev libhiprtc-builtins5 libamd-comgr-dev rocm-device-libs), "
                "or set TLC_HIPRTC to the library's path";
  });
  return lib;
}

HipBuildResult compileWithHiprtc(const std::string& source, const HipArch& arch) {
  HipBuildResult result;
  Hiprtc& lib = hiprtc();
  if (!lib.handle) {
    result.error = lib.error;
    return result;
  }
  Hiprtc::Program prog = nullptr;
  const char* headers[] = {hipHelperHeader().c_str()};
  const char* names[] = {"tlc_hip.h"};
  int rc = lib.create(&prog, source.c_str(), "tlc_kernel.hip", 1, headers, names);
  if (rc != 0) {
    result.error = std::string("hiprtcCreateProgram failed: ") + lib.errorString(rc);
    return result;
  }
  std::string archOpt = "--offload-arch=" + arch.name;
  std::vector<const char*> argv = {archOpt.c_str(), "-O3", "-std=c++17"};
  rc = lib.compile(prog, (int)argv.size(), argv.data());
  std::string log = lib.programLog(prog);
  if (rc != 0) {
    result.error = std::string("hiprtc failed to compile the generated HIP C for ") + arch.name + " (" +
                   lib.errorString(rc) + "):\n" + log;
    lib.destroy(&prog);
    return result;
  }
  size_t size = 0;
  lib.codeSize(prog, &size);
  result.binary.resize(size);
  lib.code(prog, result.binary.data());
  lib.destroy(&prog);
  result.ok = true;
  return result;
}

// ---- external tools (clang, llvm-objdump) -----------------------------------

bool isExecutable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

// The first of `names` found as given, on PATH, or under /usr/lib/llvm-N/bin.
std::string findTool(const char* envVar, const std::vector<std::string>& names) {
  if (const char* env = std::getenv(envVar); env && *env) return isExecutable(env) ? env : "";
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  for (const char* v : {"19", "20", "18"}) dirs.push_back(std::string("/usr/lib/llvm-") + v + "/bin");
  for (const std::string& n : names)
    for (const std::string& d : dirs)
      if (isExecutable(d + "/" + n)) return d + "/" + n;
  return "";
}

std::string clangPath() { return findTool("TLC_HIP_CLANG", {"clang-19", "clang-20", "clang-18", "clang"}); }

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool writeText(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  return (bool)out;
}

// A private directory of this process for one tool run; removed by the caller.
fs::path scratchDir(const std::string& what) {
  const char* tmp = std::getenv("TMPDIR");
  fs::path dir = fs::path(tmp && *tmp ? tmp : "/tmp") /
                 ("tlc-hip-" + std::to_string(getuid())) / (what + "-" + std::to_string(getpid()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir;
}

// Runs `cmd` with its output in `log`; the exit status.
int runLogged(const std::string& cmd, const fs::path& log) {
  return std::system((cmd + " > " + quote(log.string()) + " 2>&1").c_str());
}

std::string deviceLibrarySource() {
  if (const char* env = std::getenv("TLC_ROCM_DEVICE_LIBS"); env && *env) return env;
  for (const char* d : {"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode",
                        "/opt/rocm/lib/llvm/lib/clang/amdgcn/bitcode"})
    if (fs::exists(fs::path(d) / "ocml.bc")) return d;
  return "";
}

// The device library directory for `arch`: the installed one when it has the
// arch's ISA-version library, else a private copy with one written by clang.
bool deviceLibraries(const std::string& clang, const HipArch& arch, std::string* dir, std::string* error) {
  std::string src = deviceLibrarySource();
  if (src.empty()) {
    *error = "cannot find the ROCm device libraries (ocml.bc, ockl.bc, oclc_*.bc): install them (Debian: "
             "apt-get install rocm-device-libs), or set TLC_ROCM_DEVICE_LIBS to their directory";
    return false;
  }
  const std::string version = arch.name.substr(3);  // "942"
  const std::string isaLib = "oclc_isa_version_" + version + ".bc";
  if (fs::exists(fs::path(src) / isaLib)) {
    *dir = src;
    return true;
  }
  const char* tmp = std::getenv("TMPDIR");
  fs::path copy = fs::path(tmp && *tmp ? tmp : "/tmp") / ("tlc-hip-" + std::to_string(getuid())) /
                  ("device-libs-" + sha256Hex(src).substr(0, 12));
  *dir = copy.string();
  if (fs::exists(copy / isaLib)) return true;
  std::error_code ec;
  fs::create_directories(copy, ec);
  for (auto& e : fs::directory_iterator(src, ec))
    if (e.path().extension() == ".bc" && !fs::exists(copy / e.path().filename()))
      fs::create_symlink(e.path(), copy / e.path().filename(), ec);
  // The ISA version of gfxABC is the decimal A*1000 + B*100 + C (hex digits).
  int v = (int)std::stoul(version, nullptr, 16);
  int isa = (v >> 8) * 1000 + ((v >> 4) & 15) * 100 + (v & 15);
  fs::path work = scratchDir("isa");
  fs::path ll = work / "isa.ll", bc = work / isaLib, log = work / "log";
  writeText(ll, "target triple = \"amdgcn-amd-amdhsa\"\n@__oclc_ISA_version = linkonce_odr protected "
                "local_unnamed_addr addrspace(4) constant i32 " +
                    std::to_string(isa) + ", align 4\n");
  int rc = runLogged(quote(clang) + " -c -x ir -emit-llvm --target=amdgcn-amd-amdhsa -nogpulib " +
                         quote(ll.string()) + " -o " + quote(bc.string()),
                     log);
  if (rc != 0) {
    *error = "cannot write " + isaLib + " for the device libraries with " + clang + ":\n" + readText(log);
    fs::remove_all(work, ec);
    return false;
  }
  fs::rename(bc, copy / isaLib, ec);  // atomic: concurrent builds write the same bytes
  fs::remove_all(work, ec);
  return fs::exists(copy / isaLib);
}

HipBuildResult compileWithClang(const std::string& source, const HipArch& arch) {
  HipBuildResult result;
  std::string clang = clangPath();
  if (clang.empty()) {
    result.error = "cannot find clang with the AMDGPU target, which compiles HIP C for " + arch.name +
                   ": install LLVM 19 (Debian: apt-get install clang-19), or set TLC_HIP_CLANG to clang's path";
    return result;
  }
  std::string libs;
  if (!deviceLibraries(clang, arch, &libs, &result.error)) return result;
  fs::path work = scratchDir("build");
  fs::path src = work / "tlc_kernel.hip", out = work / "tlc_kernel.hsaco", log = work / "log";
  if (!writeText(src, source) || !writeText(work / "tlc_hip.h", hipHelperHeader())) {
    result.error = "cannot write the HIP build files under " + work.string();
    return result;
  }
  std::string cmd = quote(clang) + " -x hip --offload-arch=" + arch.name +
                    " --cuda-device-only --no-gpu-bundle-output -O3 -std=c++17 -w --rocm-device-lib-path=" +
                    quote(libs) + " -I" + quote(work.string()) + " " + quote(src.string()) + " -o " +
                    quote(out.string());
  int rc = runLogged(cmd, log);
  std::error_code ec;
  if (rc != 0) {
    std::string text = readText(log);
    if (text.size() > 8000) text = text.substr(0, 8000) + "\n...";
    result.error = clang + " failed to compile the generated HIP C for " + arch.name + ":\n" + text;
    if (text.find("hip_runtime.h") != std::string::npos || text.find("HIP installation") != std::string::npos)
      result.error += "\n(clang needs the HIP headers: apt-get install libamdhip64-dev)";
    fs::remove_all(work, ec);
    return result;
  }
  result.binary = readText(out);
  fs::remove_all(work, ec);
  result.ok = !result.binary.empty();
  if (!result.ok) result.error = clang + " wrote no code object for " + arch.name;
  return result;
}

}  // namespace

const std::string& hipHelperHeader() {
  static const std::string header = [] {
    std::string cudaHelpers = std::regex_replace(std::string(kTlcCudaHelpers), std::regex("#include <cuda_[a-z0-9]+\\.h>\n"), "");
    cudaHelpers = backend::replaceAsmHelpers(
        cudaHelpers, [](const std::string&) { return "__builtin_trap(); __builtin_unreachable();"; });
    std::string emuFloat = std::regex_replace(std::string(kEmuFloat), std::regex("#include <[a-z.]+>\n"), "");
    std::string out = kTlcHipShim;
    auto put = [&](const std::string& marker, const std::string& text) {
      size_t at = out.find(marker);
      if (at != std::string::npos) out.replace(at, marker.size(), text);
    };
    put("// @EMU_FLOAT@", emuFloat);
    put("// @CUDA_HELPERS@", cudaHelpers);
    return out;
  }();
  return header;
}

HipBuildResult compileHip(const std::string& source, const HipArch& arch) {
  return arch.compiler == HipCompiler::Hiprtc ? compileWithHiprtc(source, arch) : compileWithClang(source, arch);
}

bool hipCompilerAvailable(const HipArch& arch, std::string* why) {
  std::string error;
  if (arch.compiler == HipCompiler::Hiprtc) {
    if (!hiprtc().handle) error = hiprtc().error;
  } else if (clangPath().empty()) {
    error = "clang (LLVM 19 with the AMDGPU target) is not installed";
  } else if (deviceLibrarySource().empty()) {
    error = "the ROCm device libraries are not installed";
  } else if (!fs::exists("/usr/include/hip/hip_runtime.h") && !fs::exists("/opt/rocm/include/hip/hip_runtime.h")) {
    error = "the HIP headers are not installed";
  }
  if (why) *why = error;
  return error.empty();
}

bool disassembleHsaco(const std::string& binary, const HipArch& arch, std::string* text, std::string* error) {
  std::string objdump = findTool("TLC_LLVM_OBJDUMP", {"llvm-objdump-19", "llvm-objdump-20", "llvm-objdump-18",
                                                      "llvm-objdump"});
  if (objdump.empty()) {
    *error = "cannot find llvm-objdump, which disassembles AMDGPU code: install LLVM 19 (Debian: apt-get "
             "install llvm-19), or set TLC_LLVM_OBJDUMP";
    return false;
  }
  fs::path work = scratchDir("objdump");
  fs::path obj = work / "kernel.hsaco", log = work / "out";
  std::error_code ec;
  if (!writeText(obj, binary)) {
    *error = "cannot write " + obj.string();
    return false;
  }
  int rc = std::system((quote(objdump) + " -d --mcpu=" + arch.name + " " + quote(obj.string()) + " > " +
                        quote(log.string()) + " 2>&1")
                           .c_str());
  *text = readText(log);
  fs::remove_all(work, ec);
  if (rc != 0) {
    *error = objdump + " failed:\n" + *text;
    return false;
  }
  return true;
}

std::string hsacoArch(const std::string& b) {
  // ELF64: e_machine (u16 at 18) is EM_AMDGPU (224); e_flags (u32 at 48)
  // holds EF_AMDGPU_MACH in its low byte.
  if (b.size() < 64 || b.compare(0, 4, "\x7f" "ELF") != 0 || b[4] != 2) return "";
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::memcpy(&machine, b.data() + 18, 2);
  std::memcpy(&flags, b.data() + 48, 4);
  if (machine != 224) return "";
  for (const HipArch& a : supportedHipArchs())
    if (a.elfMachine == (flags & 0xff)) return a.name;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02x", flags & 0xff);
  return std::string("gfx(mach ") + hex + ")";
}

}  // namespace tlc::hip
