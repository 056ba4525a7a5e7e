// TMA loads in im2col mode on a Hopper GPU, against the plain convolution
// reference and the pixel walk the CUDA emulator models
// (compiler/backends/cuda_emu/isa_hopper.cpp, TensorMapSpec::im2col): the
// driver's cuTensorMapEncodeIm2col and the cp.async.bulk.tensor ... im2col
// instruction as tlc_cuda_hopper.h issues it, at output pixels that run
// past image rows, images and the last image, every filter tap, strided,
// dilated and asymmetric filters, both swizzles, and random starts (off the
// stride grid, outside the bounding box, image -1 and N, negative
// channels). A load that never completes its transaction count times out.
// On the GPU host:
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a scripts/gpu/tma_im2col_probe.cu -lcuda -o probe && ./probe
// prints the mismatches and exits 2 when there are any.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <random>

typedef unsigned long long u64;

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__global__ void load(const __grid_constant__ CUtensorMap map, unsigned short* out, int bytes, int c, int w, int h,
                     int n, unsigned short ow, unsigned short oh, int* status) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ u64 bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(&bar)), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(&bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n"
                 ::"r"(smem_addr(smem)), "l"(&map), "r"(smem_addr(&bar)), "r"(c), "r"(w), "r"(h), "r"(n), "h"(ow), "h"(oh) : "memory");
  }
  // Wait with a time limit: a transaction count the load never completes shows as a timeout.
  long long start = clock64();
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_addr(&bar)), "r"(0) : "memory");
    if (clock64() - start > 2000000000LL) { if (threadIdx.x == 0) *status = 1; return; }
  }
  for (int i = threadIdx.x; i < bytes / 2; i += blockDim.x) out[i] = ((unsigned short*)smem)[i];
}

struct Conv { int N, H, W, C, kh, kw, sh, sw, ph, pw, dh, dw; };
int OH(const Conv& v) { return (v.H + 2 * v.ph - v.dh * (v.kh - 1) - 1) / v.sh + 1; }
int OW(const Conv& v) { return (v.W + 2 * v.pw - v.dw * (v.kw - 1) - 1) / v.sw + 1; }


static int failures = 0, checks = 0;

// X element value: its flat index + 1 (0 = zero fill), as u16 (tensors below 65535 elements).
unsigned short xval(const Conv& v, long n, long y, long x, long c) {
  if (n < 0 || n >= v.N || y < 0 || y >= v.H || x < 0 || x >= v.W || c < 0 || c >= v.C) return 0;
  return (unsigned short)((((n * v.H + y) * v.W + x) * v.C + c) + 1);
}

// Swizzled byte offset of logical byte b in a tile at a 1024-aligned base.
int swz(int b, int span) {
  int bits = span == 128 ? 3 : span == 64 ? 2 : span == 32 ? 1 : 0;
  if (!bits) return b;
  int mask = ((1 << bits) - 1) << 4;
  return b ^ ((b >> 3) & mask);
}

