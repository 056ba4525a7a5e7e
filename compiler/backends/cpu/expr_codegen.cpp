#include "compiler/backends/cpu/expr_codegen.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <limits>
#include <map>

#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/backends/cpu/vector_math.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/support/diagnostics.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc::cpu {

using namespace ir;

ExprEmitter::ExprEmitter(llvm::Module& m, llvm::Function* fn)
    : ctx_(m.getContext()), mod_(m), fn_(fn), b_(llvm::BasicBlock::Create(m.getContext(), "entry", fn)) {}

static bool containsLoad(const Expr& e) {
  if (!e) return false;
  switch (e->kind) {
    case ExprKind::Load: return true;
    case ExprKind::Binary: return containsLoad(as<Binary>(e)->a) || containsLoad(as<Binary>(e)->b);
    case ExprKind::Unary: return containsLoad(as<Unary>(e)->a);
    case ExprKind::Cast: return containsLoad(as<Cast>(e)->value);
    case ExprKind::Select: {
      auto* s = as<Select>(e);
      return containsLoad(s->cond) || containsLoad(s->t) || containsLoad(s->f);
    }
    case ExprKind::Call:
      for (const Expr& a : as<Call>(e)->args)
        if (containsLoad(a)) return true;
      return false;
    default: return false;
  }
}

void ExprEmitter::markParallelAccess(llvm::Instruction* access) {
  if (accessGroups_.empty()) return;
  llvm::MDNode* md = accessGroups_.size() == 1
                         ? accessGroups_[0]
                         : llvm::MDNode::get(ctx_, std::vector<llvm::Metadata*>(accessGroups_.begin(), accessGroups_.end()));
  access->setMetadata(llvm::LLVMContext::MD_access_group, md);
}

llvm::Value* ExprEmitter::emitAddress(const Buffer& buf, const std::vector<Expr>& indices, bool inBounds) {
  auto it = bufs_.find(buf.get());
  TLC_CHECK(it != bufs_.end(), "buffer `" + buf->name + "` is not in scope in the CPU backend");
  llvm::Value* linear = b_.getInt64(0);
  for (size_t d = 0; d < indices.size(); ++d) {
    if (d > 0) {
      llvm::Value* dim = b_.CreateIntCast(emitExpr(buf->shape[d]), b_.getInt64Ty(), isSigned(buf->shape[d]->dtype));
      linear = b_.CreateMul(linear, dim, "", false, inBounds);
    }
    llvm::Value* i = b_.CreateIntCast(emitExpr(indices[d]), b_.getInt64Ty(), isSigned(indices[d]->dtype));
    linear = b_.CreateAdd(linear, i, "", false, inBounds);
  }
  llvm::Type* elem = storageType(ctx_, buf->dtype);
  if (!inBounds) return b_.CreateGEP(elem, it->second, linear, buf->name + ".addr");
  return b_.CreateInBoundsGEP(elem, it->second, linear, buf->name + ".addr");
}

llvm::Value* ExprEmitter::emitExpr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm: {
      if (e->dtype == DType::Bool) return b_.getInt1(as<IntImm>(e)->value != 0);
      return llvm::ConstantInt::get(valueType(ctx_, e->dtype), uint64_t(as<IntImm>(e)->value), true);
    }
    case ExprKind::FloatImm: return llvm::ConstantFP::get(valueType(ctx_, e->dtype), as<FloatImm>(e)->value);
    case ExprKind::VarRef: {
      auto it = vars_.find(as<VarRef>(e)->var.get());
      TLC_CHECK(it != vars_.end(), "variable `" + as<VarRef>(e)->var->name + "` is not in scope in the CPU backend");
      return it->second;
    }
    case ExprKind::Binary: return emitBinary(as<Binary>(e));
    case ExprKind::Unary: {
      auto* u = as<Unary>(e);
      llvm::Value* a = emitExpr(u->a);
      switch (u->op) {
        case UnaryOp::Neg: return isFloat(u->a->dtype) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
        case UnaryOp::Not: return b_.CreateNot(a);
        case UnaryOp::BitNot: return b_.CreateNot(a);
      }
      TLC_ICE("unknown unary op");
    }
    case ExprKind::Cast: {
      auto* c = as<Cast>(e);
      return castValue(b_, emitExpr(c->value), c->value->dtype, c->dtype);
    }
    case ExprKind::Select: return emitSelect(as<Select>(e));
    case ExprKind::Call: return emitCall(as<Call>(e));
    case ExprKind::Load: {
      auto* l = as<Load>(e);
      llvm::Value* ptr = accessAddress(l->buffer, l->indices, TLC_CPU_ACCESS_LOAD, l->loc);
      auto* ld = b_.CreateAlignedLoad(storageType(ctx_, l->buffer->dtype), ptr, llvm::Align(dtypeBytes(l->buffer->dtype)),
                                      l->buffer->name);
      markParallelAccess(ld);
      return loadedToValue(b_, ld, l->buffer->dtype);
    }
  }
  TLC_ICE("unknown expression kind");
}

