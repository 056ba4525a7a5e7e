// Vector accesses in plain Parallel nests (cuda_vector_loops.h): which
// buffers a nest moves as runs of consecutive innermost iterations, the run
// length, and the nests left element-wise. Correctness of the emitted code
// against the interpreter is tested in the emulator
// (tests/cuda_emu_examples/vector_nests.tl).
#include <doctest/doctest.h>

#include "tests/cuda/emit_util.h"

using namespace tlc;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A kernel over an M x N tensor pair with one Parallel nest whose body is BODY.
std::string nest(const std::string& body, const std::string& dtype = "float16", const std::string& extent = "64") {
  std::string text = R"(
def k[M, N](X: Tensor[(M, N), DT], Y: Tensor[(M, N), DT], Z: Tensor[(N, M), DT]):
    with T.Kernel(T.ceildiv(M, 4), threads=32) as bx:
        for i, j in T.Parallel(4, EXT):
            BODY
)";
  text.replace(text.find("DT"), 2, dtype);
  text.replace(text.find("DT"), 2, dtype);
  text.replace(text.find("DT"), 2, dtype);
  text.replace(text.find("EXT"), 3, extent);
  text.replace(text.find("BODY"), 4, body);
  return text;
}

}  // namespace

TEST_CASE("a nest moving along the contiguous dimension reads and writes 16-byte runs") {
  std::string cu = test::emitCudaFor(nest("Y[bx * 4 + i, j] = X[bx * 4 + i, j] * T.cast(2, float16)"));
  // The load: ahead of a whole chunk's lanes (which then read the run with
  // no test), and at the first lane that reaches it in the edge chunks' form.
  CHECK(count(cu, "tlc::copy_vec<__half, 8>(vld_X") == 2);
  CHECK(count(cu, "vld_X_ok ?") == 1);
  CHECK(count(cu, "tlc::copy_vec<__half, 8>(vst_Y_at") == 1);
  // float32: four lanes per 16 bytes (two chunks per thread: the whole
  // chunks' load and store, and the edge chunks').
  cu = test::emitCudaFor(nest("Y[bx * 4 + i, j] = X[bx * 4 + i, j] + 1.0", "float32"));
  CHECK(count(cu, "tlc::copy_vec<float, 4>") == 4);
  CHECK(count(cu, "tlc::copy_vec<float, 8>") == 0);
  // Guards and lets in the body keep their meaning per lane.
  cu = test::emitCudaFor(nest(R"(c = j + 1
            if bx * 4 + i < M and c < N:
                Y[bx * 4 + i, c] = X[bx * 4 + i, c])"));
  CHECK(count(cu, "vld_X") > 0);
  CHECK(count(cu, "vst_Y") > 0);
}

TEST_CASE("a run of a wider element type than the narrowest takes several 16-byte accesses") {
  std::string cu = test::emitCudaFor(R"(
def k[M](X: Tensor[(M, 64), float16], Y: Tensor[(M, 64), float32]):
    with T.Kernel(T.ceildiv(M, 4), threads=32) as bx:
        for i, j in T.Parallel(4, 64):
            Y[bx * 4 + i, j] = T.cast(X[bx * 4 + i, j], float32)
)");
  CHECK(count(cu, "tlc::copy_vec<__half, 8>") == 2);
  CHECK(count(cu, "tlc::copy_vec<float, 4>(vst_Y_at, vst_Y);") == 1);
  CHECK(count(cu, "tlc::copy_vec<float, 4>(vst_Y_at + 4, vst_Y + 4);") == 1);
}

TEST_CASE("accesses that do not move with the innermost loop stay element-wise") {
  // A transposed store: only the load is a run.
  std::string cu = test::emitCudaFor(nest("Z[j, bx * 4 + i] = X[bx * 4 + i, j]"));
  CHECK(count(cu, "vld_X") > 0);
  CHECK(count(cu, "vst_Z") == 0);
  // Two elements per iteration, or an index read from memory: none.
  cu = test::emitCudaFor(nest("Y[bx * 4 + i, 2 * j] = X[bx * 4 + i, 2 * j]"));
  CHECK(count(cu, "copy_vec") == 0);
  // The same element for every j (a broadcast) is read once per lane.
  cu = test::emitCudaFor(nest("Y[bx * 4 + i, j] = X[bx * 4 + i, 0]"));
  CHECK(count(cu, "vld_X") == 0);
  CHECK(count(cu, "vst_Y") > 0);
}

TEST_CASE("a buffer read after the body wrote it keeps element accesses") {
  // In place (each element read before it is written): runs.
  std::string cu = test::emitCudaFor(nest("X[bx * 4 + i, j] = X[bx * 4 + i, j] + X[bx * 4 + i, j]"));
  CHECK(count(cu, "vld_X") > 0);
  CHECK(count(cu, "vst_X") > 0);
  // Written, then read at another element: element-wise.
  cu = test::emitCudaFor(nest(R"(X[bx * 4 + i, j] = Y[bx * 4 + i, j]
            Y[bx * 4 + i, j] = X[bx * 4 + i, j + 1])"));
  CHECK(count(cu, "vld_X") == 0);
  CHECK(count(cu, "vst_X") == 0);
}

TEST_CASE("nests with loops, atomics or an extent no run divides stay element-wise") {
  CHECK(count(test::emitCudaFor(nest("Y[bx * 4 + i, j] = X[bx * 4 + i, j]", "float16", "63")), "copy_vec") == 0);
  CHECK(count(test::emitCudaFor(nest(R"(for r in T.serial(2):
                Y[bx * 4 + i, j] = X[bx * 4 + i, j])")),
              "copy_vec") == 0);
  std::string cu = test::emitCudaFor(nest("T.atomic_add(Y[bx * 4 + i, j], X[bx * 4 + i, j])", "float32"));
  CHECK(count(cu, "vld_X") > 0);
  CHECK(count(cu, "vst_Y") == 0);
}

TEST_CASE("a chunk whose lanes all pass the guards runs straight; other guards keep the lanes one by one") {
  // Edge comparisons (one side moves with the lane) and lane-free terms: a
  // chunk tested at its first and last lane loads its run first and runs no
  // test per lane; the edge chunks keep the guarded lanes.
  std::string guarded = R"(c = j + 1
            if bx * 4 + i < M and c < N:
                Y[bx * 4 + i, c] = X[bx * 4 + i, c])";
  std::string cu = test::emitCudaFor(nest(guarded));
  CHECK(count(cu, "((j + 1) < N)") == 0);  // the let is inlined in the chunk's test
  CHECK(count(cu, "(((run_first + 1) < N) && (((run_first + 7) + 1) < N))") == 1);
  CHECK(count(cu, "tlc::copy_vec<__half, 8>(vld_X, &X[") == 2);  // the straight chunk's, and the edge chunks'
  // A guard that is not such a comparison (every other lane) or that reads
  // memory: no straight chunk.
  cu = test::emitCudaFor(nest(R"(if j % 2 == 0:
                Y[bx * 4 + i, j] = X[bx * 4 + i, j])"));
  CHECK(count(cu, "} else {") == 1);  // the store's element-wise fallback only
  cu = test::emitCudaFor(nest(R"(if X[bx * 4 + i, 0] > T.cast(0, float16):
                Y[bx * 4 + i, j] = X[bx * 4 + i, j])"));
  CHECK(count(cu, "} else {") == 1);
}

TEST_CASE("a thread with several chunks loads a group of their runs before computing any") {
  // 4 x 256 float16 over 32 threads: four chunks of 8 lanes per thread. One
  // 16-byte run per chunk: the four are loaded together (64 bytes).
  std::string doubled = "Y[bx * 4 + i, j] = X[bx * 4 + i, j] * T.cast(2, float16)";
  std::string cu = test::emitCudaFor(nest(doubled, "float16", "256"));
  CHECK(count(cu, "__half vld_X_all[4][8];") == 1);
  CHECK(count(cu, "tlc::copy_vec<__half, 8>(vld_X_all[kk], &X[") == 1);
  CHECK(count(cu, "whole |= (unsigned)w << kk;") == 1);
  CHECK(count(cu, "if (((whole >> kk) & 1u)) {") == 1);   // the whole chunks' straight lanes
  CHECK(count(cu, "if (!((whole >> kk) & 1u)) {") == 1);  // the others, lane by lane
  CHECK(count(cu, "for (int kb") == 0);
  // Two runs per chunk: groups of two chunks, two groups per thread.
  cu = test::emitCudaFor(nest("Y[bx * 4 + i, j] = X[bx * 4 + i, j] + Y[bx * 4 + i, j]", "float16", "256"));
  CHECK(count(cu, "for (int kb = 0; kb < 2; ++kb)") == 1);
  CHECK(count(cu, "__half vld_X_all[2][8];") == 1);
  CHECK(count(cu, "__half vld_Y_all[2][8];") == 1);
  // One chunk per thread, or a guard no chunk can be tested whole by: one
  // chunk at a time.
  cu = test::emitCudaFor(nest(doubled));
  CHECK(count(cu, "_all[") == 0);
  cu = test::emitCudaFor(nest(R"(if j % 2 == 0:
                Y[bx * 4 + i, j] = X[bx * 4 + i, j])", "float16", "256"));
  CHECK(count(cu, "_all[") == 0);
}
