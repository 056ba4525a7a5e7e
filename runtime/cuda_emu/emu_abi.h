// The binary interface between a CUDA kernel compiled for the host (the
// emulated module, a shared object built from the generated CUDA C and
// emu_prelude.h) and the emulator that loads it (compiler/backends/cuda_emu).
//
// The shared object exports three variables that the emulator fills in after
// loading it and before running any kernel:
//   tlc_emu_api*          tlc_emu_host      -- the emulated instruction set
//   tlc_emu_thread_state* tlc_emu_self      -- the running GPU thread (updated
//                                              on every fiber switch)
//   unsigned char*        tlc_emu_dyn_smem  -- the dynamic shared memory
// and, for each kernel K, `void tlc_emu_launch_K(void** args)` which calls K
// with arguments packed like cuLaunchKernel's kernelParams. A module of HIP C
// also exports `const unsigned tlc_emu_wavefront_lanes = 64` (the emulator's
// host tlc_hip.h defines it): its shuffles of width 64 are then collectives
// of the caller's 64-lane wavefront.
//
// Every memory access of the kernel code reaches `access` (through the
// compiler's thread-sanitizer instrumentation, redirected to the emulator);
// every instruction with semantics beyond plain C++ (barriers, warp
// collectives, tensor-core and asynchronous-copy instructions, atomics) is a
// call through tlc_emu_api, passing the caller's return address so findings
// can name the source line. Plain C: both sides may be compiled by different
// compilers.
#ifndef TLC_CUDA_EMU_ABI_H
#define TLC_CUDA_EMU_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TLC_EMU_ABI_VERSION 8

typedef struct tlc_emu_uint3 {
  unsigned x, y, z;
} tlc_emu_uint3;

typedef struct tlc_emu_thread_state {
  tlc_emu_uint3 thread_idx;
  tlc_emu_uint3 block_idx;
  tlc_emu_uint3 block_dim;
  tlc_emu_uint3 grid_dim;
  unsigned lane;  // %laneid
  unsigned warp;  // %warpid within the block
} tlc_emu_thread_state;

// Access flags.
enum { TLC_EMU_READ = 1, TLC_EMU_WRITE = 2, TLC_EMU_ATOMIC = 4 };

// Shuffle modes (shfl.sync.{idx,up,down,bfly}).
enum { TLC_EMU_SHFL_IDX = 0, TLC_EMU_SHFL_UP = 1, TLC_EMU_SHFL_DOWN = 2, TLC_EMU_SHFL_XOR = 3 };

// Barrier reductions (bar.red).
enum { TLC_EMU_BAR_RED_POPC = 0, TLC_EMU_BAR_RED_AND = 1, TLC_EMU_BAR_RED_OR = 2 };

// Vote modes (vote.sync.{all,any,ballot}, match.any).
enum { TLC_EMU_VOTE_ALL = 0, TLC_EMU_VOTE_ANY = 1, TLC_EMU_VOTE_BALLOT = 2 };

// Atomic operations and operand types.
enum {
  TLC_EMU_ATOM_ADD = 0, TLC_EMU_ATOM_MIN, TLC_EMU_ATOM_MAX, TLC_EMU_ATOM_EXCH, TLC_EMU_ATOM_CAS,
  TLC_EMU_ATOM_AND, TLC_EMU_ATOM_OR, TLC_EMU_ATOM_XOR, TLC_EMU_ATOM_INC, TLC_EMU_ATOM_DEC
};
enum {
  TLC_EMU_TY_S32 = 0, TLC_EMU_TY_U32, TLC_EMU_TY_S64, TLC_EMU_TY_U64, TLC_EMU_TY_F32,
  TLC_EMU_TY_F64, TLC_EMU_TY_F16, TLC_EMU_TY_BF16, TLC_EMU_TY_F16X2, TLC_EMU_TY_BF16X2,
  TLC_EMU_TY_U16  // atomicCAS on unsigned short
};

// mma.sync shapes and types, named after the PTX instruction
// mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c>.
enum {
  TLC_EMU_MMA_M16N8K16_F32_F16 = 0,   // .m16n8k16 .f32.f16.f16.f32
  TLC_EMU_MMA_M16N8K16_F32_BF16,      // .m16n8k16 .f32.bf16.bf16.f32
  TLC_EMU_MMA_M16N8K8_F32_F16,        // .m16n8k8  .f32.f16.f16.f32
  TLC_EMU_MMA_M16N8K8_F32_BF16,       // .m16n8k8  .f32.bf16.bf16.f32
  TLC_EMU_MMA_M16N8K16_F16_F16,       // .m16n8k16 .f16.f16.f16.f16
  TLC_EMU_MMA_M16N8K8_F32_TF32,       // .m16n8k8  .f32.tf32.tf32.f32
  TLC_EMU_MMA_M16N8K4_F32_TF32,       // .m16n8k4  .f32.tf32.tf32.f32
  TLC_EMU_MMA_M16N8K32_S32_S8,        // .m16n8k32 .s32.s8.s8.s32
  TLC_EMU_MMA_M16N8K16_S32_S8,        // .m16n8k16 .s32.s8.s8.s32
  TLC_EMU_MMA_M16N8K32_S32_U8,        // .m16n8k32 .s32.u8.u8.s32
  TLC_EMU_MMA_M16N8K32_F32_E4M3,      // .m16n8k32 .f32.e4m3.e4m3.f32 (sm_89)
  TLC_EMU_MMA_M16N8K32_F32_E5M2,      // .m16n8k32 .f32.e5m2.e5m2.f32 (sm_89)
  TLC_EMU_MMA_KIND_COUNT
};