llvm::Value* ExprEmitter::emitSelect(const Select* s) {
  llvm::Value* c = emitExpr(s->cond);
  if (!containsLoad(s->t) && !containsLoad(s->f)) return b_.CreateSelect(c, emitExpr(s->t), emitExpr(s->f));
  auto* tb = llvm::BasicBlock::Create(ctx_, "sel.t", fn_);
  auto* fb = llvm::BasicBlock::Create(ctx_, "sel.f", fn_);
  auto* end = llvm::BasicBlock::Create(ctx_, "sel.end", fn_);
  b_.CreateCondBr(c, tb, fb);
  b_.SetInsertPoint(tb);
  llvm::Value* tv = emitExpr(s->t);
  llvm::BasicBlock* tEnd = b_.GetInsertBlock();
  b_.CreateBr(end);
  b_.SetInsertPoint(fb);
  llvm::Value* fv = emitExpr(s->f);
  llvm::BasicBlock* fEnd = b_.GetInsertBlock();
  b_.CreateBr(end);
  b_.SetInsertPoint(end);
  llvm::PHINode* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, tEnd);
  phi->addIncoming(fv, fEnd);
  return phi;
}

llvm::Value* ExprEmitter::emitShortCircuit(const Binary* e) {
  bool isAnd = e->op == BinaryOp::And;
  llvm::Value* a = emitExpr(e->a);
  llvm::BasicBlock* start = b_.GetInsertBlock();
  auto* rhs = llvm::BasicBlock::Create(ctx_, isAnd ? "and.rhs" : "or.rhs", fn_);
  auto* end = llvm::BasicBlock::Create(ctx_, isAnd ? "and.end" : "or.end", fn_);
  if (isAnd)
    b_.CreateCondBr(a, rhs, end);
  else
    b_.CreateCondBr(a, end, rhs);
  b_.SetInsertPoint(rhs);
  llvm::Value* bv = emitExpr(e->b);
  llvm::BasicBlock* rhsEnd = b_.GetInsertBlock();
  b_.CreateBr(end);
  b_.SetInsertPoint(end);
  llvm::PHINode* phi = b_.CreatePHI(b_.getInt1Ty(), 2);
  phi->addIncoming(b_.getInt1(!isAnd), start);
  phi->addIncoming(bv, rhsEnd);
  return phi;
}

llvm::Value* ExprEmitter::floorDivMod(llvm::Value* a, llvm::Value* b, DType t, bool wantMod) {
  if (isFloat(t)) {
    llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
    return wantMod ? b_.CreateFSub(a, b_.CreateFMul(q, b)) : q;
  }
  if (!isSigned(t)) return wantMod ? b_.CreateURem(a, b) : b_.CreateUDiv(a, b);
  // Power-of-two constant divisors: shifts and masks.
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(b)) {
    int64_t v = c->getSExtValue();
    if (v > 0 && (v & (v - 1)) == 0) {
      if (wantMod) return b_.CreateAnd(a, llvm::ConstantInt::get(a->getType(), v - 1));
      return b_.CreateAShr(a, llvm::ConstantInt::get(a->getType(), llvm::Log2_64(uint64_t(v))));
    }
  }
  llvm::Value* q = b_.CreateSDiv(a, b);
  llvm::Value* r = b_.CreateSRem(a, b);
  llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  // Adjust when the remainder is non-zero and its sign differs from the divisor's.
  llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  if (wantMod) return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
  return b_.CreateSelect(adjust, b_.CreateSub(q, llvm::ConstantInt::get(a->getType(), 1)), q);
}

