// `icmp pred <N x i64> a, b` where a and b are both 32-bit values extended
// the same way (a vector zext or sext, a splat of an extended scalar, a
// constant whose lanes fit) becomes `icmp pred <N x i32> a', b'`: one
// 32-bit compare per vector of 16 lanes on AVX-512 where the 64-bit form
// takes two compares, the constants' widening and a mask merge. The zoo's
// top-k masks the taken column of each row by `j == arg[i]` so, 64 lanes a
// row and a round.
//
// The values are the same: extending both sides one way is injective and
// keeps the order the predicate reads (zext: unsigned, sext: signed), so
// eq / ne hold for either, unsigned predicates for zext and signed ones for
// sext.
#include "compiler/backends/cpu/narrow_vector_compares.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Utils/Local.h>

#include <vector>

#include "compiler/backends/cpu/cpu_backend.h"

namespace tlc::cpu {

namespace {

enum class Ext { None, Zero, Sign };

// The 32-bit form of a 64-bit vector operand: `value` itself (a vector of
// 32-bit lanes or a constant), or the 32-bit scalar whose splat it is
// (`splat`), built only once both operands have one (materialize).
struct Narrow {
  llvm::Value* value = nullptr;
  bool splat = false;
};

// The 32-bit vector `v` extends, and how; for a constant, one that fits
// `want` (the other operand's extension). Null `value` when there is none.
Narrow narrowed(llvm::Value* v, Ext want, Ext* how) {
  auto* vt = llvm::cast<llvm::FixedVectorType>(v->getType());
  if (auto* c = llvm::dyn_cast<llvm::Constant>(v)) {
    if (want == Ext::None) return {};
    std::vector<llvm::Constant*> lanes;
    llvm::Type* i32 = llvm::Type::getInt32Ty(v->getContext());
    for (unsigned i = 0; i < vt->getNumElements(); ++i) {
      auto* e = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(i));
      if (!e) return {};
      bool fits = want == Ext::Zero ? e->getValue().isIntN(32) : e->getValue().isSignedIntN(32);
      if (!fits) return {};
      lanes.push_back(llvm::ConstantInt::get(i32, e->getValue().trunc(32)));
    }
    *how = want;
    return {llvm::ConstantVector::get(lanes), false};
  }
  auto extOf = [](llvm::Value* x, Ext* kind) -> llvm::Value* {
    if (llvm::isa<llvm::ZExtInst>(x)) *kind = Ext::Zero;
    else if (llvm::isa<llvm::SExtInst>(x)) *kind = Ext::Sign;
    else return nullptr;
    llvm::Value* src = llvm::cast<llvm::CastInst>(x)->getOperand(0);
    return src->getType()->getScalarType()->isIntegerTy(32) ? src : nullptr;
  };
  Ext kind = Ext::None;
  if (llvm::Value* src = extOf(v, &kind)) {  // a vector extension
    if (want != Ext::None && want != kind) return {};
    *how = kind;
    return {src, false};
  }
  // A splat of an extended scalar: insertelement into lane 0, then a
  // shuffle with an all-zeros mask.
  using namespace llvm::PatternMatch;
  llvm::Value* scalar = nullptr;
  if (!match(v, m_Shuffle(m_InsertElt(m_Value(), m_Value(scalar), m_ZeroInt()), m_Value(), m_ZeroMask()))) return {};
  llvm::Value* src = extOf(scalar, &kind);
  if (!src || (want != Ext::None && want != kind)) return {};
  *how = kind;
  return {src, true};
}

// The 32-bit vector of `n`, an operand of the 64-bit vector type `vt`.
llvm::Value* materialize(const Narrow& n, llvm::FixedVectorType* vt, llvm::IRBuilder<>& b) {
  return n.splat ? b.CreateVectorSplat(vt->getElementCount(), n.value) : n.value;
}

bool readsAs(llvm::CmpInst::Predicate p, Ext how) {
  if (llvm::ICmpInst::isEquality(p)) return true;
  return how == Ext::Zero ? llvm::ICmpInst::isUnsigned(p) : llvm::ICmpInst::isSigned(p);
}

}  // namespace

llvm::PreservedAnalyses NarrowVectorCompares::run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
  std::vector<llvm::ICmpInst*> compares;
  for (llvm::Instruction& i : llvm::instructions(f))
    if (auto* c = llvm::dyn_cast<llvm::ICmpInst>(&i))
      if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(c->getOperand(0)->getType()))
        if (vt->getElementType()->isIntegerTy(64)) compares.push_back(c);
  bool changed = false;
  for (llvm::ICmpInst* c : compares) {
    llvm::IRBuilder<> b(c);
    llvm::Value *x = c->getOperand(0), *y = c->getOperand(1);
    // The non-constant side decides the extension; a constant side follows it.
    if (llvm::isa<llvm::Constant>(x)) std::swap(x, y);
    Ext how = Ext::None, other = Ext::None;
    Narrow n1 = narrowed(x, Ext::None, &how);
    Narrow n2 = n1.value ? narrowed(y, how, &other) : Narrow{};
    if (!n1.value || !n2.value || !readsAs(c->getPredicate(), how)) continue;
    auto* vt = llvm::cast<llvm::FixedVectorType>(x->getType());
    llvm::Value *nx = materialize(n1, vt, b), *ny = materialize(n2, vt, b);
    if (x != c->getOperand(0)) std::swap(nx, ny);
    llvm::Value* narrow = b.CreateICmp(c->getPredicate(), nx, ny, c->getName());
    c->replaceAllUsesWith(narrow);
    c->eraseFromParent();
    // The 64-bit operands, unused now, go too.
    for (llvm::Value* v : {x, y})
      if (auto* i = llvm::dyn_cast<llvm::Instruction>(v))
        if (i->use_empty()) llvm::RecursivelyDeleteTriviallyDeadInstructions(i);
    changed = true;
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

std::string narrowVectorComparesInText(const std::string& llvmIR) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(llvmIR, err, ctx);
  if (!m) return "; error: " + err.getMessage().str() + "\n";
  llvm::PassBuilder pb;
  llvm::FunctionAnalysisManager fam;
  pb.registerFunctionAnalyses(fam);
  for (llvm::Function& f : *m)
    if (!f.isDeclaration()) NarrowVectorCompares().run(f, fam);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return os.str();
}

}  // namespace tlc::cpu