// Fences (fence_kind of tlc_emu_api.fence).
enum { TLC_EMU_FENCE_MBAR_INIT = 0, TLC_EMU_FENCE_PROXY_ASYNC = 1 };
// Warpgroup synchronization (wgmma_sync op).
enum { TLC_EMU_WGMMA_FENCE = 0, TLC_EMU_WGMMA_COMMIT = 1, TLC_EMU_WGMMA_WAIT = 2 };
// wgmma operand kinds.
// S8: int8 operands (k32), the accumulators int32 (passed as float* and
// reinterpreted). E4M3 / E5M2: float8 operands of that type (k32, no
// transposes), float accumulators. TF32: float32 operands read as tf32 (k8,
// no transposes).
enum {
  TLC_EMU_WGMMA_F16 = 0,
  TLC_EMU_WGMMA_BF16 = 1,
  TLC_EMU_WGMMA_S8 = 2,
  TLC_EMU_WGMMA_E4M3 = 3,
  TLC_EMU_WGMMA_E5M2 = 4,
  TLC_EMU_WGMMA_TF32 = 5
};

// CDNA matrix instructions (v_mfma_*; HIP C), in the order of
// compiler/backends/cuda_emu/isa_mfma.h's MfmaKind.
enum {
  TLC_EMU_MFMA_F32_32X32X8_F16 = 0,  // v_mfma_f32_32x32x8f16
  TLC_EMU_MFMA_F32_16X16X16_F16,     // v_mfma_f32_16x16x16f16
  TLC_EMU_MFMA_F32_32X32X8_BF16,     // v_mfma_f32_32x32x8bf16_1k
  TLC_EMU_MFMA_F32_16X16X16_BF16,    // v_mfma_f32_16x16x16bf16_1k
  TLC_EMU_MFMA_I32_32X32X8_I8,       // v_mfma_i32_32x32x8i8 (gfx90a)
  TLC_EMU_MFMA_I32_16X16X16_I8,      // v_mfma_i32_16x16x16i8 (gfx90a)
  TLC_EMU_MFMA_I32_32X32X16_I8,      // v_mfma_i32_32x32x16_i8 (gfx942)
  TLC_EMU_MFMA_I32_16X16X32_I8,      // v_mfma_i32_16x16x32_i8 (gfx942)
  TLC_EMU_MFMA_F32_32X32X2_F32,      // v_mfma_f32_32x32x2f32
  TLC_EMU_MFMA_F32_16X16X4_F32,      // v_mfma_f32_16x16x4f32
  TLC_EMU_MFMA_F32_32X32X16_FP8,     // v_mfma_f32_32x32x16_fp8_fp8 (gfx942)
  TLC_EMU_MFMA_F32_16X16X32_FP8,     // v_mfma_f32_16x16x32_fp8_fp8 (gfx942)
  TLC_EMU_MFMA_F32_32X32X16_BF8,     // v_mfma_f32_32x32x16_bf8_bf8 (gfx942)
  TLC_EMU_MFMA_F32_16X16X32_BF8,     // v_mfma_f32_16x16x32_bf8_bf8 (gfx942)
  TLC_EMU_MFMA_KIND_COUNT
};

