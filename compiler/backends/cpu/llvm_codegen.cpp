// The CPU backend's statement emitter (stmt_emitter.h): statements, loops,
// kernels and their block functions, and the exported functions' entry and
// exit; generateLLVM runs one per function.
#include "compiler/backends/cpu/llvm_codegen.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <unordered_set>

#include "compiler/backends/cpu/block_invariant.h"
#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/backends/cpu/gemm_microkernel.h"
#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/backends/cpu/local_plan.h"
#include "compiler/backends/cpu/next_block_prefetch.h"
#include "compiler/backends/cpu/stmt_emitter.h"
#include "compiler/backends/cpu/vector_width.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/support/diagnostics.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc::cpu {

using namespace ir;

void StmtEmitter::emit(const Stmt& s) {
  if (!s || hoisted_.count(s.get())) return;
  switch (s->kind) {
    case StmtKind::Seq:
      for (const Stmt& c : as<SeqStmt>(s)->stmts) emit(c);
      return;
    case StmtKind::Kernel: return emitKernel(as<KernelStmt>(s));
    case StmtKind::Alloc: return emitAlloc(as<AllocStmt>(s));
    case StmtKind::For: return emitFor(as<ForStmt>(s));
    case StmtKind::If: return emitIf(as<IfStmt>(s));
    case StmtKind::Store: return emitStore(as<StoreStmt>(s));
    case StmtKind::Let: {
      auto* l = as<LetStmt>(s);
      vars_[l->var.get()] = emitExpr(l->value);
      emit(l->body);
      return;
    }
    case StmtKind::Evaluate: return emitEvaluate(as<EvaluateStmt>(s));
    case StmtKind::Print: return emitPrint(as<PrintStmt>(s));
    case StmtKind::Break:
    case StmtKind::Continue: return emitJump(s->kind == StmtKind::Break);
    default:
      TLC_ICE(std::string("the CPU backend got an unlowered `") + stmtKindName(s->kind) +
              "` statement: run lowerForCpu first");
  }
}

void StmtEmitter::emitJump(bool isBreak) {
  TLC_CHECK(!jumpTargets_.empty(), "`break` or `continue` outside a loop in the CPU backend");
  JumpTarget& t = jumpTargets_.back();
  if (!isBreak && !t.cont) t.cont = llvm::BasicBlock::Create(ctx_, "continue", fn_);
  b_.CreateBr(isBreak ? t.exit : t.cont);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, isBreak ? "after.break" : "after.continue", fn_));
}

void StmtEmitter::emitAlloc(const AllocStmt* a) {
  const Buffer& buf = a->buffer;
  if (bufs_.count(buf.get())) return;  // on the heap (allocateHeapLocals)
  int64_t n = 1;
  for (const Expr& e : buf->shape) {
    int64_t v = 0;
    TLC_CHECK(constInt(e, &v), "local buffer `" + buf->name + "` needs a constant shape");
    n *= v;
  }
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  llvm::Type* elem = storageType(ctx_, buf->dtype);
  auto* arr = entry.CreateAlloca(llvm::ArrayType::get(elem, uint64_t(std::max<int64_t>(n, 1))), nullptr, buf->name);
  arr->setAlignment(llvm::Align(64));
  bufs_[buf.get()] = arr;
}

void StmtEmitter::emitStore(const StoreStmt* s) {
  // `prev[i] = cpu.atomic_*(...)`: an atomic's previous value (cpu-lower-atomics).
  auto* atomic = as<Call>(s->value);
  if (atomic && !cpu_intrinsics::isAtomic(atomic->callee)) atomic = nullptr;
  llvm::Value* v = valueToStored(b_, atomic ? emitAtomic(atomic) : emitExpr(s->value), s->buffer->dtype);
  llvm::Value* ptr = accessAddress(s->buffer, s->indices, TLC_CPU_ACCESS_STORE, s->loc);
  auto* st = b_.CreateAlignedStore(v, ptr, llvm::Align(dtypeBytes(s->buffer->dtype)));
  markParallelAccess(st);
}

