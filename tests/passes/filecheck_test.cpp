// The FileCheck helper itself: what each directive accepts and rejects.
#include <doctest/doctest.h>

#include "tests/support/filecheck.h"

using tlc::testing::fileCheck;

namespace {
const char* kInput =
    "func @f() {\n"
    "  for i in serial(0 : +4) {\n"
    "    out[i] = i\n"
    "  }\n"
    "}\n"
    "\n"
    "func @g() {\n"
    "  out[0] = 1\n"
    "}\n";
}

TEST_CASE("CHECK finds lines in order") {
  CHECK(fileCheck(kInput, "// CHECK: func @f\n// CHECK: out[i]\n// CHECK: func @g").ok);
  auto r = fileCheck(kInput, "// CHECK: func @g\n// CHECK: func @f");
  CHECK(!r.ok);
  CHECK(r.message.find("check file line 2: CHECK: func @f") != std::string::npos);
  CHECK(r.message.find("not found") != std::string::npos);
  CHECK(r.message.find("7 | func @g() {") != std::string::npos);  // the input is shown
}

TEST_CASE("CHECK-NEXT needs the very next line") {
  CHECK(fileCheck(kInput, "// CHECK: for i\n// CHECK-NEXT: out[i] = i\n// CHECK-NEXT: }").ok);
  CHECK(!fileCheck(kInput, "// CHECK: func @f\n// CHECK-NEXT: out[i]").ok);
  CHECK(!fileCheck(kInput, "// CHECK-NEXT: func").ok);
}

TEST_CASE("CHECK-NOT forbids text between matches") {
  CHECK(fileCheck(kInput, "// CHECK: func @f\n// CHECK-NOT: unroll\n// CHECK: func @g").ok);
  auto r = fileCheck(kInput, "// CHECK: func @f\n// CHECK-NOT: out[i]\n// CHECK: func @g");
  CHECK(!r.ok);
  CHECK(r.message.find("found on input line 3") != std::string::npos);
  // A trailing CHECK-NOT covers the rest of the input.
  CHECK(!fileCheck(kInput, "// CHECK: func @f\n// CHECK-NOT: out[0]").ok);
}

TEST_CASE("CHECK-LABEL confines the checks after it to its section") {
  CHECK(fileCheck(kInput, "// CHECK-LABEL: func @f\n// CHECK: out[i]\n// CHECK-LABEL: func @g\n// CHECK: out[0]").ok);
  // out[0] is only in @g's section, so a check for it under @f fails.
  CHECK(!fileCheck(kInput, "// CHECK-LABEL: func @f\n// CHECK: out[0]\n// CHECK-LABEL: func @g").ok);
  CHECK(!fileCheck(kInput, "// CHECK-LABEL: func @h").ok);
  // A CHECK-NOT before a label sees only up to the label.
  CHECK(fileCheck(kInput, "// CHECK-LABEL: func @f\n// CHECK-NOT: out[0]\n// CHECK-LABEL: func @g").ok);
}

TEST_CASE("spacing differences are ignored and a file without checks is an error") {
  CHECK(fileCheck("a   =  b\n", "// CHECK:   a = b  ").ok);
  CHECK(!fileCheck(kInput, "no checks here").ok);
  CHECK(fileCheck(kInput, "// MYPREFIX: out[0]", "MYPREFIX").ok);
}