typedef struct tlc_emu_api {
  uint32_t abi_version;
  // A load (READ), store (WRITE) or read-modify-write (READ|WRITE|ATOMIC) of
  // `size` bytes at `addr` by the running thread.
  void (*access)(const void* addr, size_t size, int flags, const void* pc);
  // bar.sync 0 (__syncthreads) and bar.sync id, count.
  void (*bar_sync)(unsigned id, unsigned count, const void* pc);
  // bar.warp.sync mask (__syncwarp).
  void (*warp_sync)(unsigned mask, const void* pc);
  // shfl.sync; returns the shuffled value; *valid (may be null) receives the
  // predicate output of the PTX instruction. Width 64 (in a module that
  // exports tlc_emu_wavefront_lanes = 64): a shuffle of the calling thread's
  // 64-lane wavefront, threads 64w .. 64w + 63, with no member mask.
  uint32_t (*shfl)(int mode, unsigned mask, uint32_t value, int lane_or_delta, int width,
                   int* valid, const void* pc);
  // vote.sync / match.any.sync.
  uint32_t (*vote)(int mode, unsigned mask, int pred, const void* pc);
  // Atomic read-modify-write of an operand of `type` at `addr`; values are
  // passed and returned as raw bits. Returns the old value.
  uint64_t (*atomic)(int op, int type, void* addr, uint64_t value, uint64_t compare,
                     const void* pc);
  // mma.sync: d, a, b, c point at this lane's fragment registers (32-bit each).
  void (*mma)(int kind, uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c,
              const void* pc);
  // ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16: row_addr is this
  // lane's row address; dst receives `num` registers.
  void (*ldmatrix)(int num, int trans, uint32_t* dst, const void* row_addr, const void* pc);
  // stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16.
  void (*stmatrix)(int num, int trans, const uint32_t* src, void* row_addr, const void* pc);
  // cp.async.{ca,cg}.shared.global [dst], [src], cp_size, src_size: reads
  // src_size bytes, zero-fills the rest; the data lands at the wait.
  void (*cp_async)(void* dst, const void* src, int cp_size, int src_size, const void* pc);
  void (*cp_async_commit)(const void* pc);
  // cp.async.wait_group n (n = -1: cp.async.wait_all).
  void (*cp_async_wait)(int n, const void* pc);
  // __trap(), a failed assert(), or an unsupported construct: ends the launch.
  void (*trap)(const char* message, const void* pc);
  // clock64(): a per-thread counter that increases on every call.
  long long (*clock)(void);
  // bar.red.{popc,and,or} on barrier 0 (__syncthreads_count/_and/_or):
  // a block-wide barrier that also reduces every thread's predicate.
  int (*bar_red)(int op, int pred, const void* pc);
  // --- Hopper (sm_90a); bar points at a 64-bit mbarrier object in shared memory.
  // mbarrier.init.shared::cta.b64 [bar], count.
  void (*mbar_init)(void* bar, unsigned count, const void* pc);
  // mbarrier.arrive[.expect_tx].shared::cta.b64: expect_tx bytes (0: plain arrive).
  void (*mbar_arrive)(void* bar, unsigned expect_tx, const void* pc);
  // mbarrier.try_wait.parity in a loop: returns once the phase of that parity completed.
  void (*mbar_wait)(void* bar, unsigned parity, const void* pc);
  // fence.mbarrier_init / fence.proxy.async.shared::cta (TLC_EMU_FENCE_*).
  void (*fence)(int fence_kind, const void* pc);
  // cp.async.bulk.tensor.<rank>d.shared::cluster.global.mbarrier::complete_tx::bytes
  // [smem], [map, {coords}], [bar]: map is a 128-byte tensor map in the
  // emulator's encoding; coords has `rank` elements, innermost first.
  void (*tma_load)(int rank, void* smem, const void* map, void* bar, const int* coords, const void* pc);
  // cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
  // [smem], [map, {c, w, h, n}], [bar], {off_w, off_h}: map is an im2col
  // tensor map in the emulator's encoding; coords are (c, w, h, n), offsets
  // the 16-bit im2col offsets (w, h).
  void (*tma_load_im2col)(void* smem, const void* map, void* bar, const int* coords, const uint16_t* offsets,
                          const void* pc);
  // cp.async.bulk.tensor.<rank>d.global.shared::cta.bulk_group [map, {coords}],
  // [smem]: the box at coords (innermost first) from shared memory to the
  // tensor, elements outside it not written; complete when it returns.
  void (*tma_store)(int rank, const void* map, const void* smem, const int* coords, const void* pc);
  // wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<kind>.<kind>: d is this
  // thread's n/2 float accumulators; trans_a/b 1 = MN-major operand.
  void (*wgmma)(int n, int kind, int trans_a, int trans_b, float* d, uint64_t desc_a, uint64_t desc_b,
                int scale_d, const void* pc);
  // The same with A from registers: a is this thread's four 32-bit A
  // registers (the mma.sync A fragment of its warp's 16 rows).
  void (*wgmma_rs)(int n, int kind, int trans_b, float* d, const uint32_t* a, uint64_t desc_b, int scale_d,
                   const void* pc);
  // wgmma.fence / commit_group / wait_group n (TLC_EMU_WGMMA_*).
  void (*wgmma_sync)(int op, int n, const void* pc);
  // setmaxnreg.{inc,dec}.sync.aligned.u32 regs.
  void (*setmaxnreg)(int inc, unsigned regs, const void* pc);
  // --- CDNA (HIP C): an MFMA over the 64-lane wavefront of the calling
  // thread (threads 64w .. 64w + 63, two of the emulator's 32-lane warps):
  // d is this lane's accumulator (16 or 4 floats, read as C and written as
  // D), a and b its 4 16-bit A and B elements. For the int8 kinds d holds
  // int32 accumulators and a and b 8 bytes each: the lane's int8 elements
  // (4 or 8), then zero padding; for the float32 kinds a and b hold the
  // lane's one float32 element, then zero padding.
  void (*mfma)(int kind, float* d, const uint16_t* a, const uint16_t* b, const void* pc);
} tlc_emu_api;

#ifdef __cplusplus
}
#endif

#endif
