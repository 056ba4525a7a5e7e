// Names of every kind (C, C++ and CUDA keywords, alternative tokens, standard
// macros and types, runtime and header names, the CUDA emitter's own
// identifiers, ordinary names) in every role a .tl kernel gives a name:
// kernel, dynamic dimension, compile-time parameter, tensor and scalar
// parameter, block index, shared and fragment buffer, loop variable, local
// value. The generated header must compile as C99 and C++17, the CUDA C
// through NVRTC for sm_80, and kernels must run on the CPU and agree with
// the interpreter; the runtime finds them by the user's name.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/driver/cpu_target.h"
#include "compiler/driver/header_gen.h"
#include "compiler/sema/frontend.h"
#include "tests/runtime/build_helpers.h"
#include "tlc/runtime.h"
#ifdef TLC_TEST_HAVE_CUDA
#include "compiler/driver/cuda_target.h"
#endif

using namespace tlc;

namespace {

const std::vector<std::string> kNames = {
    // C and C++ keywords, alternative tokens.
    "int", "float", "double", "char", "void", "auto", "register", "restrict", "volatile", "goto", "switch", "case",
    "default", "struct", "union", "typedef", "sizeof", "signed", "unsigned", "long", "short", "static", "const",
    "extern", "inline", "while", "break", "continue", "do", "enum", "template", "class", "namespace", "new",
    "delete", "this", "operator", "virtual", "private", "public", "friend", "typename", "using", "bool", "true",
    "false", "nullptr", "asm", "wchar_t", "and_eq", "xor", "xor_eq", "bitand", "bitor", "compl", "not_eq", "or_eq",
    "alignas", "alignof", "decltype", "constexpr", "static_assert", "thread_local", "noexcept", "export",
    "concept", "requires", "co_await", "char8_t", "typeof", "mutable", "explicit", "try", "catch", "throw",
    "_Bool", "_Complex",
    // Macros and types of the standard headers, predefined macros.
    "NULL", "EOF", "errno", "assert", "stdin", "stdout", "INFINITY", "NAN", "HUGE_VAL", "M_PI", "INT64_C",
    "INT32_MAX", "uint8_t", "int64_t", "size_t", "linux", "unix", "__LINE__", "__FILE__", "__cplusplus",
    "__x", "_X", "a__b",
    // CUDA.
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads", "__global__", "__shared__",
    "__restrict__", "__launch_bounds__", "__CUDA_ARCH__", "half", "__half", "nv_bfloat16", "float4", "int2",
    "uint3", "dim3", "cudaStream_t", "CUstream", "cuda", "min", "max", "floorf",
    // The runtime's, the header's and the CUDA emitter's own names.
    "tlc", "tlc_x", "tlc_smem", "tlc_block", "tlcLaunch", "tlcGetKernel", "TLC_SUCCESS", "tlc_status",
    "tlc_module", "tlc_floordiv_", "module", "stream", "kernel_", "status_", "args_", "A_shape_", "tid", "r",
    "r_", "ri", "c", "v", "w", "in_v", "out_v", "iter", "acc",
    // Ordinary names.
    "main", "printf", "std", "x", "A", "M", "i", "k_kernel0", std::string(300, 'x')};

// One function per name: the names from position `i` on take the roles.
const char* kTemplate = R"(def @K[@D, @N=64](@P: Tensor[(@D, @N), float32], out_fixed: Tensor[(@D, @N), float32], @S: float32):
    with T.Kernel(T.ceildiv(@D, 32), threads=128) as @X:
        @H = T.alloc_shared((32, @N), float32)
        @F = T.alloc_fragment((32, @N), float32)
        T.copy(@P[@X * 32, 0], @H)
        T.copy(@H, @F)
        for @L, col_fixed in T.Parallel(32, @N):
            @V = @F[@L, col_fixed] * @S
            @F[@L, col_fixed] = @V + 1.0
        T.copy(@F, out_fixed[@X * 32, 0])
)";
const std::vector<std::string> kRoles = {"@K", "@D", "@N", "@P", "@S", "@X", "@H", "@F", "@L", "@V"};

// Block rasterization, a pipelined loop, a converting copy and a row
// reduction across warps: where the CUDA emitter writes identifiers of its
// own (loop counters, staging arrays) next to variables' names.
const char* kRowsTemplate = R"(def rows_fixed[@M, @N](@A: Tensor[(@M, @N), float16], @C: Tensor[(@M, @N), float32], sums_fixed: Tensor[(@M,), float32]):
    with T.Kernel(T.ceildiv(@N, 256), T.ceildiv(@M, 2), threads=128) as (@X, @Y):
        T.use_swizzle(4)
        @H = T.alloc_shared((2, 256), float16)
        @S = T.alloc_shared((2, 256), float32)
        @F = T.alloc_fragment((2, 256), float32)
        @R = T.alloc_fragment((2,), float32)
        T.clear(@F)
        for @L in T.Pipelined(2, num_stages=2):
            T.copy(@A[@Y * 2, @X * 256], @H)
            T.copy(@H, @S)
            T.copy(@S, @F)
        T.reduce_sum(@F, @R, dim=1)
        T.copy(@F, @C[@Y * 2, @X * 256])
        T.copy(@R, sums_fixed[@Y * 2])
)";
const std::vector<std::string> kRowsRoles = {"@M", "@N", "@A", "@C", "@X", "@Y", "@H", "@S", "@F", "@R", "@L"};

