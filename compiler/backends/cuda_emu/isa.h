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

#include "runtime/cuda_emu/emu_abi.h"

namespace tlc::cuda_emu::isa {

constexpr int kWarpSize = 32;

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
struct Wavefronts {
  int actual = 0;
  int ideal = 0;
};
Wavefronts sharedWavefronts(const uint64_t addr[kWarpSize], uint32_t activeMask, int bytes);

}  // namespace tlc::cuda_emu::isa
