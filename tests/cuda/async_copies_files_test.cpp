// Data-driven tests of the cuda-async-copies pass on textual IR: every
// tests/cuda/async_copies/*.tir is parsed, run through the pass and
// printed; the tile IR is checked against the file's CHECK lines and must
// verify.
#include <doctest/doctest.h>

#include "compiler/backends/cuda/cuda_async_copies.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "tests/support/filecheck.h"
#include "tests/support/tir_files.h"

using namespace tlc;

TEST_CASE("every tests/cuda/async_copies/*.tir file issues its copies as its CHECK lines expect") {
  testing::forEachTirFile("cuda/async_copies", [](const testing::TestFile& f, const ir::Module& module,
                                                  DiagnosticEngine& diags) {
    ir::Module out = cuda::asyncCopies(module);
    CHECK(ir::verifyModule(out, diags));
    auto check = testing::fileCheck(ir::printModule(out), f.text);
    CHECK_MESSAGE(check.ok, check.message);
  });
}