std::string instantiate(const std::vector<std::string>& names, size_t first, const char* text = kTemplate,
                        const std::vector<std::string>& roles = kRoles) {
  std::string s = text;
  for (size_t r = 0; r < roles.size(); ++r) {
    const std::string& n = names[(first + r) % names.size()];
    for (size_t at; (at = s.find(roles[r])) != std::string::npos;) s.replace(at, roles[r].size(), n);
  }
  return s;
}

std::optional<ir::Module> compile(SourceManager& sources, DiagnosticEngine& diags, const std::string& name,
                                  const std::string& text) {
  return compileSource(sources, diags, sources.addBuffer(name, text), {});
}

// The names the .tl front end accepts in every role (it has keywords of its
// own, such as `and`, and may reserve others).
std::vector<std::string> acceptedNames() {
  std::vector<std::string> ok;
  for (const std::string& n : kNames) {
    std::vector<std::string> roles = {n, "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"};
    bool all = true;
    for (size_t r = 0; r < kRoles.size() && all; ++r) {
      SourceManager sources;
      DiagnosticEngine diags(sources);
      std::vector<std::string> names(roles.size());
      for (size_t j = 0; j < roles.size(); ++j) names[(j + r) % roles.size()] = roles[j];
      all = compile(sources, diags, "probe.tl", instantiate(names, 0)).has_value();
    }
    if (all) ok.push_back(n);
  }
  return ok;
}

std::string sweepSource(const std::vector<std::string>& names, size_t count) {
  std::string src;
  for (size_t i = 0; i < count; ++i) src += instantiate(names, i) + "\n";
  return src;
}

// Runs `cmd` in `dir`, its output in dir/cmd.log.
int sh(const std::filesystem::path& dir, const std::string& cmd) {
  INFO(cmd);
  return std::system(("cd '" + dir.string() + "' && " + cmd + " > cmd.log 2>&1").c_str());
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kRuntimeInclude = std::string(TLC_SOURCE_DIR) + "/runtime/include";

}  // namespace

TEST_CASE("reserved and ordinary names in every role: headers compile as C99 and C++17, CUDA through NVRTC") {
  std::vector<std::string> names = acceptedNames();
  INFO("accepted names: " << names.size());
  REQUIRE(names.size() > 150);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = compile(sources, diags, "sweep.tl", sweepSource(names, names.size()));
  INFO(diags.renderAll());
  REQUIRE(m);
  REQUIRE(m->funcs.size() == names.size());

  auto dir = test::scratchDir("names-sweep");
  driver::HeaderOptions h;
  h.moduleName = "names-sweep";
  h.embedded = true;
  std::ofstream(dir / "k.h") << driver::generateHeader(*m, h);
  std::ofstream(dir / "use.c") << "#include \"k.h\"\nint main(void) { return 0; }\n";
  std::string flags = " -Wall -Wextra -Werror -pedantic -fsyntax-only -I" + kRuntimeInclude + " -I" + dir.string();
  CHECK_MESSAGE(sh(dir, "cc -std=c99" + flags + " use.c") == 0, slurp(dir / "cmd.log"));
  CHECK_MESSAGE(sh(dir, "c++ -std=c++17 -x c++" + flags + " use.c") == 0, slurp(dir / "cmd.log"));
  // GNU modes predefine `linux` and `unix`.
  CHECK_MESSAGE(sh(dir, "cc -std=gnu11" + flags + " use.c") == 0, slurp(dir / "cmd.log"));

#ifdef TLC_TEST_HAVE_CUDA
  // The emitter's own identifiers, and names of C and CUDA, in the roles of
  // the second template (its kernels are rows_fixed_<i>: kernel names are
  // swept above).
  std::vector<std::string> internal = {"tid",  "r",     "ri",     "c",     "v",    "w",        "in_v",     "out_v",
                                       "lane", "iter",  "acc",    "chunk", "k",    "stage",    "run",      "min",
                                       "max",  "floorf", "tlc_smem", "threadIdx", "NULL", "xor", "int64_t", "__x"};
  std::string rowsSource;
  for (size_t i = 0; i < internal.size(); ++i) {
    std::string f = instantiate(internal, i, kRowsTemplate, kRowsRoles);
    rowsSource += f.replace(f.find("rows_fixed"), 10, "rows_fixed_" + std::to_string(i)) + "\n";
  }
  auto rows = compile(sources, diags, "sweep_rows.tl", rowsSource);
  INFO(diags.renderAll());
  REQUIRE(rows);
  for (const ir::Func& f : rows->funcs) m->funcs.push_back(f);

  driver::CudaOptions options;
  options.arch = "sm_80";
  cuda::CudaModule generated;
  auto cubin = driver::compileForCuda(*m, options, false, diags, &generated);
  std::string rendered = diags.renderAll();
  if (!cubin && rendered.find("cannot load NVRTC") != std::string::npos) {
    MESSAGE("NVRTC is not available; skipping the CUDA half");
    return;
  }
  INFO(rendered.substr(0, 4000));
  CHECK(cubin.has_value());
  // One kernel per function, each named from the function's C spelling.
  std::set<std::string> symbols;
  for (const auto& f : generated.funcs)
    for (const auto& k : f.kernels) symbols.insert(k.name);
  CHECK(symbols.size() == names.size() + internal.size());
#endif
}

