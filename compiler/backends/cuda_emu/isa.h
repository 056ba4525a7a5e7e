// The emulated PTX instruction set: the data semantics of every warp-level
// instruction the emulator executes, one function per instruction, as pure
// functions over the 32 lanes' registers (no memory, no scheduling).
//
// The machine (machine.h) gathers each lane's operands when the whole warp
// has arrived at a collective, calls these, and hands the results back; it
// also does the memory side (the rows ldmatrix reads, access checks). New
// instructions (wgmma, TMA, mbarrier for Hopper) go here with a unit test in
// tests/cuda_emu/isa_test.cpp against hand-computed fragments.
//
// Fragment layouts follow the PTX ISA sections "Matrix Fragments for mma.m16n8k*"
// and "Warp-level matrix load instruction: ldmatrix": with
// groupID = lane >> 2 and threadID_in_group = lane % 4, element i of a
// lane's fragment is at the (row, col) the *Element functions return.
// Elements narrower than 32 bits are packed into registers low half first.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/backends/bank_wavefronts.h"
#include "runtime/cuda_emu/emu_abi.h"

namespace tlc::cuda_emu::isa {

constexpr int kWarpSize = 32;
constexpr int kWavefrontSize = 64;  // a CDNA wavefront (HIP C)

enum class ElemType { F16, BF16, TF32, F32, S8, U8, S32, E4M3, E5M2 };
int elemBits(ElemType t);

struct MmaInfo {
  const char* ptx;  // e.g. "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
  int m, n, k;
  ElemType a, b, c;  // d has the type of c
  int aRegs, bRegs, cRegs;
};
// Every kind in TLC_EMU_MMA_*; nullptr for an unknown kind.
const MmaInfo* mmaInfo(int kind);

struct Coord {
  int row, col;
};
// Position of element i of lane's A fragment in the m x k matrix A.
Coord mmaAElement(int kind, int lane, int i);
// Position (k, n) of element i of lane's B fragment in the k x n matrix B.
Coord mmaBElement(int kind, int lane, int i);
// Position (row, col) of element i of lane's C / D fragment in the m x n matrix.
Coord mmaCElement(int kind, int lane, int i);

// Element i of a fragment (registers regs) as a double.
double fragElement(ElemType t, const uint32_t* regs, int i);
// Stores v (rounded to t) as element i of a fragment.
void setFragElement(ElemType t, uint32_t* regs, int i, double v);

// mma.sync: D = A * B + C for one warp. a[lane], b[lane], c[lane] point at
// each lane's fragment registers; d[lane] receives the result. Products are
// exact and summed in double, then rounded once to the accumulator type (the
// hardware's accumulation order is unspecified; this is the most accurate
// choice). Integer kinds are exact with 32-bit wrap-around.
void mma(int kind, const uint32_t* const a[kWarpSize], const uint32_t* const b[kWarpSize],
         const uint32_t* const c[kWarpSize], uint32_t* const d[kWarpSize]);

// ldmatrix.sync.aligned.m8n8.x{num}[.trans].b16: rows[m][r] holds the 8
// 16-bit elements of row r of matrix m (read from the address lane 8m + r
// supplied). out[lane][m] receives register m of each lane.
void ldmatrix(int num, bool trans, const uint16_t rows[4][8][8], uint32_t out[kWarpSize][4]);
// stmatrix.sync.aligned.m8n8.x{num}[.trans].b16: the inverse: from each
// lane's registers in[lane][m], the rows to store at the lanes' addresses.
void stmatrix(int num, bool trans, const uint32_t in[kWarpSize][4], uint16_t rows[4][8][8]);

// shfl.sync for the lanes in `mask`: value[lane] is each lane's input,
// arg[lane] its srcLane / delta / laneMask, width its c-operand width.
// Fills out[lane] and valid[lane] for every lane in mask; a lane whose
// source lies outside the mask gets valid = false and its own value (the
// PTX result is undefined there; the machine reports it).
void shfl(int mode, uint32_t mask, const uint32_t value[kWarpSize], const int arg[kWarpSize],
          int width, uint32_t out[kWarpSize], bool valid[kWarpSize], int srcLane[kWarpSize]);
// The shuffles of a 64-lane CDNA wavefront (HIP's __shfl, __shfl_up,
// __shfl_down and __shfl_xor; with width 64, a distance of 32 crosses the
// wavefront's two halves): the rules of shfl over 64 lanes, which are
// HIP's (a source outside the caller's segment of `width` lanes gives the
// caller's own value); `active` holds the lanes that exist.
void waveShfl(int mode, uint64_t active, const uint32_t value[kWavefrontSize], const int arg[kWavefrontSize], int width,
              uint32_t out[kWavefrontSize], bool valid[kWavefrontSize], int srcLane[kWavefrontSize]);

// vote.sync.{all,any,ballot} over the lanes in mask.
uint32_t vote(int mode, uint32_t mask, const bool pred[kWarpSize]);

// atom.<op>.<type>: the new memory value for old value `old` (raw bits) and
// operand `value` (and `compare` for CAS). Returns false for an op/type
// combination PTX does not have.
bool atomicApply(int op, int type, uint64_t old, uint64_t value, uint64_t compare,
                 uint64_t* result);
int atomicTypeBytes(int type);

// Shared-memory wavefronts of one warp-wide access: addr[lane] / active
// lanes, `bytes` per lane (1..16). A 32-bank, 4-byte-wide model: lanes are
// processed in phases of 128 bytes (32 lanes for <=4 bytes, 16 for 8, 8 for
// 16); within a phase the wavefronts are the largest number of distinct
// 4-byte words that map to one bank (identical words broadcast).
using Wavefronts = backend::Wavefronts;
Wavefronts sharedWavefronts(const uint64_t addr[kWarpSize], uint32_t activeMask, int bytes);

// ---------------------------------------------------------------------------
// Hopper (sm_90a): wgmma operands and accumulators, mbarrier phases, tensor
// copies (isa_hopper.cpp). Shared addresses are 32-bit offsets into the
// shared window (what __cvta_generic_to_shared gives the kernel).

// A wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"):
// bits 0-13 start address >> 4, 16-29 leading dimension byte offset >> 4,
// 32-45 stride dimension byte offset >> 4, 49-51 base offset, 62-63 swizzle
// (0 none, 1 128B, 2 64B, 3 32B).
struct SmemDesc {
  uint32_t start = 0, lbo = 0, sbo = 0;  // bytes
  int baseOffset = 0;
  int swizzle = 0;  // span in bytes: 0, 32, 64, 128
};
SmemDesc decodeSmemDesc(uint64_t desc);
// The swizzle of a shared address: 16-byte chunk bits [4, 4+b) XORed with
// bits [7, 7+b), b = log2(span / 16) (128B: [6:4] ^= [9:7]; 64B: [5:4] ^=
// [8:7]; 32B: [4] ^= [7]); span 0 leaves the address alone.
uint32_t swizzleAddress(uint32_t addr, int spanBytes);
// Shared address of element (mn, k) of a wgmma operand (mn: the row of A or
// the column of B) in the canonical layouts of PTX ISA "Shared Memory Matrix
// Layout" (in bytes; T = 16 / elemBytes elements per 16-byte chunk):
//   K-major, no swizzle:  ((8,m),(T,2k)):((1T,SBO),(1,LBO))
//   K-major, swizzled:    ((8,m),(T,2k)):((S/16*T,SBO),(1,T))
//   MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
//   MN-major, swizzled:   ((T,S/16,m),(8,k)):((1,T,LBO),(S/16*T,SBO))
// followed by the swizzle of the absolute address.
uint32_t wgmmaElementAddress(const SmemDesc& d, bool mnMajor, int mn, int k, int elemBytes);
// (row, col) of accumulator register `reg` of thread `thread` (0..127) of a
// warpgroup in the m64nN D layout.
Coord wgmmaAccElement(int thread, int reg);
// wgmma.mma_async m64nNkK with float D (k = 16: 16-bit operands; k = 32:
// float8 ones): a is 64 x k (row-major), b is k x n (row-major), d[t] the
// N/2 accumulator registers of thread t. D = A * B (+ D where scaleD[t]);
// exact products summed in double, rounded once to float.
void wgmma(int n, int k, const double* a, const double* b, float* const d[128], const int scaleD[128]);
// m64nNk32 with int8 operands and int32 D (each d[t] points at the thread's
// int32 registers): a is 64 x 32, b is 32 x n; exact, wrapping modulo 2^32.
void wgmmaS8(int n, const double* a, const double* b, int32_t* const d[128], const int scaleD[128]);

// mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions:
// mbarrier"): `phase` counts completed phases (its low bit is the phase
// parity); a phase completes when its pending arrivals and its tx-count are
// both 0, then the next phase starts with `count` pending arrivals.
struct MbarState {
  uint32_t count = 0, pending = 0;
  int64_t tx = 0;
  uint64_t phase = 0;
};
enum class MbarEvent { None, Completed, TxOverflow, ArrivalOverflow };
void mbarInit(MbarState& s, uint32_t count);
// mbarrier.arrive[.expect_tx]: raises the tx-count by expectTx, then
// counts one arrival. TxOverflow: the arrivals are complete but more bytes
// arrived than were expected (the tx-count is negative; the phase cannot
// complete). ArrivalOverflow: an arrival on a phase with none pending.
MbarEvent mbarArrive(MbarState& s, uint32_t expectTx);
// complete_tx::bytes of an asynchronous copy.
MbarEvent mbarCompleteTx(MbarState& s, uint32_t bytes);
// mbarrier.try_wait.parity: true once the phase with that parity completed
// (the current phase has the other parity): on a fresh barrier parity 1
// succeeds at once and parity 0 waits for the first phase.
bool mbarParityDone(const MbarState& s, unsigned parity);

}  // namespace tlc::cuda_emu::isa

