#include "compiler/backends/cpu/gemm_microkernel.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string>
#include <vector>

#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/backends/cpu/tile_transpose.h"

namespace tlc::cpu {

namespace {

using llvm::Value;

class GemmGenerator {
 public:
  GemmGenerator(llvm::IRBuilder<>& b, const GemmOperands& o, const CpuTarget& target)
      : b_(b), o_(o), ctx_(b.getContext()), fn_(b.GetInsertBlock()->getParent()) {
    DType c = o.c;
    if (c == DType::Float64 || o.a == DType::Float64 || o.b == DType::Float64) {
      compute_ = DType::Float64;
    } else if (isFloat(c) || isFloat(o.a) || isFloat(o.b)) {
      compute_ = DType::Float32;
    } else {
      compute_ = dtypeBits(c) == 64 ? DType::Int64 : DType::Int32;
    }
    T_ = valueType(ctx_, compute_);
    vl_ = std::max(1, target.vectors.vectorBits / dtypeBits(compute_));
    nrv_ = 2;
    nr_ = vl_ * nrv_;
    // Accumulators + B vectors + one broadcast must fit in the registers:
    // 8 x 2 with 32 registers (measured as fast as 12 x 2, 6 x 4 and 4 x 4 on
    // AVX-512, with the fewest registers), 6 x 2 with 16.
    mr_ = target.vectors.vectorRegs >= 32 ? 8 : 6;
    VT_ = llvm::FixedVectorType::get(T_, unsigned(vl_));
  }

  void run() {
    Value* zero = b_.getInt64(0);
    // Whether B can be read in place: unit column stride and already in the compute type.
    auto* sBj = llvm::dyn_cast<llvm::ConstantInt>(o_.sBj);
    packB_ = !(sBj && sBj->getSExtValue() == 1 && o_.b == compute_);
    if (packB_) {
      llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      auto* buf = entry.CreateAlloca(llvm::ArrayType::get(T_, uint64_t(kc_ * nr_)), nullptr, "gemm.bpack");
      buf->setAlignment(llvm::Align(64));
      bpack_ = buf;
    }
    Value* kcConst = b_.getInt64(kc_);
    countedLoop(zero, o_.K, kcConst, "gemm.k0", [&](Value* k0) {
      Value* kc = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, kcConst, b_.CreateSub(o_.K, k0));
      Value* nrC = b_.getInt64(nr_);
      Value* nFull = b_.CreateMul(b_.CreateSDiv(o_.N, nrC), nrC);
      countedLoop(zero, nFull, nrC, "gemm.j0", [&](Value* j0) { panel(k0, kc, j0, false); });
      Value* nRem = b_.CreateSub(o_.N, nFull);
      ifNonZero(nRem, "gemm.ntail", [&] { panel(k0, kc, nFull, true); });
    });
  }

