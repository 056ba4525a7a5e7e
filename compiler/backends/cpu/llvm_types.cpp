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

// Float conversions between LLVM float types (half <-> bfloat via float).
static llvm::Value* convertFloat(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Type* to) {
  llvm::Type* from = v->getType();
  if (from == to) return v;
  if ((from->isHalfTy() && to->isBFloatTy()) || (from->isBFloatTy() && to->isHalfTy()))
    v = b.CreateFPExt(v, b.getFloatTy());
  if (v->getType() == to) return v;
  if (v->getType()->getPrimitiveSizeInBits() < to->getPrimitiveSizeInBits()) return b.CreateFPExt(v, to);
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

}  // namespace tlc::cpu
