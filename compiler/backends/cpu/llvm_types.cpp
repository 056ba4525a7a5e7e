#include "compiler/backends/cpu/llvm_types.h"

#include <llvm/IR/Module.h>

namespace tlc::cpu {

bool isFloat8(DType t) { return t == DType::Float8E4M3 || t == DType::Float8E5M2; }

llvm::Type* storageType(llvm::LLVMContext& ctx, DType t) {
  switch (t) {
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8:
    case DType::Float8E4M3:
    case DType::Float8E5M2: return llvm::Type::getInt8Ty(ctx);
    case DType::Int16:
    case DType::UInt16: return llvm::Type::getInt16Ty(ctx);
    case DType::Int32:
    case DType::UInt32: return llvm::Type::getInt32Ty(ctx);
    case DType::Int64:
    case DType::UInt64: return llvm::Type::getInt64Ty(ctx);
    case DType::Float16: return llvm::Type::getHalfTy(ctx);
    case DType::BFloat16: return llvm::Type::getBFloatTy(ctx);
    case DType::Float32: return llvm::Type::getFloatTy(ctx);
    case DType::Float64: return llvm::Type::getDoubleTy(ctx);
  }
  return llvm::Type::getInt8Ty(ctx);
}

llvm::Type* valueType(llvm::LLVMContext& ctx, DType t) {
  if (t == DType::Bool) return llvm::Type::getInt1Ty(ctx);
  if (isFloat8(t)) return llvm::Type::getFloatTy(ctx);
  return storageType(ctx, t);
}

static llvm::FunctionCallee runtimeFn(llvm::IRBuilder<>& b, const char* name, llvm::Type* ret, llvm::Type* arg) {
  llvm::Module* m = b.GetInsertBlock()->getModule();
  auto* fty = llvm::FunctionType::get(ret, {arg}, false);
  llvm::FunctionCallee fc = m->getOrInsertFunction(name, fty);
  if (auto* f = llvm::dyn_cast<llvm::Function>(fc.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
  }
  return fc;
}

static llvm::Value* encodeFloat8(llvm::IRBuilder<>& b, llvm::Value* f32, DType t) {
  const char* name = t == DType::Float8E4M3 ? "tlc_cpu_f32_to_f8e4m3" : "tlc_cpu_f32_to_f8e5m2";
  return b.CreateCall(runtimeFn(b, name, b.getInt8Ty(), b.getFloatTy()), {f32});
}

static llvm::Value* decodeFloat8(llvm::IRBuilder<>& b, llvm::Value* i8, DType t) {
  const char* name = t == DType::Float8E4M3 ? "tlc_cpu_f8e4m3_to_f32" : "tlc_cpu_f8e5m2_to_f32";
  return b.CreateCall(runtimeFn(b, name, b.getFloatTy(), b.getInt8Ty()), {i8});
}

llvm::Value* loadedToValue(llvm::IRBuilder<>& b, llvm::Value* stored, DType t) {
  if (t == DType::Bool) return b.CreateICmpNE(stored, b.getInt8(0));
  if (isFloat8(t)) return decodeFloat8(b, stored, t);
  return stored;
}

llvm::Value* valueToStored(llvm::IRBuilder<>& b, llvm::Value* v, DType t) {
  if (t == DType::Bool) return b.CreateZExt(v, b.getInt8Ty());
  if (isFloat8(t)) return encodeFloat8(b, v, t);
  return v;
}

// The same shape (scalar or vector) as `like`, with elements of type `elem`.
static llvm::Type* sameShape(llvm::Type* like, llvm::Type* elem) {
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(like)) return llvm::VectorType::get(elem, vt->getElementCount());
  return elem;
}

static llvm::Value* splat(llvm::IRBuilder<>& b, llvm::Type* ty, uint64_t c) {
  return llvm::ConstantInt::get(ty, c);  // splats for vector types
}

// float/double (scalar or vector) -> bfloat, rounded to nearest even, in
// integer arithmetic. LLVM lowers `fptrunc ... to bfloat` to a libcall
// (__truncsfbf2) on x86 without AVX-512 BF16, which older C runtimes lack and
// the JIT cannot resolve; this sequence needs nothing and vectorizes. A double
// is first narrowed to float rounding to odd (toward zero, then the lowest bit
// set when inexact), so that the second rounding gives the correctly rounded
// bfloat of the double.
llvm::Value* truncToBFloat(llvm::IRBuilder<>& b, llvm::Value* v) {
  llvm::Type* ty = v->getType();
  llvm::Type* f32 = sameShape(ty, b.getFloatTy());
  llvm::Type* i32 = sameShape(ty, b.getInt32Ty());
  llvm::Value* bits;
  if (ty->getScalarType()->isDoubleTy()) {
    llvm::Value* near = b.CreateFPTrunc(v, f32);
    llvm::Value* back = b.CreateFPExt(near, ty);
    llvm::Value* nearBits = b.CreateBitCast(near, i32);
    // |near| > |v|: step one unit toward zero (the bits of a float are sign-magnitude).
    llvm::Value* absV = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
    llvm::Value* absBack = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back);
    llvm::Value* tooBig = b.CreateFCmpOGT(absBack, absV);
    llvm::Value* towardZero = b.CreateSelect(tooBig, b.CreateSub(nearBits, splat(b, i32, 1)), nearBits);
    llvm::Value* inexact = b.CreateZExt(b.CreateFCmpONE(back, v), i32);
    bits = b.CreateOr(towardZero, inexact);
    // NaN stays NaN through the float's bits.
    bits = b.CreateSelect(isNaNBits(b, v), nearBits, bits);
  } else {
    bits = b.CreateBitCast(ty->getScalarType()->isFloatTy() ? v : b.CreateFPExt(v, f32), i32);
  }
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, splat(b, i32, 16)), splat(b, i32, 1));
  llvm::Value* rounded = b.CreateAdd(bits, b.CreateAdd(lsb, splat(b, i32, 0x7fff)));
  // A NaN keeps its sign and top payload bits and stays quiet.
  llvm::Value* isNaN = b.CreateICmpUGT(b.CreateAnd(bits, splat(b, i32, 0x7fffffff)), splat(b, i32, 0x7f800000));
  llvm::Value* result = b.CreateSelect(isNaN, b.CreateOr(bits, splat(b, i32, 0x00400000)), rounded);
  llvm::Type* i16 = sameShape(ty, b.getInt16Ty());
  return b.CreateBitCast(b.CreateTrunc(b.CreateLShr(result, splat(b, i32, 16)), i16), sameShape(ty, b.getBFloatTy()));
}