 private:
  // Loop metadata: explicit vector code is not vectorized again, and unrolling
  // is bounded (a fully unrolled k loop of a 128x128x32 tile would multiply
  // compile time for no gain).
  llvm::MDNode* loopMetadata(int unrollCount) {
    auto flag = [&](const char* name, llvm::Metadata* v) {
      return llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, name), v});
    };
    std::vector<llvm::Metadata*> ops = {nullptr};
    ops.push_back(flag("llvm.loop.vectorize.width", llvm::ConstantAsMetadata::get(b_.getInt32(1))));
    if (unrollCount <= 1)
      ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
    else
      ops.push_back(flag("llvm.loop.unroll.count", llvm::ConstantAsMetadata::get(b_.getInt32(uint32_t(unrollCount)))));
    llvm::MDNode* md = llvm::MDNode::getDistinct(ctx_, ops);
    md->replaceOperandWith(0, md);
    return md;
  }

  // for (iv = lo; iv < hi; iv += step) body(iv)
  void countedLoop(Value* lo, Value* hi, Value* step, const char* name, const std::function<void(Value*)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, std::string(name) + ".loop", fn_);
    auto* bodyBB = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".end", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), bodyBB, exit);
    b_.SetInsertPoint(bodyBB);
    body(iv);
    Value* next = b_.CreateAdd(iv, step, "", false, true);
    auto* latch = b_.CreateBr(header);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loopMetadata(1));
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.SetInsertPoint(exit);
  }

  // if (v != 0) body(), skipped entirely when v is the constant 0.
  void ifNonZero(Value* v, const char* name, const std::function<void()>& body) {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      if (c->isZero()) return;
      body();
      return;
    }
    auto* then = llvm::BasicBlock::Create(ctx_, std::string(name), fn_);
    auto* end = llvm::BasicBlock::Create(ctx_, std::string(name) + ".end", fn_);
    b_.CreateCondBr(b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0)), then, end);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(end);
    b_.SetInsertPoint(end);
  }

  Value* toCompute(Value* v, DType from) {
    if (from == compute_) return v;
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
      llvm::Type* to = llvm::FixedVectorType::get(T_, vt->getNumElements());
      if (isFloat(from) && isFloat(compute_)) return b_.CreateFPExt(v, to);
      if (isFloat(compute_)) return isSigned(from) ? b_.CreateSIToFP(v, to) : b_.CreateUIToFP(v, to);
      return b_.CreateIntCast(v, to, isSigned(from));
    }
    return castValue(b_, loadedToValue(b_, v, from), from, compute_);
  }

  Value* fromCompute(Value* v, DType to) {
    if (to == compute_) return v;
    auto* vt = llvm::cast<llvm::FixedVectorType>(v->getType());
    llvm::Type* dst = llvm::FixedVectorType::get(storageType(ctx_, to), vt->getNumElements());
    if (to == DType::BFloat16 && isFloat(compute_)) return truncToBFloat(b_, v);
    if (isFloat(to) && isFloat(compute_)) return b_.CreateFPTrunc(v, dst);
    return b_.CreateIntCast(v, dst, isSigned(compute_));
  }

  Value* elementPtr(Value* base, DType t, Value* index) {
    return b_.CreateInBoundsGEP(storageType(ctx_, t), base, index);
  }

  // Lanes j0 + v * VL + lane < N.
  Value* columnMask(Value* j0, int v) {
    std::vector<llvm::Constant*> lanes;
    for (int l = 0; l < vl_; ++l) lanes.push_back(b_.getInt64(uint64_t(v * vl_ + l)));
    Value* cols = b_.CreateAdd(b_.CreateVectorSplat(unsigned(vl_), j0), llvm::ConstantVector::get(lanes));
    return b_.CreateICmpSLT(cols, b_.CreateVectorSplat(unsigned(vl_), o_.N));
  }

  Value* loadVector(Value* ptr, DType t, Value* mask) {
    llvm::Type* vt = llvm::FixedVectorType::get(storageType(ctx_, t), unsigned(vl_));
    llvm::Align align(dtypeBytes(t));
    if (!mask) return b_.CreateAlignedLoad(vt, ptr, align);
    return b_.CreateMaskedLoad(vt, ptr, align, mask, llvm::Constant::getNullValue(vt));
  }

  void storeVector(Value* v, Value* ptr, DType t, Value* mask) {
    llvm::Align align(dtypeBytes(t));
    if (!mask) {
      b_.CreateAlignedStore(v, ptr, align);
    } else {
      b_.CreateMaskedStore(v, ptr, align, mask);
    }
  }

  // Packs B[k0 .. k0+kc) x [j0 .. j0+NR) into bpack_ (kc rows of NR, zero padded, compute type).
  // Contiguous rows: masked vector loads converted as vectors. Transposed B
  // (unit stride along k): VL x VL blocks through registers for the whole
  // blocks of k of a full panel (tile_transpose.h), then a scalar loop for
  // the rest, which is also the loop for other strides. The code stays small.
  void packPanel(Value* k0, Value* kc, Value* j0, bool masked) {
    Value* zero = b_.getInt64(0);
    auto* unit = llvm::dyn_cast<llvm::ConstantInt>(o_.sBj);
    bool plainType = !isFloat8(o_.b) && o_.b != DType::Bool;
    bool contiguous = unit && unit->getSExtValue() == 1 && plainType;
    auto* unitK = llvm::dyn_cast<llvm::ConstantInt>(o_.sBk);
    Value* kDone = zero;
    if (!contiguous && !masked && plainType && unitK && unitK->getSExtValue() == 1 && vl_ >= 4 && vl_ <= 16) {
      Value* vlC = b_.getInt64(vl_);
      kDone = b_.CreateMul(b_.CreateUDiv(kc, vlC), vlC);
      countedLoop(zero, kDone, vlC, "gemm.packkt", [&](Value* kk) {
        for (int v = 0; v < nrv_; ++v) {
          std::vector<Value*> rows;
          for (int r = 0; r < vl_; ++r) {
            // Row r of the block: column j0 + v * VL + r of op(B), VL consecutive k.
            Value* col = b_.CreateAdd(j0, b_.getInt64(v * vl_ + r));
            Value* idx = b_.CreateAdd(b_.CreateAdd(k0, kk), b_.CreateMul(col, o_.sBj));
            rows.push_back(toCompute(loadVector(elementPtr(o_.B, o_.b, idx), o_.b, nullptr), o_.b));
          }
          std::vector<Value*> cols = transposeInRegisters(b_, rows);
          for (int c = 0; c < vl_; ++c) {
            Value* dstRow = b_.CreateMul(b_.CreateAdd(kk, b_.getInt64(c)), b_.getInt64(nr_));
            Value* dst = b_.CreateInBoundsGEP(T_, bpack_, b_.CreateAdd(dstRow, b_.getInt64(v * vl_)));
            b_.CreateAlignedStore(cols[size_t(c)], dst, llvm::Align(dtypeBytes(compute_)));
          }
        }
      });
    }
    countedLoop(kDone, kc, b_.getInt64(1), "gemm.packk", [&](Value* kk) {
      Value* rowStart = b_.CreateMul(b_.CreateAdd(k0, kk), o_.sBk);
      Value* dstRow = b_.CreateMul(kk, b_.getInt64(nr_));
      if (contiguous) {
        for (int v = 0; v < nrv_; ++v) {
          Value* src = elementPtr(o_.B, o_.b, b_.CreateAdd(rowStart, b_.CreateAdd(j0, b_.getInt64(v * vl_))));
          Value* vec = toCompute(loadVector(src, o_.b, columnMask(j0, v)), o_.b);
          Value* dst = b_.CreateInBoundsGEP(T_, bpack_, b_.CreateAdd(dstRow, b_.getInt64(v * vl_)));
          b_.CreateAlignedStore(vec, dst, llvm::Align(dtypeBytes(compute_)));
        }
        return;
      }
      countedLoop(zero, b_.getInt64(nr_), b_.getInt64(1), "gemm.packj", [&](Value* jj) {
        Value* j = b_.CreateAdd(j0, jj);
        Value* inside = b_.CreateICmpSLT(j, o_.N);
        // Clamp the column so the load stays inside B; the select zeroes it.
        Value* jc = b_.CreateSelect(inside, j, b_.getInt64(0));
        Value* idx = b_.CreateAdd(rowStart, b_.CreateMul(jc, o_.sBj));
        Value* raw = b_.CreateAlignedLoad(storageType(ctx_, o_.b), elementPtr(o_.B, o_.b, idx), llvm::Align(dtypeBytes(o_.b)));
        Value* val = b_.CreateSelect(inside, toCompute(raw, o_.b), llvm::Constant::getNullValue(T_));
        b_.CreateAlignedStore(val, b_.CreateInBoundsGEP(T_, bpack_, b_.CreateAdd(dstRow, jj)),
                              llvm::Align(dtypeBytes(compute_)));
      });
    });
  }

  void panel(Value* k0, Value* kc, Value* j0, bool masked) {
    Value* bptr;
    Value* bstride;
    if (packB_) {
      packPanel(k0, kc, j0, masked);
      bptr = bpack_;
      bstride = b_.getInt64(nr_);
    } else {
      bptr = elementPtr(o_.B, o_.b, b_.CreateAdd(b_.CreateMul(k0, o_.sBk), j0));
      bstride = o_.sBk;
    }
    Value* mrC = b_.getInt64(mr_);
    Value* mFull = b_.CreateMul(b_.CreateSDiv(o_.M, mrC), mrC);
    countedLoop(b_.getInt64(0), mFull, mrC, "gemm.i0",
                [&](Value* i0) { microKernel(i0, mr_, k0, kc, j0, masked, bptr, bstride); });
    Value* mRem = b_.CreateSub(o_.M, mFull);
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(mRem)) {
      if (!c->isZero())
        microKernel(mFull, int(c->getSExtValue()), k0, kc, j0, masked, bptr, bstride);
    } else {
      countedLoop(mFull, o_.M, b_.getInt64(1), "gemm.irow",
                  [&](Value* i) { microKernel(i, 1, k0, kc, j0, masked, bptr, bstride); });
    }
  }

  // C[i0 .. i0+mr) x [j0 .. j0+NR) += A[i0.., k0..k0+kc) * Bpanel, accumulators in registers.
  void microKernel(Value* i0, int mr, Value* k0, Value* kc, Value* j0, bool masked, Value* bptr, Value* bstride) {
    std::vector<Value*> masks(static_cast<size_t>(nrv_), nullptr);
    if (masked)
      for (int v = 0; v < nrv_; ++v) masks[size_t(v)] = columnMask(j0, v);
    bool maskB = masked && !packB_;

    std::vector<Value*> cptr(static_cast<size_t>(mr * nrv_));
    std::vector<Value*> acc(static_cast<size_t>(mr * nrv_));
    for (int r = 0; r < mr; ++r) {
      Value* row = b_.CreateMul(b_.CreateAdd(i0, b_.getInt64(r)), o_.ldc);
      for (int v = 0; v < nrv_; ++v) {
        Value* idx = b_.CreateAdd(row, b_.CreateAdd(j0, b_.getInt64(v * vl_)));
        size_t s = size_t(r * nrv_ + v);
        cptr[s] = elementPtr(o_.C, o_.c, idx);
        acc[s] = toCompute(loadVector(cptr[s], o_.c, masks[size_t(v)]), o_.c);
      }
    }
    std::vector<Value*> arow(static_cast<size_t>(mr));
    for (int r = 0; r < mr; ++r)
      arow[size_t(r)] = elementPtr(o_.A, o_.a, b_.CreateMul(b_.CreateAdd(i0, b_.getInt64(r)), o_.sAi));

    DType bt = packB_ ? compute_ : o_.b;
    // One k step: acc += A[:, kk] x B[kk, :].
    auto kStep = [&](Value* kk, std::vector<Value*>& next) {
      std::vector<Value*> bvec(static_cast<size_t>(nrv_));
      Value* brow = b_.CreateMul(kk, bstride);
      for (int v = 0; v < nrv_; ++v) {
        Value* p = packB_ ? b_.CreateInBoundsGEP(T_, bptr, b_.CreateAdd(brow, b_.getInt64(v * vl_)))
                          : elementPtr(bptr, bt, b_.CreateAdd(brow, b_.getInt64(v * vl_)));
        bvec[size_t(v)] = toCompute(loadVector(p, bt, maskB ? masks[size_t(v)] : nullptr), bt);
      }
      Value* kIndex = b_.CreateMul(b_.CreateAdd(k0, kk), o_.sAk);
      for (int r = 0; r < mr; ++r) {
        Value* ap = elementPtr(arow[size_t(r)], o_.a, kIndex);
        Value* a = b_.CreateAlignedLoad(storageType(ctx_, o_.a), ap, llvm::Align(dtypeBytes(o_.a)));
        Value* splat = b_.CreateVectorSplat(unsigned(vl_), toCompute(a, o_.a));
        for (int v = 0; v < nrv_; ++v) {
          size_t s = size_t(r * nrv_ + v);
          if (isFloat(compute_)) {
            next[s] = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {static_cast<llvm::Type*>(VT_)}, {splat, bvec[size_t(v)], next[s]});
          } else {
            next[s] = b_.CreateAdd(next[s], b_.CreateMul(splat, bvec[size_t(v)]));
          }
        }
      }
    };
    // One loop over k, which LLVM unrolls kUnroll times.
    std::vector<Value*> cur = acc;
    kLoop(b_.getInt64(0), kc, 1, kUnroll, cur, kStep);
    for (int r = 0; r < mr; ++r)
      for (int v = 0; v < nrv_; ++v) {
        size_t s = size_t(r * nrv_ + v);
        storeVector(fromCompute(cur[size_t(s)], o_.c), cptr[s], o_.c, masks[size_t(v)]);
      }
  }

  // for (kk = lo; kk < hi; kk += step) body(kk, acc) with the accumulators as
  // phis; acc holds their values after the loop. Skipped when lo == hi are
  // the same constant.
  void kLoop(Value* lo, Value* hi, int step, int unroll, std::vector<Value*>& acc,
             const std::function<void(Value*, std::vector<Value*>&)>& body) {
    auto* cl = llvm::dyn_cast<llvm::ConstantInt>(lo);
    auto* ch = llvm::dyn_cast<llvm::ConstantInt>(hi);
    if (cl && ch && cl->getSExtValue() >= ch->getSExtValue()) return;
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "gemm.k.loop", fn_);
    auto* bodyBB = llvm::BasicBlock::Create(ctx_, "gemm.k.body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "gemm.k.end", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* kk = b_.CreatePHI(b_.getInt64Ty(), 2, "kk");
    kk->addIncoming(lo, pre);
    std::vector<llvm::PHINode*> phis;
    for (Value* a : acc) {
      llvm::PHINode* p = b_.CreatePHI(VT_, 2, "acc");
      p->addIncoming(a, pre);
      phis.push_back(p);
    }
    b_.CreateCondBr(b_.CreateICmpSLT(kk, hi), bodyBB, exit);
    b_.SetInsertPoint(bodyBB);
    std::vector<Value*> next(phis.begin(), phis.end());
    body(kk, next);
    Value* kNext = b_.CreateAdd(kk, b_.getInt64(step), "", false, true);
    auto* latch = b_.CreateBr(header);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loopMetadata(unroll));
    kk->addIncoming(kNext, b_.GetInsertBlock());
    for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(next[i], b_.GetInsertBlock());
    b_.SetInsertPoint(exit);
    acc.assign(phis.begin(), phis.end());
  }

  llvm::IRBuilder<>& b_;
  const GemmOperands& o_;
  llvm::LLVMContext& ctx_;
  llvm::Function* fn_;
  DType compute_;
  llvm::Type* T_;
  llvm::FixedVectorType* VT_;
  int vl_, nrv_, nr_, mr_;
  int kc_ = 256;
  static constexpr int kUnroll = 8;
  bool packB_ = false;
  Value* bpack_ = nullptr;
};

}  // namespace