// Float min/max as the interpreter computes them: NaN when either operand is
// NaN, else `b < a ? b : a` (min) or `a < b ? b : a` (max), so a tie of
// zeros gives `a`. A compare and select (one vminps/vmaxps, whose NaN case
// returns `a`) and a select for a NaN `b` (isNaNBits): cheaper than
// llvm.minimum/maximum, which also order -0 below +0.
static llvm::Value* floatMinMax(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, bool max) {
  llvm::Value* pick = max ? b.CreateFCmpOLT(x, y) : b.CreateFCmpOLT(y, x);
  llvm::Value* r = b.CreateSelect(pick, y, x);
  return b.CreateSelect(isNaNBits(b, y), y, r);
}

llvm::Value* ExprEmitter::emitBinary(const Binary* e) {
  if ((e->op == BinaryOp::And || e->op == BinaryOp::Or) && containsLoad(e->b)) return emitShortCircuit(e);
  DType t = e->a->dtype;
  llvm::Value* a = emitExpr(e->a);
  llvm::Value* b = emitExpr(e->b);
  bool f = isFloat(t);
  bool s = isSigned(t);
  // int32 / int64 overflow has no defined result (docs/language.md, Integer
  // ranges): no-signed-wrap lets LLVM see consecutive accesses through the
  // sign extensions of index arithmetic. Narrower types wrap.
  bool nsw = s && dtypeBits(t) >= 32;
  switch (e->op) {
    case BinaryOp::Add: return f ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b, "", false, nsw);
    case BinaryOp::Sub: return f ? b_.CreateFSub(a, b) : b_.CreateSub(a, b, "", false, nsw);
    case BinaryOp::Mul: return f ? b_.CreateFMul(a, b) : b_.CreateMul(a, b, "", false, nsw);
    case BinaryOp::Div:
      if (f) return b_.CreateFDiv(a, b);
      return floorDivMod(a, b, t, false);
    case BinaryOp::FloorDiv: return floorDivMod(a, b, t, false);
    case BinaryOp::FloorMod: return floorDivMod(a, b, t, true);
    case BinaryOp::Min:
      if (f) return floatMinMax(b_, a, b, false);
      return b_.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
    case BinaryOp::Max:
      if (f) return floatMinMax(b_, a, b, true);
      return b_.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
    case BinaryOp::Eq: return f ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
    case BinaryOp::Ne: return f ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
    case BinaryOp::Lt: return f ? b_.CreateFCmpOLT(a, b) : (s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b));
    case BinaryOp::Le: return f ? b_.CreateFCmpOLE(a, b) : (s ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b));
    case BinaryOp::Gt: return f ? b_.CreateFCmpOGT(a, b) : (s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b));
    case BinaryOp::Ge: return f ? b_.CreateFCmpOGE(a, b) : (s ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b));
    case BinaryOp::And:
    case BinaryOp::BitAnd: return b_.CreateAnd(a, b);
    case BinaryOp::Or:
    case BinaryOp::BitOr: return b_.CreateOr(a, b);
    case BinaryOp::BitXor: return b_.CreateXor(a, b);
    case BinaryOp::Shl: return b_.CreateShl(a, b);
    case BinaryOp::Shr: return s ? b_.CreateAShr(a, b) : b_.CreateLShr(a, b);
  }
  TLC_ICE("unknown binary op");
}