void StmtEmitter::emitIf(const IfStmt* s) {
  llvm::Value* c = emitExpr(s->cond);
  auto* thenBB = llvm::BasicBlock::Create(ctx_, "then", fn_);
  auto* elseBB = s->elseBody ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
  auto* endBB = llvm::BasicBlock::Create(ctx_, "endif", fn_);
  b_.CreateCondBr(c, thenBB, elseBB ? elseBB : endBB);
  b_.SetInsertPoint(thenBB);
  emit(s->thenBody);
  b_.CreateBr(endBB);
  if (elseBB) {
    b_.SetInsertPoint(elseBB);
    emit(s->elseBody);
    b_.CreateBr(endBB);
  }
  b_.SetInsertPoint(endBB);
}

void StmtEmitter::emitFor(const ForStmt* f) {
  if (!reporting_.checkBounds)
    if (auto t = matchTransposeNest(*f, target_.vectors.vectorBits)) return emitTransposeNest(*t);
  llvm::Value* lo = emitExpr(f->min);
  llvm::Value* ext = emitExpr(f->extent);
  llvm::Type* it = valueType(ctx_, f->var->dtype);
  lo = b_.CreateIntCast(lo, it, isSigned(f->min->dtype));
  ext = b_.CreateIntCast(ext, it, isSigned(f->extent->dtype));
  if (!blockVars_.empty()) {
    for (const Load* l : nextBlockPrefetches(*f, blockVars_)) {
      prefetchAhead(f->var.get(), l->buffer, l->indices, lo, ext, /*write=*/false, nullptr);
      int64_t n = 0;
      if (const ForStmt* ahead = constInt(f->extent, &n) ? aheadLoop(l->indices, n * dtypeBytes(l->buffer->dtype)) : nullptr)
        prefetchAhead(f->var.get(), l->buffer, l->indices, lo, ext, /*write=*/false, ahead);
    }
    // A row read in chunks: the serial loop's whole range of elements.
    ChunkedReads chunks = chunkedNextBlockPrefetches(*f, blockVars_);
    llvm::Value* elements = b_.CreateMul(ext, llvm::ConstantInt::get(ext->getType(), uint64_t(chunks.lanes)));
    const VarNode* lane = chunks.vectorLoop ? chunks.vectorLoop->var.get() : nullptr;
    for (const Load* l : chunks.loads) {
      prefetchAhead(f->var.get(), l->buffer, l->indices, lo, elements, /*write=*/false, nullptr, lane);
      int64_t n = 0;
      int64_t rowBytes = constInt(f->extent, &n) ? n * chunks.lanes * dtypeBytes(l->buffer->dtype) : 0;
      if (const ForStmt* ahead = rowBytes ? aheadLoop(l->indices, rowBytes) : nullptr)
        prefetchAhead(f->var.get(), l->buffer, l->indices, lo, elements, /*write=*/false, ahead, lane);
    }
  }
  loopExtents_.push_back(b_.CreateSExt(ext, b_.getInt64Ty()));
  forStack_.push_back(f);
  if (const StoreStmt* store = streamingAllowed_ ? streamableStore(*f, *writeOnly_) : nullptr)
    emitStreamingFor(f, store, lo, ext);
  else
    emitLoop(f->var, lo, b_.CreateAdd(lo, ext), f->forKind, forcedVectorWidth(*f, target_.vectors.vectorBits),
             [&] { emit(f->body); });
  loopExtents_.pop_back();
  forStack_.pop_back();
}

void StmtEmitter::attachLoopMetadata(llvm::Instruction* latch, ForKind kind, llvm::MDNode* group, int width,
                        bool keepRolled) {
  std::vector<llvm::Metadata*> ops = {nullptr};
  auto flag = [&](const char* name) {
    ops.push_back(llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, name), llvm::ConstantAsMetadata::get(b_.getTrue())}));
  };
  if (kind == ForKind::Vectorized) {
    flag("llvm.loop.vectorize.enable");
    if (width > 0)
      ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                                             llvm::ConstantAsMetadata::get(b_.getInt32(width))}));
    ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), group}));
    // A vectorized loop whose extent becomes a small constant once an outer
    // loop is unrolled (the tail-masked tile copies and fills with dynamic
    // shapes) must reach the loop vectorizer as a loop: fully unrolling it
    // first leaves its serial parent innermost, which the vectorizer then
    // vectorizes across rows as a scalarized scatter, thousands of scalar
    // float16 stores that dominate compile time. The vector loop the
    // vectorizer makes carries only `isvectorized`, so it may be unrolled.
    ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
    llvm::Metadata* vectorized[] = {llvm::MDString::get(ctx_, "llvm.loop.isvectorized"),
                                    llvm::ConstantAsMetadata::get(b_.getInt32(1))};
    ops.push_back(llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.followup_all"), llvm::MDNode::get(ctx_, vectorized)}));
  } else if (kind == ForKind::Unroll) {
    ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")}));
  } else {
    ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.mustprogress")}));
    if (keepRolled) ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
  }
  llvm::MDNode* loopID = llvm::MDNode::getDistinct(ctx_, ops);
  loopID->replaceOperandWith(0, loopID);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loopID);
}

