// Generated CUDA C -> host shared object (see host_compile.h).
#include "compiler/backends/cuda_emu/host_compile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "compiler/backends/asm_helpers.h"
#include "compiler/backends/c_names.h"

namespace tlc::cuda_emu {

namespace {
#include "cuda_emu_embedded.inc"  // kEmuAbi, kEmuFloat, kEmuPrelude, kDeviceHelpers

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\n\r");
  size_t e = s.find_last_not_of(" \t\n\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Body of the host version of a helper written in inline PTX, keyed by the
// helper's name in runtime/cuda/tlc_cuda.h. Parameter names are those of
// that header.
bool helperBody(const std::string& name, std::string* body) {
  static const std::map<std::string, std::string> kBodies = {
      {"cp_async16", "tlc_emu::cp_async(smem, gmem, 16, valid ? 16 : 0);"},
      {"cp_async8", "tlc_emu::cp_async(smem, gmem, 8, valid ? 8 : 0);"},
      {"cp_async4", "tlc_emu::cp_async(smem, gmem, 4, valid ? 4 : 0);"},
      {"cp_async_commit", "tlc_emu::cp_async_commit();"},
      {"cp_async_wait", "tlc_emu::cp_async_wait(N);"},
      {"cp_async_wait_all", "tlc_emu::cp_async_wait(-1);"},
      {"mma_m16n8k16_f16", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K16_F32_F16, d, a, b, d);"},
      {"mma_m16n8k16_bf16", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K16_F32_BF16, d, a, b, d);"},
      {"mma_m16n8k8_f16", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K8_F32_F16, d, a, b, d);"},
      {"mma_m16n8k8_bf16", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K8_F32_BF16, d, a, b, d);"},
      {"mma_m16n8k8_tf32", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K8_F32_TF32, d, a, b, d);"},
      {"mma_m16n8k4_tf32", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K4_F32_TF32, d, a, b, d);"},
      {"mma_m16n8k32_s8",
       "tlc_emu::mma(TLC_EMU_MMA_M16N8K32_S32_S8, (uint32_t*)d, a, b, (const uint32_t*)d);"},
      {"mma_m16n8k16_s8",
       "tlc_emu::mma(TLC_EMU_MMA_M16N8K16_S32_S8, (uint32_t*)d, a, b, (const uint32_t*)d);"},
      {"mma_m16n8k32_u8",
       "tlc_emu::mma(TLC_EMU_MMA_M16N8K32_S32_U8, (uint32_t*)d, a, b, (const uint32_t*)d);"},
      {"mma_m16n8k32_e4m3", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K32_F32_E4M3, d, a, b, d);"},
      {"mma_m16n8k32_e5m2", "tlc_emu::mma_f32(TLC_EMU_MMA_M16N8K32_F32_E5M2, d, a, b, d);"},
      {"to_tf32", "return tlc_emu_float::floatToTf32(x);"},
      {"xor_and", "return (a & b) ^ c;"},
      {"fence_registers", "(void)r;"},  // a compiler barrier only
      {"opaque", "return p;"},          // likewise
      {"runtime_value", "return v;"},   // hides v from the compiler only
      // Hopper
      {"mbar_init", "tlc_emu::mbar_init(bar, arrivals);"},
      {"mbar_init_fence", "tlc_emu::fence(TLC_EMU_FENCE_MBAR_INIT);"},
      {"mbar_arrive", "tlc_emu::mbar_arrive(bar, 0);"},
      {"mbar_arrive_expect_tx", "tlc_emu::mbar_arrive(bar, bytes);"},
      // The thread's copies land before the arrival they trigger.
      {"cp_async_mbar_arrive", "tlc_emu::cp_async_wait(-1); tlc_emu::mbar_arrive(bar, 0);"},
      {"mbar_wait", "tlc_emu::mbar_wait(bar, parity);"},
      {"fence_proxy_async", "tlc_emu::fence(TLC_EMU_FENCE_PROXY_ASYNC);"},
      {"tma_prefetch", "(void)map;"},
      {"tma_store_1d", "tlc_emu::tma_store(1, map, smem, c0);"},
      {"tma_store_2d", "tlc_emu::tma_store(2, map, smem, c0, c1);"},
      {"tma_store_3d", "tlc_emu::tma_store(3, map, smem, c0, c1, c2);"},
      {"tma_store_4d", "tlc_emu::tma_store(4, map, smem, c0, c1, c2, c3);"},
      {"tma_store_5d", "tlc_emu::tma_store(5, map, smem, c0, c1, c2, c3, c4);"},
      // The emulator's tensor stores complete when issued.
      {"tma_store_commit_wait_read", "(void)0;"},
      {"tma_load_1d", "tlc_emu::tma_load(1, smem, map, bar, c0);"},
      {"tma_load_2d", "tlc_emu::tma_load(2, smem, map, bar, c0, c1);"},
      {"tma_load_3d", "tlc_emu::tma_load(3, smem, map, bar, c0, c1, c2);"},
      {"tma_load_4d", "tlc_emu::tma_load(4, smem, map, bar, c0, c1, c2, c3);"},
      {"tma_load_5d", "tlc_emu::tma_load(5, smem, map, bar, c0, c1, c2, c3, c4);"},
      {"tma_load_im2col_4d", "tlc_emu::tma_load_im2col(smem, map, bar, c, w, h, n, off_w, off_h);"},
      {"reg_alloc", "tlc_emu::setmaxnreg(1, R);"},
      {"reg_dealloc", "tlc_emu::setmaxnreg(0, R);"},
      {"named_barrier", "tlc_emu::bar_sync((unsigned)id, (unsigned)threads);"},
      {"wgmma_fence", "tlc_emu::wgmma_sync(TLC_EMU_WGMMA_FENCE, 0);"},
      {"wgmma_commit", "tlc_emu::wgmma_sync(TLC_EMU_WGMMA_COMMIT, 0);"},
      {"wgmma_wait", "tlc_emu::wgmma_sync(TLC_EMU_WGMMA_WAIT, N);"},
  };
  auto it = kBodies.find(name);
  if (it != kBodies.end()) {
    *body = it->second;
    return true;
  }
  static const std::regex rs(R"(wgmma_rs_m64n(\d+)k16)");
  std::smatch r;
  if (std::regex_match(name, r, rs)) {
    *body = "tlc_emu::wgmma_rs(" + r[1].str() + ", Kind, TB, d, a, desc_b, scale_d);";
    return true;
  }
  // The K-major kinds (int8 and float8 k32, tf32 k8), A from a descriptor or
  // (`_rs`) from registers; no transposes.
  static const std::regex kmajor(R"(wgmma_(s8|f8|tf32)(_rs)?_m64n(\d+)k(32|8))");
  std::smatch km;
  if (std::regex_match(name, km, kmajor) && (km[1] == "tf32") == (km[4] == "8")) {
    const std::string kind = km[1] == "s8"   ? "TLC_EMU_WGMMA_S8"
                             : km[1] == "f8" ? "Kind == 0 ? TLC_EMU_WGMMA_E4M3 : TLC_EMU_WGMMA_E5M2"
                                             : "TLC_EMU_WGMMA_TF32";
    // int8's accumulators are int32, passed as floats and reinterpreted.
    const std::string d = km[1] == "s8" ? "reinterpret_cast<float*>(d)" : "d";
    *body = km[2].matched ? "tlc_emu::wgmma_rs(" + km[3].str() + ", " + kind + ", 0, " + d + ", a, desc_b, scale_d);"
                          : "tlc_emu::wgmma(" + km[3].str() + ", " + kind + ", 0, 0, " + d + ", desc_a, desc_b, scale_d);";
    return true;
  }
  static const std::regex wg(R"(wgmma_m64n(\d+)k16)");
  std::smatch w;
  if (std::regex_match(name, w, wg)) {
    *body = "tlc_emu::wgmma(" + w[1].str() + ", Kind, TA, TB, d, desc_a, desc_b, scale_d);";
    return true;
  }
  static const std::regex ld(R"((ld|st)matrix_x([124])(_trans)?)");
  std::smatch m;
  if (std::regex_match(name, m, ld)) {
    bool load = m[1] == "ld";
    *body = std::string(load ? "tlc_emu::ldmatrix(" : "tlc_emu::stmatrix(") + m[2].str() + ", " +
            (m[3].matched ? "true" : "false") + ", r, smem);";
    return true;
  }
  return false;
}

}  // namespace

const char* embeddedDeviceHelperHeader() { return kDeviceHelpers; }

HostSource toHostSource(const std::string& cuda, const std::string& sourceName) {
  HostSource out;
  // extern __shared__ T name[];  ->  T* const name = (T*)tlc_emu_dyn_smem;
  static const std::regex ext(R"(extern\s+__shared__\s+([^;\[\]{}]*?)\b([A-Za-z_]\w*)\s*\[\s*\]\s*;)");
  static const std::regex align(R"(__align__\s*\(\s*\w+\s*\)|alignas\s*\(\s*\w+\s*\)|__attribute__\s*\(\(\s*aligned\s*\(\s*\w+\s*\)\s*\)\))");
  // Lines of the CUDA source keep their numbers (and the emitter's own #line
  // directives, if any, map them further to the .tl file).
  std::string text = backend::lineDirective(1, sourceName) + "\n";
  auto begin = std::sregex_iterator(cuda.begin(), cuda.end(), ext);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    text += cuda.substr(last, m.position(0) - last);
    std::string type = trim(std::regex_replace(m[1].str(), align, " "));
    type = std::regex_replace(type, std::regex(R"(\s+)"), " ");
    text += type + "* const " + m[2].str() + " = reinterpret_cast<" + type + "*>(tlc_emu_dyn_smem);";
    last = m.position(0) + m.length(0);
  }
  text += cuda.substr(last);