void runCase(const char* name, const Conv& v, int Cb, int Pb, int swizzle, bool randomStarts) {
  size_t elems = (size_t)v.N * v.H * v.W * v.C;
  std::vector<unsigned short> X(elems);
  for (size_t i = 0; i < elems; ++i) X[i] = (unsigned short)(i + 1);
  unsigned short* dX; unsigned short* dOut; int* dStatus;
  cudaMalloc(&dX, elems * 2 + 256);
  cudaMemcpy(dX, X.data(), elems * 2, cudaMemcpyHostToDevice);
  int bytes = Cb * Pb * 2;
  cudaMalloc(&dOut, bytes);
  cudaMalloc(&dStatus, 4);
  cuuint64_t dims[4] = {(cuuint64_t)v.C, (cuuint64_t)v.W, (cuuint64_t)v.H, (cuuint64_t)v.N};
  cuuint64_t strides[3] = {(cuuint64_t)v.C * 2, (cuuint64_t)v.W * v.C * 2, (cuuint64_t)v.H * v.W * v.C * 2};
  int lower[2] = {-v.pw, -v.ph}, upper[2] = {v.pw - v.dw * (v.kw - 1), v.ph - v.dh * (v.kh - 1)};
  cuuint32_t es[4] = {1, (cuuint32_t)v.sw, (cuuint32_t)v.sh, 1};
  CUtensorMap map;
  CUtensorMapSwizzle sw = swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                          : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
  CUresult rc = cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, dX, dims, strides, lower, upper, Cb, Pb, es,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) { printf("%s: encode failed %d\n", name, (int)rc); failures++; return; }
  cudaFuncSetAttribute(load, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  const int oh = OH(v), ow = OW(v), M = v.N * oh * ow;
  std::vector<unsigned short> got(bytes / 2);
  int caseFail = 0, caseChecks = 0;
  auto issue = [&](int c, int w, int h, int n, int offw, int offh) -> bool {
    cudaMemset(dStatus, 0, 4);
    cudaMemset(dOut, 0xff, bytes);
    load<<<1, 128, bytes + 1024>>>(map, dOut, bytes, c, w, h, n, (unsigned short)offw, (unsigned short)offh, dStatus);
    cudaError_t e = cudaDeviceSynchronize();
    int status = 0;
    cudaMemcpy(&status, dStatus, 4, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess || status) { printf("%s: launch error %s / timeout %d\n", name, cudaGetErrorString(e), status); return false; }
    cudaMemcpy(got.data(), dOut, bytes, cudaMemcpyDeviceToHost);
    return true;
  };
  auto compare = [&](const char* what, const std::vector<unsigned short>& want, int c, int w, int h, int n, int offw, int offh) {
    caseChecks++;
    int bad = 0;
    for (int p = 0; p < Pb; ++p)
      for (int k = 0; k < Cb; ++k) {
        int b = (p * Cb + k) * 2;
        unsigned short g = got[swz(b, swizzle) / 2];
        if (g != want[p * Cb + k]) {
          if (bad < 3 && caseFail < 6)
            printf("  %s %s start c=%d w=%d h=%d n=%d off=(%d,%d): pixel %d ch %d got %u want %u\n", name, what, c, w, h,
                   n, offw, offh, p, k, g, want[p * Cb + k]);
          bad++;
        }
      }
    if (bad) caseFail++;
  };
  std::vector<unsigned short> want(Cb * Pb);
  if (!randomStarts) {
    for (int m0 = 0; m0 < M + Pb; m0 += Pb / 2)
      for (int ki = 0; ki < v.kh; ++ki)
        for (int kj = 0; kj < v.kw; ++kj)
          for (int c0 = 0; c0 < v.C; c0 += Cb / 2) {
            int n0 = m0 / (oh * ow), r = m0 % (oh * ow), oy = r / ow, ox = r % ow;
            int w = ox * v.sw - v.pw, h = oy * v.sh - v.ph;
            for (int p = 0; p < Pb; ++p) {
              int m = m0 + p, n = m / (oh * ow), rr = m % (oh * ow), y = rr / ow, x = rr % ow;
              for (int k = 0; k < Cb; ++k)
                want[p * Cb + k] = xval(v, n, (long)y * v.sh - v.ph + ki * v.dh, (long)x * v.sw - v.pw + kj * v.dw, c0 + k);
            }
            if (!issue(c0, w, h, n0, kj * v.dw, ki * v.dh)) { failures++; return; }
            compare("conv", want, c0, w, h, n0, kj * v.dw, ki * v.dh);
          }
  } else {
    std::mt19937 rng(11);
    const int wLast = v.W - 1 + upper[0], hLast = v.H - 1 + upper[1];
    for (int t = 0; t < 400; ++t) {
      int w = lower[0] - 2 + (int)(rng() % (wLast - lower[0] + 5));
      int h = lower[1] - 2 + (int)(rng() % (hLast - lower[1] + 5));
      int n = -1 + (int)(rng() % (v.N + 2));
      int c = -Cb / 2 + (int)(rng() % (v.C + Cb / 2)) / 8 * 8;
      int offw = rng() % 6, offh = rng() % 6;
      int ww = w, hh = h, nn = n;
      for (int p = 0; p < Pb; ++p) {
        for (int k = 0; k < Cb; ++k) want[p * Cb + k] = xval(v, nn, hh + offh, ww + offw, c + k);
        ww += v.sw;
        if (ww > wLast) { ww = lower[0]; hh += v.sh; if (hh > hLast) { hh = lower[1]; nn += 1; } }
      }
      if (!issue(c, w, h, n, offw, offh)) { failures++; return; }
      compare("walk", want, c, w, h, n, offw, offh);
    }
  }
  printf("%s: %d loads, %d mismatching\n", name, caseChecks, caseFail);
  failures += caseFail; checks += caseChecks;
  cudaFree(dX); cudaFree(dOut); cudaFree(dStatus);
}

int main() {
  cudaFree(0);
  Conv a{2, 5, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1};
  runCase("3x3 pad1 stride1 Cb16 Pb32", a, 16, 32, 0, false);
  runCase("3x3 pad1 stride1 Cb8 Pb16", a, 8, 16, 0, false);
  Conv b{2, 5, 7, 16, 3, 3, 2, 2, 2, 2, 2, 2};
  runCase("3x3 pad2 stride2 dil2 Cb16 Pb8", b, 16, 8, 0, false);
  Conv c{3, 6, 9, 16, 2, 3, 1, 2, 0, 1, 1, 1};
  runCase("2x3 stride(1,2) pad(0,1) Cb8 Pb16", c, 8, 16, 0, false);
  Conv d{2, 5, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1};
  runCase("swizzle128 Cb64 Pb16", d, 64, 16, 128, false);
  runCase("swizzle64 Cb32 Pb16", d, 32, 16, 64, false);
  runCase("walk 3x3 pad1", a, 16, 32, 0, true);
  runCase("walk stride2 dil2", b, 16, 24, 0, true);
  runCase("walk asym", c, 8, 40, 0, true);
  printf("TOTAL: %d loads checked, %d failing\n", checks, failures);
  return failures ? 2 : 0;
}