void StmtEmitter::emitEvaluate(const EvaluateStmt* s) {
  auto* call = as<Call>(s->value);
  if (call && call->callee == cpu_intrinsics::kGemm) return emitGemmCall(call);
  if (call && cpu_intrinsics::isAtomic(call->callee)) {
    emitAtomic(call);
    return;
  }
  emitExpr(s->value);
}

const Load* StmtEmitter::addressedLoad(const Expr& e) {
  auto* c = as<Call>(e);
  TLC_CHECK(c && c->callee == cpu_intrinsics::kAddressOf && c->args.size() == 1 && as<Load>(c->args[0]),
            "intrinsic operand must be cpu.address_of(load)");
  return as<Load>(c->args[0]);
}

void StmtEmitter::emitGemmCall(const Call* c) {
  TLC_CHECK(c->args.size() == 11, "cpu.gemm takes 11 arguments");
  const Load* a = addressedLoad(c->args[0]);
  const Load* bb = addressedLoad(c->args[1]);
  const Load* cc = addressedLoad(c->args[2]);
  GemmOperands ops;
  ops.a = a->buffer->dtype;
  ops.b = bb->buffer->dtype;
  ops.c = cc->buffer->dtype;
  ops.A = accessAddress(a->buffer, a->indices, TLC_CPU_ACCESS_GEMM, a->loc.known() ? a->loc : c->loc);
  ops.B = accessAddress(bb->buffer, bb->indices, TLC_CPU_ACCESS_GEMM, bb->loc.known() ? bb->loc : c->loc);
  ops.C = accessAddress(cc->buffer, cc->indices, TLC_CPU_ACCESS_GEMM, cc->loc.known() ? cc->loc : c->loc);
  ops.M = i64(c->args[3]);
  ops.N = i64(c->args[4]);
  ops.K = i64(c->args[5]);
  ops.sAi = i64(c->args[6]);
  ops.sAk = i64(c->args[7]);
  ops.sBk = i64(c->args[8]);
  ops.sBj = i64(c->args[9]);
  ops.ldc = i64(c->args[10]);
  cpu::emitGemmCall(b_, ops, target_);
}

llvm::Value* StmtEmitter::emitAtomic(const Call* c) {
  const Load* target = addressedLoad(c->args[0]);
  DType t = target->buffer->dtype;
  TLC_CHECK(t != DType::Bool && !isFloat8(t), "atomics on bool and float8 are not supported on the CPU");
  llvm::Value* ptr = accessAddress(target->buffer, target->indices, TLC_CPU_ACCESS_ATOMIC,
                                   target->loc.known() ? target->loc : c->loc);
  llvm::Value* v = emitExpr(c->args[1]);
  using Op = llvm::AtomicRMWInst::BinOp;
  Op op;
  bool f = isFloat(t);
  if (c->callee == cpu_intrinsics::kAtomicAdd) {
    op = f ? Op::FAdd : Op::Add;
  } else if (c->callee == cpu_intrinsics::kAtomicMax) {
    op = f ? Op::FMax : (isSigned(t) ? Op::Max : Op::UMax);
  } else {
    op = f ? Op::FMin : (isSigned(t) ? Op::Min : Op::UMin);
  }
  return b_.CreateAtomicRMW(op, ptr, v, llvm::MaybeAlign(dtypeBytes(t)), llvm::AtomicOrdering::SequentiallyConsistent);
}

