// backend::cName and the escaping of strings, comments and #line file names
// (compiler/backends/c_names.h); string literals read back by a C compiler.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/backends/c_names.h"
#include "tests/runtime/build_helpers.h"

using namespace tlc;
using backend::cName;

namespace {

bool isSafeIdentifier(const std::string& s) {
  if (s.empty() || !std::isalpha((unsigned char)s[0]) || s.back() == '_' || s.find("__") != std::string::npos)
    return false;
  for (char c : s)
    if (!std::isalnum((unsigned char)c) && c != '_') return false;
  return true;
}

}  // namespace

TEST_CASE("plain names keep their spelling; reserved ones get tlc_, other text tlcx and hex escapes") {
  for (std::string n : {"A", "gemm", "block_M", "x1", "M", "i", "main", "std", "tid", "r", "out_v", "Tensor"}) {
    CHECK(backend::isPlainCName(n));
    CHECK(cName(n) == n);
  }
  CHECK(cName("int") == "tlc_int");
  CHECK(cName("class") == "tlc_class");
  CHECK(cName("and_eq") == "tlc_and_eq");
  CHECK(cName("NULL") == "tlc_NULL");
  CHECK(cName("wchar_t") == "tlc_wchar_t");
  CHECK(cName("int64_t") == "tlc_int64_t");
  CHECK(cName("INT64_C") == "tlc_INT64_C");
  CHECK(cName("INT32_MAX") == "tlc_INT32_MAX");
  CHECK(cName("M_PI") == "tlc_M_PI");
  CHECK(cName("module") == "tlc_module");
  CHECK(cName("stream") == "tlc_stream");
  CHECK(cName("tlcLaunch") == "tlc_tlcLaunch");
  CHECK(cName("TLC_SUCCESS") == "tlc_TLC_SUCCESS");
  CHECK(cName("cudaStream_t") == "tlc_cudaStream_t");
  CHECK(cName("CUstream") == "tlc_CUstream");
  CHECK(cName("threadIdx") == "tlc_threadIdx");
  CHECK(cName("float4") == "tlc_float4");
  CHECK(cName("ulonglong2") == "tlc_ulonglong2");
  CHECK(cName("linux") == "tlc_linux");
  CHECK(cName("__LINE__") == "tlcx_5F_5FLINE_5F_5F");
  CHECK(cName("status_") == "tlcxstatus_5F");
  CHECK(cName("_X") == "tlcx_5FX");
  CHECK(cName("a__b") == "tlcxa_5F_5Fb");
  CHECK(cName("a b") == "tlcxa_20b");
  CHECK(cName("1a") == "tlcx1a");
  CHECK(cName("") == "tlcx");
  CHECK(cName("k\"\n\xff") == "tlcxk_22_0A_FF");
}

TEST_CASE("cName is one-to-one and every spelling is an identifier nothing reserves") {
  std::vector<std::string> names = {"x", "tlc_x", "tlcx", "tlcxx", "int", "tlc_int", "tlcxint", "x_", "x__",
                                    "_x", "__x", "x_5F", "tlcxx_5F", "x_20", "x ", "x y", "x_y", "xy", "a_b_",
                                    "a_5Fb", "a_b", "", " ", "_", "__", "1", "tlc", "TLC", "Tlc_a", "a.b", "a$b",
                                    "status_", "status__", "tlcxstatus_5F", "NULL", "tlc_NULL"};
  for (int c = 0; c < 256; ++c) names.push_back(std::string(1, (char)c));
  std::set<std::string> spellings;
  for (const std::string& n : names) {
    std::string s = cName(n);
    CAPTURE(n);
    CHECK(isSafeIdentifier(s));
    spellings.insert(s);
  }
  CHECK(spellings.size() == std::set<std::string>(names.begin(), names.end()).size());
}

TEST_CASE("comments, #line file names and file-name identifiers") {
  CHECK(backend::cCommentText("a */ b") == "a * / b");
  CHECK(backend::cCommentText("x\\") == "x\\134");
  CHECK(backend::cCommentText("?\?/") == "\\077\\077/");
  CHECK(backend::cCommentText("a\nb") == "a\\012b");
  CHECK(backend::lineDirective(3, "quote\"name.tl") == "#line 3 \"quote%22name.tl\"");
  CHECK(backend::lineDirective(4, "a\nb%c.tl") == "#line 4 \"a%0Ab%25c.tl\"");
  CHECK(backend::lineDirective(5, "dir\\k.tl") == "#line 5 \"dir\\\\k.tl\"");
  CHECK(backend::cIdentifierFromFileName("my-kernels") == "my_kernels");
  CHECK(backend::cIdentifierFromFileName("gemm_cuda_sm_90") == "gemm_cuda_sm_90");
  CHECK(backend::cIdentifierFromFileName("__a..b__") == "a_b");
  CHECK(backend::cIdentifierFromFileName("1x") == "tlcx1x");
  CHECK(backend::cIdentifierFromFileName("--") == "kernels");
  CHECK(backend::cIdentifierFromFileName("tlc") == "tlc_tlc");
  CHECK(backend::cIdentifierFromFileName("tlc_embedded") == "tlc_tlc_embedded");
}

TEST_CASE("C string literals read back as every byte, through the C compiler") {
  std::string all;
  for (int c = 1; c < 256; ++c) all += (char)c;
  std::vector<std::string> texts = {all, "?\?/", "?\?=x", "\"", "\\", "a\"b\\c", "\x01" "2", "\0" "7"};
  texts.back() = std::string("\0" "7", 2);
  auto dir = test::scratchDir("c-string-literals");
  std::ostringstream c;
  c << "#include <stdio.h>\nstatic const char* const texts[] = {";
  for (const std::string& t : texts) c << backend::cStringLiteral(t) << ",\n";
  c << "};\nstatic const unsigned long sizes[] = {";
  for (const std::string& t : texts) c << "sizeof(" << backend::cStringLiteral(t) << ") - 1,\n";
  c << "};\nint main(void) {\n  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {\n"
    << "    for (unsigned long j = 0; j < sizes[i]; ++j) printf(\"%02x\", (unsigned char)texts[i][j]);\n"
    << "    printf(\"\\n\");\n  }\n  return 0;\n}\n";
  std::ofstream(dir / "lit.c") << c.str();
  std::string cmd = "cd '" + dir.string() + "' && cc -std=c99 -trigraphs -Wall -Werror -o lit lit.c && ./lit > out.txt";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(dir / "out.txt");
  for (const std::string& t : texts) {
    std::string line, hex;
    std::getline(in, line);
    char buf[3];
    for (char ch : t) {
      std::snprintf(buf, sizeof buf, "%02x", (unsigned)(unsigned char)ch);
      hex += buf;
    }
    CHECK(line == hex);
  }
}
