// .npy files: exact round trips, the header NumPy expects, and the --save
// output of a run checked against a naive gemm computed from the saved inputs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "compiler/driver/run_common.h"
#include "compiler/interp/npy_io.h"
#include "ir_builders.h"

using namespace tlc;
using namespace tlc::interp;

namespace {
std::string tempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tlc_interp_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}
}  // namespace

TEST_CASE(".npy round trips keep every bit; bfloat16 and float8 widen to float32") {
  std::string dir = tempDir("npy");
  for (DType dt : {DType::Float16, DType::Float32, DType::Float64, DType::Int8, DType::Int32, DType::UInt16,
                   DType::Int64, DType::Bool, DType::BFloat16, DType::Float8E4M3}) {
    CAPTURE(dtypeName(dt));
    HostTensor t(dt, {3, 5, 2});
    fillRandom(t, 21);
    std::string path = dir + "/t.npy";
    std::string error;
    REQUIRE_MESSAGE(writeNpy(t, path, &error), error);
    std::optional<HostTensor> back = readNpy(path, &error);
    REQUIRE_MESSAGE(back, error);
    CHECK(back->shape == t.shape);
    bool widened = dt == DType::BFloat16 || dt == DType::Float8E4M3;
    CHECK(back->dtype == (widened ? DType::Float32 : dt));
    CHECK(compare(*back, t, 0, 0).ok());
    // The header is NumPy's: 64-byte aligned data, C order.
    std::ifstream in(path, std::ios::binary);
    std::string head(128, '\0');
    in.read(head.data(), 128);
    size_t len = static_cast<unsigned char>(head[8]) | (static_cast<size_t>(static_cast<unsigned char>(head[9])) << 8);
    CHECK((10 + len) % 64 == 0);
    CHECK(head.find("'fortran_order': False, 'shape': (3,5,2)") != std::string::npos);
  }
  HostTensor v(DType::Float32, {4});
  std::string error;
  REQUIRE(writeNpy(v, dir + "/v.npy", &error));
  std::ifstream in(dir + "/v.npy", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(all.find("'shape': (4,)") != std::string::npos);
  CHECK_FALSE(readNpy(dir + "/missing.npy", &error));
  std::ofstream(dir + "/junk.npy") << "not numpy";
  CHECK_FALSE(readNpy(dir + "/junk.npy", &error));
  CHECK(error.find("not a .npy file") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a run with --save writes tensors whose gemm agrees with a naive triple loop") {
  using namespace tlc::testing;
  std::string dir = tempDir("save");
  GemmConfig cfg;
  cfg.inType = DType::Float16;
  Module m;
  m.funcs.push_back(std::make_shared<const PrimFunc>(makeTiledGemm(cfg)));
  SourceManager sm;
  DiagnosticEngine diags(sm);
  driver::RunSettings s;
  s.dims = {{"M", 48}, {"N", 40}, {"K", 72}};
  s.saveDir = dir;
  s.check = true;
  std::ostringstream out;
  s.out = &out;
  REQUIRE(driver::runWithInterpreter(m, s, diags) == 0);
  std::string error;
  auto A = readNpy(dir + "/A.npy", &error), B = readNpy(dir + "/B.npy", &error), C = readNpy(dir + "/C.npy", &error);
  REQUIRE_MESSAGE((A && B && C), error);
  CHECK(std::filesystem::exists(dir + "/C.interp.npy"));
  CHECK(A->dtype == DType::Float16);
  HostTensor want(DType::Float64, {48, 40});
  for (int64_t i = 0; i < 48; ++i)
    for (int64_t j = 0; j < 40; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 72; ++k) acc += A->get(i * 72 + k) * B->get(k * 40 + j);
      want.set(i * 40 + j, acc);
    }
  CHECK(compare(*C, want, 1e-4, 1e-4).ok());
  std::filesystem::remove_all(dir);
}