namespace tlc::cuda {
struct TensorMapSpec;
enum class TmaSwizzle : int;
}

namespace tlc::cuda_emu::isa {

// The swizzle span in bytes of a tensor map's mode (0 without a swizzle).
int swizzleSpan(tlc::cuda::TmaSwizzle s);
// The emulator's 128-byte tensor map (see emulator.h encodeTensorMap):
// false when the bytes are not one (bad magic or version, invalid fields).
bool decodeTensorMap(const void* map128, tlc::cuda::TensorMapSpec* spec);
// Bytes of the map's box (every element, in bounds or not; im2col:
// channels x pixels).
uint64_t tmaBoxBytes(const tlc::cuda::TensorMapSpec& spec);
// The tensor copy of the box at element coordinates coords (innermost
// first): box element i (dense, innermost dimension fastest) goes to byte
// i * elemBytes of the box; inBounds[i] says whether every coordinate is in
// [0, dim), gaddr[i] its global address (meaningful only when in bounds).
void tmaBox(const tlc::cuda::TensorMapSpec& spec, const int* coords, std::vector<uint64_t>* gaddr,
            std::vector<uint8_t>* inBounds);
// The same for an im2col map (spec.im2col) at coords (c, w, h, n) with the
// im2col offsets (w, h): box element p * channels + k is channel coords[0]
// + k of pixel p, pixels walked from (w, h, n) as TensorMapSpec describes,
// each shifted by the offsets; a coordinate outside [0, dim) reads zero.
void tmaIm2colBox(const tlc::cuda::TensorMapSpec& spec, const int* coords, const uint16_t* offsets,
                  std::vector<uint64_t>* gaddr, std::vector<uint8_t>* inBounds);

}  // namespace tlc::cuda_emu::isa
