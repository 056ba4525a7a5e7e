// Im2col tensor maps in kernel metadata: the compiler writes an "im2col"
// object ({"kernel", "stride", "pad", "dilation"}, each [h, w]) for im2col
// maps only, and the runtime reads it back: a module with one loads past its
// metadata (to the driver, which this machine may lack), and each way the
// object or the map around it can be malformed is refused with the reason.
// Metadata without the key (tiled maps, older modules) loads as before.
#include <doctest/doctest.h>

#include <string>

#include "compiler/backends/metadata.h"
#include "compiler/sema/frontend.h"
#include "tlc/runtime.h"

using namespace tlc;

namespace {

// A kernel over an (N, H, W, C) tensor X and a flat Y: the parameters the
// launch plans below give maps over.
const char* kNhwcCopy = R"(
def nhwc_copy[N, H, W, C, block=64](X: Tensor[(N, H, W, C), float16], Y: Tensor[(N * H * W * C,), float16]):
    with T.Kernel(T.ceildiv(N * H * W * C, block), threads=64) as bx:
        for i in T.Parallel(block):
            e = bx * block + i
            if e < N * H * W * C:
                Y[e] = X[e // (H * W * C), e // (W * C) % H, e // C % W, e % C]
)";

// An im2col map over X: 64 pixels of 32 channels, 64-byte swizzle, for a
// 3 x 2 filter of stride (2, 1), pad (1, 0) and dilation (2, 1).
cuda::TensorMapArg im2colMap() {
  cuda::TensorMapArg t;
  t.paramIndex = 0;
  t.box = {64, 32};
  t.swizzle = 64;
  t.im2col = true;
  t.geometry.kernel[0] = 3, t.geometry.kernel[1] = 2;
  t.geometry.stride[0] = 2, t.geometry.stride[1] = 1;
  t.geometry.pad[0] = 1, t.geometry.pad[1] = 0;
  t.geometry.dilation[0] = 2, t.geometry.dilation[1] = 1;
  return t;
}

// A tiled map over Y.
cuda::TensorMapArg tiledMap() {
  cuda::TensorMapArg t;
  t.paramIndex = 1;
  t.box = {64};
  return t;
}

// The metadata of nhwc_copy built for sm_90a with one launch passing `maps`.
std::string metadataWith(const std::vector<cuda::TensorMapArg>& maps) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("nhwc_copy.tl", kNhwcCopy);
  auto m = compileSource(sources, diags, file, {});
  INFO(diags.renderAll());
  REQUIRE(m);
  meta::MetadataOptions o;
  o.target = "cuda:sm_90a";
  o.binary = "cubin";
  o.launchPlanFor = [&](const std::string&) {
    meta::DeviceLaunchPlan plan;
    for (int p = 0; p < 2; ++p) {
      meta::DeviceArg a;
      a.paramIndex = p;
      plan.args.push_back(a);
    }
    meta::DeviceLaunch l;
    l.entry = "nhwc_copy_kernel0";
    l.threads = 128;
    l.tensorMaps = maps;
    plan.launches.push_back(l);
    return std::optional<meta::DeviceLaunchPlan>(plan);
  };
  return meta::moduleMetadataJson(*m, o);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

// Loads an empty PTX module with `metadata`: TLC_ERROR_INVALID_MODULE and
// the message when the runtime refuses the metadata; otherwise whatever the
// driver made of it (a missing driver or GPU here, or a loaded module).
tlc_status load(const std::string& metadata, std::string* message) {
  static const std::string ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n";
  tlc_module* mod = nullptr;
  tlc_status st = tlcLoadModuleFromMemory(ptx.data(), ptx.size(), metadata.c_str(), &mod);
  *message = st == TLC_SUCCESS ? "" : tlcGetLastError();
  if (mod) tlcUnloadModule(mod);
  return st;
}

void accepted(const std::string& metadata) {
  std::string message;
  tlc_status st = load(metadata, &message);
  INFO(message);
  CHECK(st != TLC_ERROR_INVALID_MODULE);
}

std::string refused(const std::string& metadata, const std::string& reason) {
  std::string message;
  CHECK(load(metadata, &message) == TLC_ERROR_INVALID_MODULE);
  INFO(message);
  CHECK(message.find("its kernel metadata is malformed: " + reason) != std::string::npos);
  return message;
}

}  // namespace

TEST_CASE("im2col tensor maps: the metadata names the convolution, and the runtime reads it back") {
  const std::string json = metadataWith({im2colMap(), tiledMap()});
  // The im2col map carries its geometry, each [h, w]; the tiled map has no "im2col".
  CHECK(json.find(R"({"box":[64,32],"im2col":{"dilation":[2,1],"kernel":[3,2],"pad":[1,0],"stride":[2,1]},)"
                  R"("param":0,"stage":false,"swizzle":64})") != std::string::npos);
  CHECK(json.find(R"({"box":[64],"param":1,"stage":false,"swizzle":0})") != std::string::npos);
  accepted(json);
  // Metadata without im2col maps (as older modules have) loads as before.
  accepted(metadataWith({tiledMap()}));
}

TEST_CASE("im2col tensor maps: malformed metadata is refused with the reason") {
  const std::string json = metadataWith({im2colMap()});
  cuda::TensorMapArg wideBox = im2colMap();
  wideBox.box = {64, 32, 1};
  refused(metadataWith({wideBox}), "an im2col tensor map's box has 3 values, not 2 (pixels, channels)");
  cuda::TensorMapArg onFlat = im2colMap();
  onFlat.paramIndex = 1;
  refused(metadataWith({onFlat}), "a tensor map refers to parameter 1, which is not a tensor of rank 4");
  // The map over X read as a tiled map: a box of 2 over a rank-4 tensor.
  refused(replaced(json, R"("im2col":{"dilation":[2,1],"kernel":[3,2],"pad":[1,0],"stride":[2,1]},)", ""),
          "a tensor map refers to parameter 0, which is not a tensor of rank 2");
  refused(replaced(json, R"("kernel":[3,2])", R"("kernel":[3])"),
          R"(an im2col tensor map's "kernel" is not a pair [h, w])");
  refused(replaced(json, R"("stride":[2,1])", R"("stride":[0,1])"),
          R"(an im2col tensor map's "stride" has 0 where an integer in 1..1048576 is expected)");
  refused(replaced(json, R"("pad":[1,0])", R"("pad":[1,-1])"),
          R"(an im2col tensor map's "pad" has -1 where an integer in 0..1048576 is expected)");
  refused(replaced(json, R"("dilation":[2,1])", R"("dilation":[2,"1"])"),
          R"(an im2col tensor map's "dilation" has "1" where an integer in 1..1048576 is expected)");
  // A missing field, in the JSON library's words.
  CHECK(refused(replaced(json, R"("dilation":[2,1],)", ""), "").find("dilation") != std::string::npos);
}