// Float math that vector_math.h does not provide, and float64 math: LLVM
// intrinsics where they exist (the vectorizer maps sin, cos, pow to libmvec),
// else the C library.
static llvm::Value* mathOp(llvm::IRBuilder<>& b, const std::string& name, std::vector<llvm::Value*> args) {
  static const std::map<std::string, llvm::Intrinsic::ID> intrinsics = {
      {"exp", llvm::Intrinsic::exp},     {"exp2", llvm::Intrinsic::exp2},   {"exp10", llvm::Intrinsic::exp10},
      {"log", llvm::Intrinsic::log},     {"log2", llvm::Intrinsic::log2},   {"log10", llvm::Intrinsic::log10},
      {"sqrt", llvm::Intrinsic::sqrt},   {"abs", llvm::Intrinsic::fabs},    {"fabs", llvm::Intrinsic::fabs},
      {"sin", llvm::Intrinsic::sin},     {"cos", llvm::Intrinsic::cos},     {"tan", llvm::Intrinsic::tan},
      {"floor", llvm::Intrinsic::floor}, {"ceil", llvm::Intrinsic::ceil},   {"round", llvm::Intrinsic::roundeven},
      {"trunc", llvm::Intrinsic::trunc}, {"pow", llvm::Intrinsic::pow},     {"fma", llvm::Intrinsic::fma},
  };
  if (name == "min" || name == "max") return floatMinMax(b, args[0], args[1], name == "max");
  llvm::Type* t = args[0]->getType();
  auto it = intrinsics.find(name);
  if (it != intrinsics.end()) return b.CreateIntrinsic(it->second, {t}, args);
  std::string libm = name + (t->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> types(args.size(), t);
  llvm::Module* m = b.GetInsertBlock()->getModule();
  llvm::FunctionCallee fc = m->getOrInsertFunction(libm, llvm::FunctionType::get(t, types, false));
  auto* call = b.CreateCall(fc, args);
  call->setDoesNotThrow();
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* ExprEmitter::emitCall(const Call* c) {
  const std::string& n = c->callee;
  DType rt = c->dtype;
  if (n == cpu_intrinsics::kMaxKeep || n == cpu_intrinsics::kMinKeep) {
    llvm::Value* a = emitExpr(c->args[0]);
    llvm::Value* b = emitExpr(c->args[1]);
    llvm::Value* takes = n == cpu_intrinsics::kMaxKeep ? b_.CreateFCmpOLT(a, b) : b_.CreateFCmpOLT(b, a);
    return b_.CreateSelect(takes, b, a);
  }
  TLC_CHECK(n.rfind("cpu.", 0) != 0, "intrinsic `" + n + "` used as a value");
  if (n == "if_then_else") {
    auto sel = makeSelect(c->args[0], c->args[1], c->args[2], c->loc);
    return emitSelect(as<Select>(sel));
  }
  if (n == "infinity" || n == "ninf") {
    double inf = std::numeric_limits<double>::infinity();
    return llvm::ConstantFP::get(valueType(ctx_, rt), n == "ninf" ? -inf : inf);
  }
  if (n == "cast") return castValue(b_, emitExpr(c->args[0]), c->args[0]->dtype, rt);
  if (n == "reinterpret" || n == "unpack_int4" || n == "unpack_uint4" || n == "unpack_fp4") return emitBitsCall(c);

  std::vector<llvm::Value*> args;
  for (const Expr& a : c->args) args.push_back(emitExpr(a));
  DType at = c->args.empty() ? rt : c->args[0]->dtype;

  if (n == "isnan" || n == "isinf" || n == "isfinite") {
    if (!isFloat(at)) return b_.getInt1(n == "isfinite");
    llvm::Value* x = args[0];
    if (n == "isnan") return isNaNBits(b_, x);
    llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* inf = llvm::ConstantFP::getInfinity(x->getType());
    return n == "isinf" ? b_.CreateFCmpOEQ(ax, inf) : b_.CreateFCmpOLT(ax, inf);
  }
  if (!isFloat(rt) && !isFloat(at)) {
    // Integer builtins.
    llvm::Value* a = args.empty() ? nullptr : b_.CreateIntCast(args[0], valueType(ctx_, rt), isSigned(at));
    bool s = isSigned(rt);
    if (n == "abs") return s ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse()) : a;
    llvm::Value* bb = args.size() > 1 ? b_.CreateIntCast(args[1], valueType(ctx_, rt), isSigned(c->args[1]->dtype)) : nullptr;
    if (n == "min") return b_.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, bb);
    if (n == "max") return b_.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, bb);
    if (n == "clamp") {
      llvm::Value* hi = b_.CreateIntCast(args[2], valueType(ctx_, rt), isSigned(c->args[2]->dtype));
      llvm::Value* lo = b_.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, bb);
      return b_.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, lo, hi);
    }
    if (n == "ceildiv") {
      // ceil(a / b) = -floor(-a / b)
      llvm::Value* q = floorDivMod(b_.CreateNeg(a), bb, rt, false);
      return b_.CreateNeg(q);
    }
    TLC_ICE("integer builtin `" + n + "` is not supported by the CPU backend");
  }

  // Float builtins: compute in float32 (float64 for double), round to the result type.
  llvm::Type* ct = (rt == DType::Float64 || at == DType::Float64) ? b_.getDoubleTy() : b_.getFloatTy();
  DType ctd = ct->isDoubleTy() ? DType::Float64 : DType::Float32;
  for (size_t i = 0; i < args.size(); ++i) args[i] = castValue(b_, args[i], c->args[i]->dtype, ctd);
  // float32 math of vector_math.h (vectorizable, no libm call) first.
  llvm::Value* r = ct->isFloatTy() ? emitVectorMath(b_, n, args) : nullptr;
  if (r) return castValue(b_, r, ctd, rt);
  if (n == "rsqrt") {
    r = b_.CreateFDiv(llvm::ConstantFP::get(ct, 1.0), mathOp(b_, "sqrt", args));
  } else if (n == "sigmoid") {
    llvm::Value* e = mathOp(b_, "exp", {b_.CreateFNeg(args[0])});
    r = b_.CreateFDiv(llvm::ConstantFP::get(ct, 1.0), b_.CreateFAdd(llvm::ConstantFP::get(ct, 1.0), e));
  } else if (n == "clamp") {
    r = mathOp(b_, "min", {mathOp(b_, "max", {args[0], args[1]}), args[2]});
  } else if (n == "ceildiv") {
    r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, b_.CreateFDiv(args[0], args[1]));
  } else {
    r = mathOp(b_, n, args);
  }
  return castValue(b_, r, ctd, rt);
}