void defineBFloatLibcalls(llvm::Module& m) {
  llvm::LLVMContext& ctx = m.getContext();
  for (auto [name, arg] : {std::pair{"__truncsfbf2", llvm::Type::getFloatTy(ctx)},
                           std::pair{"__truncdfbf2", llvm::Type::getDoubleTy(ctx)}}) {
    if (llvm::Function* existing = m.getFunction(name); existing && !existing->isDeclaration()) continue;
    auto* fty = llvm::FunctionType::get(llvm::Type::getBFloatTy(ctx), {arg}, false);
    auto* f = llvm::cast<llvm::Function>(m.getOrInsertFunction(name, fty).getCallee());
    f->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
    f->setVisibility(llvm::GlobalValue::HiddenVisibility);
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    b.CreateRet(truncToBFloat(b, f->getArg(0)));
  }
}

// Float conversions between LLVM float types (half <-> bfloat via float).
static llvm::Value* convertFloat(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Type* to) {
  llvm::Type* from = v->getType();
  if (from == to) return v;
  if (to->getScalarType()->isBFloatTy()) return truncToBFloat(b, v);
  if (from->getScalarType()->isBFloatTy() && to->getScalarType()->isHalfTy())
    v = b.CreateFPExt(v, sameShape(from, b.getFloatTy()));
  if (v->getType() == to) return v;
  if (v->getType()->getScalarSizeInBits() < to->getScalarSizeInBits()) return b.CreateFPExt(v, to);
  return b.CreateFPTrunc(v, to);
}

llvm::Value* castValue(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Type* vt = valueType(ctx, to);
  if (to == DType::Bool) {
    if (isFloat(from)) return b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == DType::Bool) {
    if (isFloat(to)) return b.CreateUIToFP(v, vt);
    return b.CreateZExt(v, vt);
  }
  if (isInteger(from) && isInteger(to)) return b.CreateIntCast(v, vt, isSigned(from));
  if (isInteger(from) && isFloat(to)) {
    llvm::Value* f = isSigned(from) ? b.CreateSIToFP(v, vt) : b.CreateUIToFP(v, vt);
    if (isFloat8(to)) return decodeFloat8(b, encodeFloat8(b, f, to), to);
    return f;
  }
  if (isFloat(from) && isInteger(to)) {
    llvm::Intrinsic::ID id = isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    llvm::Value* x = v;
    // Half and bfloat saturating conversions go through float.
    if (x->getType()->isHalfTy() || x->getType()->isBFloatTy()) x = b.CreateFPExt(x, b.getFloatTy());
    return b.CreateIntrinsic(id, {vt, x->getType()}, {x});
  }
  // float -> float
  if (isFloat8(to)) {
    llvm::Value* f = convertFloat(b, v, b.getFloatTy());
    return decodeFloat8(b, encodeFloat8(b, f, to), to);
  }
  return convertFloat(b, v, vt);
}

llvm::Value* isNaNBits(llvm::IRBuilderBase& b, llvm::Value* v) {
  llvm::Type* t = v->getType();
  llvm::Type* e = t->getScalarType();
  unsigned bits = e->getPrimitiveSizeInBits();
  uint64_t inf = e->isHalfTy() ? 0x7c00 : e->isBFloatTy() ? 0x7f80 : bits == 32 ? 0x7f800000u : 0x7ff0000000000000ull;
  llvm::Type* it = b.getIntNTy(bits);
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(t)) it = llvm::VectorType::get(it, vt->getElementCount());
  llvm::Value* magnitude = b.CreateAnd(b.CreateBitCast(v, it), llvm::ConstantInt::get(it, (uint64_t(1) << (bits - 1)) - 1));
  return b.CreateICmpUGT(magnitude, llvm::ConstantInt::get(it, inf));
}

}  // namespace tlc::cpu