  static const std::regex kernel(
      R"(__global__\s+(?:__launch_bounds__\s*\(([^)]*)\)\s*)?void\s+(?:__launch_bounds__\s*\(([^)]*)\)\s*)?([A-Za-z_]\w*)\s*\()");
  static const std::regex twoBounds(R"(\s*(\d+)\s*,\s*(\d+)\s*)");
  std::set<std::string> seen;
  std::string bounds;
  for (auto it = std::sregex_iterator(cuda.begin(), cuda.end(), kernel); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[3].str();
    if (!seen.insert(name).second) continue;
    out.kernels.push_back(name);
    std::string b = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
    std::smatch m;
    if (std::regex_match(b, m, twoBounds))
      bounds += "TLC_EMU_DEFINE_BOUNDS(" + name + ", " + m[1].str() + ", " + m[2].str() + ")\n";
  }
  text += "\n// Launch trampolines added by the CUDA emulator.\n";
  for (const auto& k : out.kernels) text += "TLC_EMU_DEFINE_LAUNCH(" + k + ")\n";
  text += bounds;
  out.text = std::move(text);
  return out;
}

// HIP C (the GPU emitter's HIP dialect) includes tlc_hip.h, whose helpers
// are tlc_cuda.h's: on the host, the same emulated helpers under the HIP
// dialect's type names.
// The module declares 64-lane wavefronts, so that its shuffles of width 64
// (HIP's own __shfl* default to it; tlc::group_allreduce<64> passes it) are
// wavefront collectives of the emulated machine, as are the MFMA helpers
// (tlc_emu_api.mfma); the float8 ones convert their OCP operands to FNUZ
// first, as tlc_hip.h's do on the GPU (D += A * B / 4).
const char* const kHostHipHeader =
    "// Host version of tlc_hip.h generated by the CUDA emulator.\n#pragma once\n"
    "#define TLC_HIP_LANES 1\ntemplate <int ctrl> int tlc_lane_dpp(int w);\n"
    "template <int pattern> int tlc_lane_swizzle(int w);\n#include \"tlc_cuda.h\"\n"
    "extern \"C\" __attribute__((visibility(\"default\"), used)) const unsigned tlc_emu_wavefront_lanes = 64;\n"
    "#define TLC_EMU_HIP_SHFL(Name, Mode)                                        \\\n"
    "  template <class T> __attribute__((noinline)) T Name(T v, int arg, int width = 64) { \\\n"
    "    return tlc_emu::shfl(Mode, 0xffffffffu, v, arg, width, TLC_EMU_PC);       \\\n"
    "  }\n"
    "TLC_EMU_HIP_SHFL(__shfl, TLC_EMU_SHFL_IDX)\nTLC_EMU_HIP_SHFL(__shfl_up, TLC_EMU_SHFL_UP)\n"
    "TLC_EMU_HIP_SHFL(__shfl_down, TLC_EMU_SHFL_DOWN)\nTLC_EMU_HIP_SHFL(__shfl_xor, TLC_EMU_SHFL_XOR)\n"
    "#undef TLC_EMU_HIP_SHFL\n"
    "// DPP moves and swizzles (tlc_hip.h): the source lane of each control word, read by a shuffle.\n"
    "inline int tlc_emu_wave_lane() {\n"
    "  return (int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 64);\n}\n"
    "template <int ctrl> int tlc_lane_dpp(int w) {\n"
    "  static_assert(ctrl < 0x100 || ctrl == 0x140 || ctrl == 0x141, \"quad_perm, row_mirror, row_half_mirror\");\n"
    "  const int lane = tlc_emu_wave_lane();\n"
    "  const int src = ctrl < 0x100    ? (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3)\n"
    "                  : ctrl == 0x140 ? (lane & ~15) | (15 - (lane & 15))\n"
    "                                  : (lane & ~7) | (7 - (lane & 7));\n"
    "  return __shfl(w, src, 64);\n}\n"
    "// ds_swizzle's bit mode (tlc_hip.h): lane i of each 32 reads ((i & and) | or) ^ xor.\n"
    "template <int pattern> int tlc_lane_swizzle(int w) {\n"
    "  static_assert(!(pattern & 0x8000), \"the bit mode\");\n"
    "  const int lane = tlc_emu_wave_lane();\n"
    "  const int src = (lane & ~31) | (((lane & pattern & 31) | (pattern >> 5 & 31)) ^ (pattern >> 10 & 31));\n"
    "  return __shfl(w, src, 64);\n}\n"
    "typedef __nv_bfloat16 tlc_bfloat16;\ntypedef __nv_fp8_e4m3 tlc_fp8_e4m3;\ntypedef __nv_fp8_e5m2 tlc_fp8_e5m2;\n"
    "namespace tlc {\n"
    "__device__ __forceinline__ void mfma_32x32x8_f16(float* d, const __half* a, const __half* b) {\n"
    "  tlc_emu::mfma(TLC_EMU_MFMA_F32_32X32X8_F16, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x16_f16(float* d, const __half* a, const __half* b) {\n"
    "  tlc_emu::mfma(TLC_EMU_MFMA_F32_16X16X16_F16, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_32x32x8_bf16(float* d, const __nv_bfloat16* a, const __nv_bfloat16* b) {\n"
    "  tlc_emu::mfma(TLC_EMU_MFMA_F32_32X32X8_BF16, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x16_bf16(float* d, const __nv_bfloat16* a, const __nv_bfloat16* b) {\n"
    "  tlc_emu::mfma(TLC_EMU_MFMA_F32_16X16X16_BF16, d, a, b);\n}\n"
    "template <int E, class D, class T> __device__ __forceinline__ void mfma_padded(int kind, D* d, const T* a,\n"
    "                                                                             const T* b) {\n"
    "  T a8[8 / sizeof(T)] = {}, b8[8 / sizeof(T)] = {};\n"
    "  for (int v = 0; v < E; ++v) { a8[v] = a[v]; b8[v] = b[v]; }\n"
    "  tlc_emu::mfma(kind, reinterpret_cast<float*>(d), a8, b8);\n}\n"
    "__device__ __forceinline__ void mfma_32x32x8_i8(int* d, const i8* a, const i8* b) {\n"
    "  mfma_padded<4>(TLC_EMU_MFMA_I32_32X32X8_I8, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x16_i8(int* d, const i8* a, const i8* b) {\n"
    "  mfma_padded<4>(TLC_EMU_MFMA_I32_16X16X16_I8, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_32x32x16_i8(int* d, const i8* a, const i8* b) {\n"
    "  mfma_padded<8>(TLC_EMU_MFMA_I32_32X32X16_I8, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x32_i8(int* d, const i8* a, const i8* b) {\n"
    "  mfma_padded<8>(TLC_EMU_MFMA_I32_16X16X32_I8, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_32x32x2_f32(float* d, const float* a, const float* b) {\n"
    "  mfma_padded<1>(TLC_EMU_MFMA_F32_32X32X2_F32, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x4_f32(float* d, const float* a, const float* b) {\n"
    "  mfma_padded<1>(TLC_EMU_MFMA_F32_16X16X4_F32, d, a, b);\n}\n"
    "template <class T> __device__ __forceinline__ void mfma_fp8(int kind, int expBits, float* d, const T* a,\n"
    "                                                          const T* b) {\n"
    "  uint64_t a8, b8;\n  memcpy(&a8, a, 8);\n  memcpy(&b8, b, 8);\n"
    "  a8 = tlc_emu_float::ocpToFnuzHalf(a8, expBits);\n  b8 = tlc_emu_float::ocpToFnuzHalf(b8, expBits);\n"
    "  tlc_emu::mfma(kind, d, &a8, &b8);\n}\n"
    "__device__ __forceinline__ void mfma_32x32x16_e4m3(float* d, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b) {\n"
    "  mfma_fp8(TLC_EMU_MFMA_F32_32X32X16_FP8, 4, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x32_e4m3(float* d, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b) {\n"
    "  mfma_fp8(TLC_EMU_MFMA_F32_16X16X32_FP8, 4, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_32x32x16_e5m2(float* d, const __nv_fp8_e5m2* a, const __nv_fp8_e5m2* b) {\n"
    "  mfma_fp8(TLC_EMU_MFMA_F32_32X32X16_BF8, 5, d, a, b);\n}\n"
    "__device__ __forceinline__ void mfma_16x16x32_e5m2(float* d, const __nv_fp8_e5m2* a, const __nv_fp8_e5m2* b) {\n"
    "  mfma_fp8(TLC_EMU_MFMA_F32_16X16X32_BF8, 5, d, a, b);\n}\n"
    "}  // namespace tlc\n";

std::string hostHelperHeader(const std::string& hdr, std::vector<std::string>* unknown) {
  std::string out = backend::replaceAsmHelpers(hdr, [&](const std::string& name) {
    std::string body;
    if (helperBody(name, &body)) return body;
    if (unknown) unknown->push_back(name);
    return "tlc_emu::trap(\"device helper `" + name +
           "` uses inline PTX that the CUDA emulator does not implement\"); __builtin_unreachable();";
  });
  return "// Host version of tlc_cuda.h generated by the CUDA emulator.\n" + out;
}

bool buildHostModule(const HostSource& source, const CompileOptions& options, BuiltModule* out,
                     std::string* error) {
  namespace fs = std::filesystem;
  std::string cxx = options.compiler;
  if (cxx.empty()) {
    const char* env = getenv("TLC_EMU_CXX");
    cxx = env && *env ? env : "c++";
  }
  std::vector<std::string> unknown;
  std::string helpers = hostHelperHeader(kDeviceHelpers, &unknown);
  const bool clang = cxx.find("clang") != std::string::npos;
  std::string flags =
      "-std=c++17 -O1 -g -fPIC -fno-omit-frame-pointer -fsanitize=thread -w "
      "-fno-strict-aliasing";
  flags += clang ? " -mllvm -tsan-instrument-func-entry-exit=0" : " --param=tsan-instrument-func-entry-exit=0";

  uint64_t h = fnv1a(kEmuAbi);
  h = fnv1a(kEmuFloat, h);
  h = fnv1a(kEmuPrelude, h);
  h = fnv1a(helpers, h);
  h = fnv1a(kHostHipHeader, h);
  h = fnv1a(source.text, h);
  h = fnv1a(cxx + "|" + flags, h);
  h = fnv1a("build-in-cache-dir-2", h);  // bump when the build procedure changes
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);

