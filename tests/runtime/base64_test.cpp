// Base64 as the kernel metadata carries a second code object: RFC 4648's
// vectors, every byte value, and malformed text rejected.
#include <doctest/doctest.h>

#include "compiler/support/base64.h"

using namespace tlc;

TEST_CASE("base64 encodes RFC 4648's test vectors and decodes them back") {
  const char* pairs[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
                            {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (auto& [plain, coded] : pairs) {
    CHECK(base64Encode(plain) == coded);
    auto back = base64Decode(coded);
    REQUIRE(back);
    CHECK(*back == plain);
  }
}

TEST_CASE("base64 round-trips every byte value at every length modulo 3") {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += char(i);
  for (size_t n : {size_t(254), size_t(255), size_t(256)}) {
    auto back = base64Decode(base64Encode(bytes.substr(0, n)));
    REQUIRE(back);
    CHECK(*back == bytes.substr(0, n));
  }
}

TEST_CASE("malformed base64 is rejected") {
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zg=a", "Zm9v!A==", "Zg==Zg==", "Zm 9"}) {
    INFO(bad);
    CHECK_FALSE(base64Decode(bad));
  }
}