TEST_CASE("kernels with reserved names run on the CPU, agree with the interpreter and are found by their names") {
  std::vector<std::string> names = {"int", "NULL", "module", "__LINE__", "xor", "status_", "tid",
                                    "r",   "class", "int64_t", "stream", "tlc_x"};
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = compile(sources, diags, "run.tl", sweepSource(names, 4));
  INFO(diags.renderAll());
  REQUIRE(m);
  for (size_t i = 0; i < 4; ++i) {
    driver::RunSettings s;
    s.kernel = names[i];
    s.dims[names[i + 1]] = 70;
    s.check = true;
    std::ostringstream out;
    s.out = &out;
    cpu::CpuOptions options;
    CHECK_MESSAGE(driver::runOnCpu(*m, s, options, diags) == 0, names[i] << ":\n" << out.str() << diags.renderAll());
  }

  // Built into a .so: the runtime looks the kernels up by the user's names,
  // through the header too.
  auto dir = test::scratchDir("names-run");
  std::string so = (dir / "k.so").string();
  REQUIRE(driver::buildForCpu(*m, so, cpu::CpuOptions{}, diags) == 0);
  tlc_module* mod = nullptr;
  REQUIRE(tlcLoadModule(so.c_str(), &mod) == TLC_SUCCESS);
  for (size_t i = 0; i < 4; ++i) {
    tlc_kernel* k = nullptr;
    CHECK_MESSAGE(tlcGetKernel(mod, names[i].c_str(), &k) == TLC_SUCCESS, names[i]);
  }
  tlcUnloadModule(mod);
  std::string err;
  REQUIRE(driver::writeHostFiles(*m, so, (dir / "k.h").string(), (dir / "k_embed.c").string(), &err));
  // Function 0 is kernel `int` with dimension `NULL`, tensor `__LINE__` and
  // scalar `xor` (see instantiate()).
  std::ofstream(dir / "main.c") << R"(#include <stdio.h>
#include "k.h"
int main(void) {
  enum { ROWS = 40, COLS = 64 };
  static float in[ROWS * COLS], out[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; ++i) in[i] = (float)(i % 7);
  tlc_status st = tlc_int_launch(k_module(), in, out, 3.0f, ROWS, NULL);
  if (st != TLC_SUCCESS) { fprintf(stderr, "%s\n", tlcGetLastError()); return 2; }
  for (int i = 0; i < ROWS * COLS; ++i)
    if (out[i] != in[i] * 3.0f + 1.0f) { fprintf(stderr, "mismatch at %d\n", i); return 3; }
  return 0;
}
)";
  std::string lib = std::string(TLC_BINARY_DIR) + "/runtime";
  REQUIRE_MESSAGE(sh(dir, "cc -std=c99 -Wall -Werror -I" + kRuntimeInclude + " -I. -o main main.c k_embed.c -L" + lib +
                              " -ltlc_runtime -Wl,-rpath," + lib) == 0,
                  slurp(dir / "cmd.log"));
  CHECK_MESSAGE(sh(dir, "./main") == 0, slurp(dir / "cmd.log"));
}

TEST_CASE("module names from any file name give a header and an embed source that compile together") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto m = compile(sources, diags, "one.tl", sweepSource({"k", "M", "N", "A", "s", "bx", "S", "F", "i", "t"}, 1));
  REQUIRE(m);
  auto dir = test::scratchDir("module-names");
  for (std::string name : {"tlc", "tlc_embedded", "1x", "my-kernels", "int", "--", "a\"b"}) {
    CAPTURE(name);
    driver::HeaderOptions h;
    h.moduleName = name;
    h.embedded = true;
    std::ofstream(dir / "k.h") << driver::generateHeader(*m, h);
    driver::EmbedOptions e;
    e.moduleName = name;
    e.headerName = "k.h";
    std::ofstream(dir / "k_embed.c") << driver::generateEmbedSource("\x7f" "ELF", "{\"x\": \"?\\\"\"}", e);
    CHECK_MESSAGE(sh(dir, "cc -std=c99 -Wall -Werror -pedantic -c -I" + kRuntimeInclude + " -I. k_embed.c") == 0,
                  slurp(dir / "cmd.log"));
  }
}