void StmtEmitter::emitKernel(const KernelStmt* k) {
  // Everything in scope travels in the context array.
  std::vector<std::pair<const VarNode*, llvm::Value*>> capturedVars(vars_.begin(), vars_.end());
  std::vector<std::pair<const BufferNode*, llvm::Value*>> capturedBufs(bufs_.begin(), bufs_.end());
  std::vector<llvm::Value*> grid;
  for (const Expr& g : k->grid) grid.push_back(i64(g));
  while (grid.size() < 3) grid.push_back(b_.getInt64(1));

  size_t slots = capturedVars.size() + capturedBufs.size() + 3 + (failure_ ? 1 : 0);
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  auto* ctxArr = entry.CreateAlloca(llvm::ArrayType::get(b_.getInt64Ty(), slots), nullptr, "kernel.ctx");
  auto slotPtr = [&](llvm::IRBuilder<>& bld, llvm::Value* base, size_t i) {
    return bld.CreateConstGEP1_64(bld.getInt64Ty(), base, i);
  };
  size_t slot = 0;
  for (auto& [var, val] : capturedVars) {
    llvm::Value* stored = var->dtype == DType::Bool ? b_.CreateZExt(val, b_.getInt8Ty()) : val;
    b_.CreateStore(stored, slotPtr(b_, ctxArr, slot++));
  }
  for (auto& [buf, ptr] : capturedBufs) b_.CreateStore(ptr, slotPtr(b_, ctxArr, slot++));
  for (int d = 0; d < 3; ++d) b_.CreateStore(grid[d], slotPtr(b_, ctxArr, slot++));
  if (failure_) b_.CreateStore(failure_, slotPtr(b_, ctxArr, slot++));

  // The block function: void(ptr ctx, i64 begin, i64 end).
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
  auto* blockFn = llvm::Function::Create(fty, llvm::Function::InternalLinkage,
                                         kernelPrefix_ + ".blocks" + std::to_string(kernelCount_++), &mod_);
  StmtEmitter inner(mod_, target_, blockFn, kernelPrefix_ + ".k", *writeOnly_, reporting_);
  inner.kernelCount_ = kernelCount_ * 100;
  llvm::IRBuilder<>& ib = inner.b_;
  llvm::Value* ctxArg = blockFn->getArg(0);
  slot = 0;
  for (auto& [var, val] : capturedVars) {
    llvm::Type* t = var->dtype == DType::Bool ? ib.getInt8Ty() : val->getType();
    llvm::Value* v = ib.CreateLoad(t, slotPtr(ib, ctxArg, slot++), var->name);
    if (var->dtype == DType::Bool) v = ib.CreateICmpNE(v, ib.getInt8(0));
    inner.vars_[var] = v;
  }
  for (auto& [buf, ptr] : capturedBufs) inner.bufs_[buf] = ib.CreateLoad(ib.getPtrTy(), slotPtr(ib, ctxArg, slot++), buf->name);
  llvm::Value* gx = ib.CreateLoad(ib.getInt64Ty(), slotPtr(ib, ctxArg, slot++), "grid.x");
  llvm::Value* gy = ib.CreateLoad(ib.getInt64Ty(), slotPtr(ib, ctxArg, slot++), "grid.y");
  llvm::Value* gz = ib.CreateLoad(ib.getInt64Ty(), slotPtr(ib, ctxArg, slot++), "grid.z");
  (void)gz;
  auto* exit = llvm::BasicBlock::Create(ctx_, "block.end", blockFn);
  if (failure_) {
    inner.failure_ = ib.CreateLoad(ib.getPtrTy(), slotPtr(ib, ctxArg, slot++), "failure");
    inner.failureExit_ = exit;
  }
  for (size_t d = 0; d < k->blockVars.size() && d < 3; ++d) inner.blockVars_.push_back(k->blockVars[d].get());
  llvm::Value* heap = inner.allocateHeapLocals(k->body);
  // Statements every block runs alike (block_invariant.h), once per chunk.
  auto invariant = blockInvariantStatements(*k);
  if (!invariant.empty()) {
    auto* chunk = llvm::BasicBlock::Create(ctx_, "chunk.invariant", blockFn);
    ib.CreateCondBr(ib.CreateICmpSLT(blockFn->getArg(1), blockFn->getArg(2)), chunk, exit);
    ib.SetInsertPoint(chunk);
    // Failure reports of these statements name the chunk's first block.
    llvm::Value* first = blockFn->getArg(1);
    llvm::Value* firstIdx[3] = {ib.CreateURem(first, gx), ib.CreateURem(ib.CreateUDiv(first, gx), gy),
                                ib.CreateUDiv(ib.CreateUDiv(first, gx), gy)};
    for (size_t d = 0; d < k->blockVars.size() && d < 3; ++d)
      inner.vars_[k->blockVars[d].get()] = ib.CreateIntCast(firstIdx[d], valueType(ctx_, k->blockVars[d]->dtype), false);
    for (const Stmt& s : seqStmts(k->body))
      if (s->kind == StmtKind::Alloc || invariant.count(s.get())) inner.emit(s);
    inner.hoisted_ = std::move(invariant);
  }

  // for (blk = begin; blk < end; ++blk) { bx = blk % gx; by = blk / gx % gy; bz = blk / (gx * gy); body }
  llvm::BasicBlock* pre = ib.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, "block.loop", blockFn);
  auto* body = llvm::BasicBlock::Create(ctx_, "block.body", blockFn);
  exit->moveAfter(body);
  ib.CreateBr(header);
  ib.SetInsertPoint(header);
  llvm::PHINode* blk = ib.CreatePHI(ib.getInt64Ty(), 2, "blk");
  blk->addIncoming(blockFn->getArg(1), pre);
  ib.CreateCondBr(inner.andNoFailure(ib.CreateICmpSLT(blk, blockFn->getArg(2))), body, exit);
  ib.SetInsertPoint(body);
  llvm::Value* idx[3];
  idx[0] = ib.CreateURem(blk, gx);
  llvm::Value* rest = ib.CreateUDiv(blk, gx);
  idx[1] = ib.CreateURem(rest, gy);
  idx[2] = ib.CreateUDiv(rest, gy);
  llvm::Value* nextBlk = ib.CreateAdd(blk, ib.getInt64(1));
  llvm::Value* nextRest = ib.CreateUDiv(nextBlk, gx);
  llvm::Value* nextIdx[3] = {ib.CreateURem(nextBlk, gx), ib.CreateURem(nextRest, gy), ib.CreateUDiv(nextRest, gy)};
  for (size_t d = 0; d < k->blockVars.size() && d < 3; ++d) {
    const Var& v = k->blockVars[d];
    inner.vars_[v.get()] = ib.CreateIntCast(idx[d], valueType(ctx_, v->dtype), false, v->name);
    inner.nextBlockValues_.push_back(ib.CreateIntCast(nextIdx[d], valueType(ctx_, v->dtype), false, v->name + ".next"));
  }
  inner.emit(k->body);
  llvm::Value* next = ib.CreateAdd(blk, ib.getInt64(1));
  ib.CreateBr(header);
  blk->addIncoming(next, ib.GetInsertBlock());
  ib.SetInsertPoint(exit);
  inner.freeHeapLocals(heap);
  inner.fenceStreamedStores();
  ib.CreateRetVoid();
  kernelCount_ = inner.kernelCount_;

  // Launch: tlc_cpu_parallel_for(blockFn, ctx, gx * gy * gz).
  llvm::Value* total = b_.CreateMul(b_.CreateMul(grid[0], grid[1]), grid[2]);
  auto* pfTy = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty()}, false);
  llvm::FunctionCallee pf = mod_.getOrInsertFunction("tlc_cpu_parallel_for", pfTy);
  b_.CreateCall(pf, {blockFn, ctxArr, total});
  if (failure_) {
    // A failed kernel skips the rest of the function.
    auto* next = llvm::BasicBlock::Create(ctx_, "kernel.ok", fn_);
    b_.CreateCondBr(andNoFailure(b_.getTrue()), next, failureExit_);
    b_.SetInsertPoint(next);
  }
}