void emitGemm(llvm::IRBuilder<>& b, const GemmOperands& ops, const CpuTarget& target) {
  GemmGenerator(b, ops, target).run();
}

void emitGemmCall(llvm::IRBuilder<>& b, const GemmOperands& ops, const CpuTarget& target) {
  static llvm::Value* GemmOperands::* const kSizes[] = {&GemmOperands::M,   &GemmOperands::N,   &GemmOperands::K,
                                                        &GemmOperands::sAi, &GemmOperands::sAk, &GemmOperands::sBk,
                                                        &GemmOperands::sBj, &GemmOperands::ldc};
  // The function's name is its signature: element types, then each size as
  // its constant value or `d` (a parameter).
  std::string name = "tlc.gemm";
  for (DType t : {ops.a, ops.b, ops.c}) name += "." + std::string(dtypeName(t));
  std::vector<llvm::Value*> args = {ops.A, ops.B, ops.C};
  for (auto size : kSizes) {
    llvm::Value* v = ops.*size;
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      name += "." + std::to_string(c->getSExtValue());
    } else {
      name += ".d";
      args.push_back(v);
    }
  }
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Function* fn = m.getFunction(name);
  if (!fn) {
    std::vector<llvm::Type*> params(3, b.getPtrTy());
    params.resize(args.size(), b.getInt64Ty());
    fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false), llvm::Function::InternalLinkage,
                                name, m);
    fn->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> fb(llvm::BasicBlock::Create(b.getContext(), "entry", fn));
    GemmOperands inner = ops;
    inner.A = fn->getArg(0);
    inner.B = fn->getArg(1);
    inner.C = fn->getArg(2);
    unsigned next = 3;
    for (auto size : kSizes)
      if (!llvm::isa<llvm::ConstantInt>(inner.*size)) inner.*size = fn->getArg(next++);
    emitGemm(fb, inner, target);
    fb.CreateRetVoid();
  }
  b.CreateCall(fn, args);
}

}  // namespace tlc::cpu