// T.reinterpret and the packed 4-bit readers, in integer operations that
// the loop vectorizer widens (no table lookups, no calls).
llvm::Value* ExprEmitter::emitBitsCall(const Call* c) {
  const std::string& n = c->callee;
  DType rt = c->dtype, at = c->args[0]->dtype;
  llvm::Value* x = emitExpr(c->args[0]);
  if (n == "reinterpret") {
    // Through the stored forms: float8 values are held as float32 and stored as bytes.
    llvm::Value* bits = b_.CreateBitCast(valueToStored(b_, x, at), storageType(ctx_, rt));
    return loadedToValue(b_, bits, rt);
  }
  // The nibble `index mod (bits / 4)` of the word, as an i32 in 0..15.
  llvm::Type* wt = x->getType();
  int nibbles = dtypeBits(at) / 4;
  llvm::Value* index = b_.CreateIntCast(emitExpr(c->args[1]), wt, isSigned(c->args[1]->dtype));
  llvm::Value* shift = b_.CreateShl(b_.CreateAnd(index, llvm::ConstantInt::get(wt, nibbles - 1)), llvm::ConstantInt::get(wt, 2));
  llvm::Value* nib = b_.CreateAnd(b_.CreateLShr(x, shift), llvm::ConstantInt::get(wt, 15));
  nib = b_.CreateIntCast(nib, b_.getInt32Ty(), false);
  if (n == "unpack_uint4") return castValue(b_, nib, DType::Int32, rt);
  if (n == "unpack_int4") return castValue(b_, b_.CreateAShr(b_.CreateShl(nib, 28), 28), DType::Int32, rt);
  // float4 e2m1 -> float32 bits: magnitudes 0 and 0.5 (codes 0 and 1) are 0
  // and the bits of 0.5; the others move the exponent and mantissa bits to
  // the top of the float's mantissa and add the exponent of 0.5.
  llvm::Value* em = b_.CreateAnd(nib, 7);
  llvm::Value* half = b_.getInt32(0x3f000000);
  llvm::Value* small = b_.CreateMul(em, half);
  llvm::Value* large = b_.CreateAdd(b_.CreateShl(em, 22), half);
  llvm::Value* mag = b_.CreateSelect(b_.CreateICmpULT(em, b_.getInt32(2)), small, large);
  llvm::Value* bits = b_.CreateOr(mag, b_.CreateShl(b_.CreateAnd(nib, 8), 28));
  return castValue(b_, b_.CreateBitCast(bits, b_.getFloatTy()), DType::Float32, rt);
}

}  // namespace tlc::cpu
