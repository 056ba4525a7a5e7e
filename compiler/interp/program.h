// The interpreter's executable form of a PrimFunc.
//
// compileProgram() resolves every variable and buffer of the function to a
// numbered slot and checks, once and statically, what the tree walk would
// otherwise check at every step: each variable is used inside its binding's
// scope, each buffer inside its Alloc's scope (or is a parameter), index
// counts match buffer ranks, callees are known builtins, kernels do not nest.
// Problems are reported as located diagnostics; compileProgram then returns
// nullopt. A compiled program keeps pointers into the IR it came from, which
// must outlive it.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "compiler/interp/builtins.h"
#include "compiler/interp/value.h"
#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::interp {

struct CExpr {
  ir::ExprKind kind;
  DType dtype;
  int op = 0;     // BinaryOp, UnaryOp or Builtin
  int slot = -1;  // VarRef: variable slot; Load: buffer slot
  Value imm{};    // IntImm / FloatImm
  std::vector<const CExpr*> kids;  // operands, or Load indices
  const ir::ExprNode* node = nullptr;
};

struct CRange {
  const CExpr* min;
  const CExpr* extent;
};

struct CRegion {
  int slot;
  std::vector<CRange> ranges;
  SourceLoc loc;
};

struct CStmt {
  ir::StmtKind kind;
  const ir::StmtNode* node = nullptr;
  std::vector<const CStmt*> body;   // Seq: children; For/Let/Kernel: {body}; If: {then, else-or-null};
                                    // WarpSpecialize: {producer, consumer}
  std::vector<const CExpr*> exprs;  // Kernel: grid; For: {min, extent}; Store: indices then value;
                                    // Atomic: indices, value, then the previous value's indices;
                                    // Let: {value}; If: {cond}; Evaluate: {value}; Fill: {value};
                                    // Print: value (if any), iteration values, element indices;
                                    // Version: {version}; a copy on a barrier: {barrier index};
                                    // BarrierArrive: {index, bytes (if any)}; BarrierWait: {index, parity}
  std::vector<int> vars;            // Kernel: block variables; For/Let: {var}; Version: buffer slots;
                                    // Atomic: {the previous value's buffer slot} or {}
  int slot = -1;                    // Alloc/Store/Atomic/Print of a buffer: buffer slot; the barrier's
                                    // slot of BarrierArrive/BarrierWait and of a copy on a barrier
  std::vector<CRegion> regions;     // Copy: {src, dst}; Gemm: {a, b, c}; Fill: {dst}; Reduce: {src, dst}
};

struct BufferSlot {
  const ir::BufferNode* buffer;
  int paramIndex = -1;                 // >= 0 for tensor parameters
  std::vector<const CExpr*> shape;     // compiled shape expressions
  int64_t versions = 1;                // allocations: AllocStmt::versions
  int64_t arrivals = 0;                // barrier allocations: AllocStmt::arrivals
};

struct VarSlot {
  const ir::VarNode* var;
};

struct Program {
  const ir::PrimFunc* func = nullptr;
  std::deque<CExpr> exprs;
  std::deque<CStmt> stmts;
  std::vector<BufferSlot> buffers;
  std::vector<VarSlot> vars;
  const CStmt* body = nullptr;
  // Per parameter: its variable slot (scalars) or buffer slot (tensors).
  std::vector<int> paramSlots;
  std::vector<int> shapeVarSlots;  // parallel to func->shapeVars
};

std::optional<Program> compileProgram(const ir::PrimFunc& func, DiagnosticEngine& diags);

}  // namespace tlc::interp
