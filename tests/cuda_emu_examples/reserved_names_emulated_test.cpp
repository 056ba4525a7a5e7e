// Names that C, C++, CUDA or the generated code reserve (see
// compiler/backends/c_names.h) in every role of a kernel: the emulator
// compiles the CUDA C as host C++ and runs it against the interpreter.
#include <doctest/doctest.h>

#include "tests/cuda_emu_examples/emulate_util.h"

using namespace tlc;

TEST_CASE("a kernel whose every name is reserved somewhere runs in the emulator") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  uint32_t file = sm.addBuffer("reserved_names.tl", R"(def int[NULL, module=64](__LINE__: Tensor[(NULL, module), float32], stream: Tensor[(NULL, module), float32], xor: float32):
    with T.Kernel(T.ceildiv(NULL, 32), threads=128) as status_:
        tid = T.alloc_shared((32, module), float32)
        r = T.alloc_fragment((32, module), float32)
        T.copy(__LINE__[status_ * 32, 0], tid)
        T.copy(tid, r)
        for int64_t, c in T.Parallel(32, module):
            threadIdx = r[int64_t, c] * xor
            r[int64_t, c] = threadIdx + 1.0
        T.copy(r, stream[status_ * 32, 0])
)");
  auto module = compileSource(sm, diags, file, {});
  REQUIRE_MESSAGE(module, diags.renderAll());
  std::string log;
  int rc = test::runEmulatedCheck(*module, diags, {{"NULL", 70}}, 3, &log);
  INFO(log);
  CHECK(rc == 0);
}