llvm::Value* StmtEmitter::allocateHeapLocals(const Stmt& body) {
  LocalPlan plan = planLocals(body, mod_.getDataLayout(), ctx_);
  if (plan.heap.empty()) return nullptr;
  TLC_CHECK(failure_ != nullptr, "heap block-local buffers without a failure record");
  llvm::FunctionCallee alloc = mod_.getOrInsertFunction(
      "tlc_cpu_alloc_local", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
  llvm::Value* heap = b_.CreateCall(alloc, {b_.getInt64(plan.heapBytes)}, "locals.heap");
  checkLocalAllocation(heap, plan.heapBytes);
  for (auto& [a, offset] : plan.heap)
    bufs_[a->buffer.get()] = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), heap, uint64_t(offset), a->buffer->name);
  return heap;
}

void StmtEmitter::freeHeapLocals(llvm::Value* heap) {
  if (!heap) return;
  llvm::FunctionCallee release = mod_.getOrInsertFunction(
      "tlc_cpu_free_local", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
  b_.CreateCall(release, {heap});
}

bool StmtEmitter::startFailureRecord(const PrimFunc& f) {
  if (!reporting_.checkBounds && !usesHeapLocals(f.body, mod_.getDataLayout(), ctx_)) return false;
  createFailureRecord();
  failureExit_ = llvm::BasicBlock::Create(ctx_, "done", fn_);
  return true;
}

void StmtEmitter::bindParams(const PrimFunc& f) {
  llvm::Value* args = fn_->getArg(0);
  llvm::Value* dims = fn_->getArg(1);
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    llvm::Value* slot = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), args, i), p.name);
    if (p.buffer) {
      bufs_[p.buffer.get()] = slot;
    } else {
      DType t = p.scalar->dtype;
      llvm::Value* v = b_.CreateLoad(storageType(ctx_, t), slot, p.name);
      vars_[p.scalar.get()] = loadedToValue(b_, v, t);
    }
  }
  for (size_t j = 0; j < f.shapeVars.size(); ++j) {
    const Var& v = f.shapeVars[j];
    llvm::Value* x = b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstGEP1_64(b_.getInt64Ty(), dims, j), v->name);
    vars_[v.get()] = b_.CreateIntCast(x, valueType(ctx_, v->dtype), true);
  }
  if (failure_) heapLocals_ = allocateHeapLocals(f.body);
}