  std::string cache = options.cacheDir;
  if (cache.empty()) {
    const char* env = getenv("TLC_EMU_CACHE");
    if (env && *env) {
      cache = env;
    } else {
      const char* tmp = getenv("TMPDIR");
      cache = std::string(tmp && *tmp ? tmp : "/tmp") + "/tlc-cuda-emu-" + std::to_string(getuid());
    }
  }
  std::error_code ec;
  fs::path dir = fs::path(cache) / hex;
  fs::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create the emulator's build directory " + dir.string() + ": " + ec.message();
    return false;
  }
  out->sourcePath = (dir / options.sourceName).string() + ".cpp";
  out->sharedObjectPath = (dir / "kernel.so").string();
  if (fs::exists(out->sharedObjectPath)) return true;

  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream f(dir / name, std::ios::binary);
    f << text;
    return bool(f);
  };
  bool ok = write("emu_abi.h", kEmuAbi) && write("emu_float.h", kEmuFloat) &&
            write("emu_prelude.h", kEmuPrelude) && write("tlc_cuda.h", helpers) &&
            write("tlc_hip.h", kHostHipHeader) &&
            write("cuda_fp16.h", "#pragma once\n") && write("cuda_bf16.h", "#pragma once\n") &&
            write("cuda_fp8.h", "#pragma once\n") && write("cuda_runtime.h", "#pragma once\n") &&
            write("mma.h", "#pragma once\n") && write(options.sourceName + ".cpp", source.text);
  if (!ok) {
    *error = "cannot write the emulator's build files under " + dir.string();
    return false;
  }
  // Build into a unique name, then rename: concurrent builds of the same
  // module (parallel tests) do not see half-written files.
  std::string tag = std::to_string(getpid());
  std::string obj = (dir / ("kernel." + tag + ".o")).string();
  std::string so = (dir / ("kernel." + tag + ".so")).string();
  std::string log = (dir / ("build." + tag + ".log")).string();
  auto q = [](const std::string& s) { return "'" + s + "'"; };
  // Compile inside the build directory: relative #line file names then
  // resolve against it (not against the caller's working directory), so
  // the cached module's line information does not depend on where tlc ran.
  std::string cmd = "cd " + q(dir.string()) + " && " + cxx + " " + flags + " -I" + q(dir.string()) + " -include emu_prelude.h -c " +
                    q(out->sourcePath) + " -o " + q(obj) + " > " + q(log) + " 2>&1 && " + cxx +
                    " -shared -o " + q(so) + " " + q(obj) + " -Wl,-z,defs >> " + q(log) + " 2>&1";
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream f(log);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string msg = ss.str();
    if (msg.size() > 6000) msg = msg.substr(0, 6000) + "\n...";
    *error = "the host C++ compiler (`" + cxx + "`) failed on the emulated kernel source " +
             out->sourcePath + ":\n" + msg;
    if (!unknown.empty()) {
      *error += "\n(helpers without an emulated implementation:";
      for (auto& u : unknown) *error += " " + u;
      *error += ")";
    }
    return false;
  }
  fs::remove(obj, ec);
  fs::remove(log, ec);
  fs::rename(so, out->sharedObjectPath, ec);
  if (ec && !fs::exists(out->sharedObjectPath)) {
    *error = "cannot move the built module into place: " + ec.message();
    return false;
  }
  return true;
}

}  // namespace tlc::cuda_emu
