// T.print on the CPU: one printf call per line, with the format of
// compiler/ir/print_format.h (stdio locks the stream for the call, so the
// lines of blocks running on different threads never interleave). Values are
// converted through IR casts (every dtype widens exactly to double or 64-bit
// integers); a NaN is passed as the positive quiet NaN, which prints `nan`.
#include <llvm/IR/Module.h>

#include <cmath>

#include "compiler/backends/cpu/expr_codegen.h"
#include "compiler/ir/print_format.h"
#include "compiler/support/diagnostics.h"

namespace tlc::cpu {

using namespace ir;

void ExprEmitter::emitPrint(const PrintStmt* p) {
  TLC_CHECK(p->value, "the CPU backend got a print of a whole buffer: run lower-buffer-prints first");
  std::vector<llvm::Value*> args;
  for (const VarNode* v : blockVars_) args.push_back(b_.CreateIntCast(vars_.at(v), b_.getInt64Ty(), isSigned(v->dtype)));
  auto integer = [&](const Expr& e) { args.push_back(emitExpr(makeCast(DType::Int64, e))); };
  for (const PrintTag& t : p->iteration) integer(t.value);
  for (const Expr& i : p->index) integer(i);
  DType t = p->value->dtype;
  switch (printArgKind(t)) {
    case PrintArgKind::Int64: integer(p->value); break;
    case PrintArgKind::UInt64: args.push_back(emitExpr(makeCast(DType::UInt64, p->value))); break;
    case PrintArgKind::Double: {
      llvm::Value* x = emitExpr(makeCast(DType::Float64, p->value));
      args.push_back(b_.CreateSelect(b_.CreateFCmpUNO(x, x), llvm::ConstantFP::get(b_.getDoubleTy(), NAN), x));
      break;
    }
    case PrintArgKind::Bool:
      args.push_back(b_.CreateSelect(emitExpr(p->value), constantString("True"), constantString("False")));
      break;
  }
  PrintLine line = printLine(*p, blockVars_.size(), false, p->element, p->index.size(), t);
  args.insert(args.begin(), constantString(line.format()));
  llvm::FunctionCallee printf = mod_.getOrInsertFunction(
      "printf", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, /*isVarArg=*/true));
  b_.CreateCall(printf, args);
}

}  // namespace tlc::cpu