void StmtEmitter::finish() {
  if (failure_) {
    b_.CreateBr(failureExit_);
    failureExit_->moveAfter(b_.GetInsertBlock());
    b_.SetInsertPoint(failureExit_);
    freeHeapLocals(heapLocals_);
    endFailureRecord();
  }
  fenceStreamedStores();
  b_.CreateRetVoid();
}

std::unique_ptr<llvm::Module> generateLLVM(const ir::Module& lowered, llvm::LLVMContext& ctx, const CpuTarget& target,
                                           const CodegenOptions& options) {
  auto m = std::make_unique<llvm::Module>("tlc", ctx);
  m->setTargetTriple(target.triple);
  m->setDataLayout(target.machine->createDataLayout());
  bool canFail = false;
  for (const Func& f : lowered.funcs) {
    llvm::IRBuilder<> tb(ctx);
    auto* fty = llvm::FunctionType::get(tb.getVoidTy(), {tb.getPtrTy(), tb.getPtrTy()}, false);
    std::string sym = cpuKernelSymbol(f->name);
    auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, sym, m.get());
    fn->getArg(0)->setName("args");
    fn->getArg(1)->setName("shape_vars");
    BufferSet writeOnly = writeOnlyTensors(*f);
    FailureReporting reporting{options.checkBounds, options.sources, f->name};
    StmtEmitter e(*m, target, fn, sym, writeOnly, reporting);
    canFail |= e.startFailureRecord(*f);
    e.bindParams(*f);
    e.emit(f->body);
    e.finish();
  }
  if (canFail) {
    // tlc_module_last_failure: the runtime's, exported (the runtime itself
    // stays private to a built library).
    llvm::IRBuilder<> tb(ctx);
    auto* accessor = llvm::Function::Create(llvm::FunctionType::get(tb.getPtrTy(), false),
                                            llvm::Function::ExternalLinkage, kCpuFailureSymbol, m.get());
    tb.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", accessor));
    llvm::FunctionCallee last =
        m->getOrInsertFunction("tlc_cpu_last_failure", llvm::FunctionType::get(tb.getPtrTy(), false));
    tb.CreateRet(tb.CreateCall(last, {}));
  }
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*m, &os)) TLC_ICE("the CPU backend produced invalid LLVM IR: " + os.str());
  return m;
}

}  // namespace tlc::cpu
