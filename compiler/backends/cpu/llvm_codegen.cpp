#include "compiler/backends/cpu/llvm_codegen.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "compiler/backends/cpu/block_invariant.h"
#include "compiler/backends/cpu/cpu_backend.h"
#include "compiler/backends/cpu/expr_codegen.h"
#include "compiler/backends/cpu/gemm_microkernel.h"
#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/backends/cpu/local_plan.h"
#include "compiler/backends/cpu/next_block_prefetch.h"
#include "compiler/backends/cpu/streaming_stores.h"
#include "compiler/backends/cpu/tile_transpose.h"
#include "compiler/backends/cpu/vector_width.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/support/diagnostics.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc::cpu {

using namespace ir;

namespace {

class StmtEmitter : public ExprEmitter {
 public:
  StmtEmitter(llvm::Module& m, const CpuTarget& target, llvm::Function* fn, const std::string& kernelPrefix,
              const BufferSet& writeOnly, const FailureReporting& reporting)
      : ExprEmitter(m, fn),
        target_(target),
        kernelPrefix_(kernelPrefix),
        writeOnly_(&writeOnly),
        // Streamed lines are written past the stores that bounds checks test.
        streamingAllowed_(llvm::Triple(target.triple).getArch() == llvm::Triple::x86_64 && !reporting.checkBounds) {
    reporting_ = reporting;
  }

  void emit(const Stmt& s) {
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

 private:
  // break: to the innermost loop's exit; continue: to its increment. What
  // follows in the same block is unreachable and goes into a block of its own.
  void emitJump(bool isBreak) {
    TLC_CHECK(!jumpTargets_.empty(), "`break` or `continue` outside a loop in the CPU backend");
    JumpTarget& t = jumpTargets_.back();
    if (!isBreak && !t.cont) t.cont = llvm::BasicBlock::Create(ctx_, "continue", fn_);
    b_.CreateBr(isBreak ? t.exit : t.cont);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, isBreak ? "after.break" : "after.continue", fn_));
  }

  void emitAlloc(const AllocStmt* a) {
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

  void emitStore(const StoreStmt* s) {
    // `prev[i] = cpu.atomic_*(...)`: an atomic's previous value (cpu-lower-atomics).
    auto* atomic = as<Call>(s->value);
    if (atomic && !cpu_intrinsics::isAtomic(atomic->callee)) atomic = nullptr;
    llvm::Value* v = valueToStored(b_, atomic ? emitAtomic(atomic) : emitExpr(s->value), s->buffer->dtype);
    llvm::Value* ptr = accessAddress(s->buffer, s->indices, TLC_CPU_ACCESS_STORE, s->loc);
    auto* st = b_.CreateAlignedStore(v, ptr, llvm::Align(dtypeBytes(s->buffer->dtype)));
    markParallelAccess(st);
  }

  void emitIf(const IfStmt* s) {
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

  void emitFor(const ForStmt* f) {
    if (!reporting_.checkBounds)
      if (auto t = matchTransposeNest(*f, target_.vectors.vectorBits)) return emitTransposeNest(*t);
    llvm::Value* lo = emitExpr(f->min);
    llvm::Value* ext = emitExpr(f->extent);
    llvm::Type* it = valueType(ctx_, f->var->dtype);
    lo = b_.CreateIntCast(lo, it, isSigned(f->min->dtype));
    ext = b_.CreateIntCast(ext, it, isSigned(f->extent->dtype));
    if (!blockVars_.empty())
      for (const Load* l : nextBlockPrefetches(*f, blockVars_)) {
        prefetchAhead(f->var.get(), l->buffer, l->indices, lo, ext, /*write=*/false, nullptr);
        int64_t n = 0;
        if (const ForStmt* ahead = constInt(f->extent, &n) ? aheadLoop(l->indices, n * dtypeBytes(l->buffer->dtype)) : nullptr)
          prefetchAhead(f->var.get(), l->buffer, l->indices, lo, ext, /*write=*/false, ahead);
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

  // A transposing nest (tile_transpose.h): T x T blocks through registers,
  // P of them side by side along the stores. Vectors are loaded along one
  // loop variable (`along`) at P x T values of the other (`across`),
  // transposed, and stored along `across` at T values of `along`.
  void emitTransposeNest(const TransposeNest& t) {
    llvm::Type* it = valueType(ctx_, t.outer->var->dtype);
    llvm::Type* jt = valueType(ctx_, t.inner->var->dtype);
    llvm::Type* elem = storageType(ctx_, t.store->buffer->dtype);
    auto* vec = llvm::FixedVectorType::get(elem, unsigned(t.block));
    llvm::Align align(dtypeBytes(t.store->buffer->dtype));
    auto i0 = makeVar(t.outer->var->name + "_blk", DType::Int64);
    auto j0 = makeVar(t.inner->var->name + "_blk", DType::Int64);
    struct Side {
      const VarNode* var;
      llvm::Type* type;
      const Var* blk;
      int64_t step;  // elements per block index
    };
    int64_t span = t.block * t.pack;
    Side outer{t.outer->var.get(), it, &i0, t.loadAlongOuter ? t.block : span};
    Side inner{t.inner->var.get(), jt, &j0, t.loadAlongOuter ? span : t.block};
    Side along = t.loadAlongOuter ? outer : inner, across = t.loadAlongOuter ? inner : outer;
    auto at = [&](const Side& side, int64_t k) {
      llvm::Value* v = b_.CreateAdd(b_.CreateMul(vars_[side.blk->get()], b_.getInt64(side.step)), b_.getInt64(k));
      vars_[side.var] = b_.CreateIntCast(v, side.type, true);
    };
    auto nest = [&](bool stream) {
      int64_t alongExtent = t.loadAlongOuter ? t.rows : t.cols, acrossExtent = t.loadAlongOuter ? t.cols : t.rows;
      // The lines the next block (or the next iteration of an enclosing
      // serial loop, aheadLoop) reads or stores: the nest's rows are far
      // apart, too many streams for the hardware prefetchers, and each
      // store would wait for its line (prefetchw fetches it owned).
      auto prefetchRows = [&](const Buffer& buf, const std::vector<Expr>& indices, const Side& contiguous,
                              int64_t contiguousExtent, const Side& rows, int64_t rowCount, bool write) {
        if (buf->scope != MemScope::Global || blockVars_.empty()) return;
        const ForStmt* ahead = aheadLoop(indices, alongExtent * acrossExtent * dtypeBytes(buf->dtype));
        bool nextBlock = ownedByBlock(indices, blockVars_);
        if (!ahead && !nextBlock) return;
        auto r = makeVar(buf->name + "_rows", DType::Int64);
        loopExtents_.push_back(b_.getInt64(rowCount));
        emitLoop(r, b_.getInt64(0), b_.getInt64(rowCount), ForKind::Serial, 0, [&] {
          vars_[rows.var] = b_.CreateIntCast(vars_[r.get()], rows.type, true);
          llvm::Value* zero = llvm::ConstantInt::get(contiguous.type, 0);
          llvm::Value* n = llvm::ConstantInt::get(contiguous.type, contiguousExtent);
          if (nextBlock) prefetchAhead(contiguous.var, buf, indices, zero, n, write, nullptr);
          if (ahead) prefetchAhead(contiguous.var, buf, indices, zero, n, write, ahead);
        });
        loopExtents_.pop_back();
        vars_.erase(r.get());
      };
      if (!stream) prefetchRows(t.store->buffer, t.store->indices, across, acrossExtent, along, alongExtent, true);
      prefetchRows(t.load->buffer, t.load->indices, along, alongExtent, across, acrossExtent, false);
      emitLoop(i0, b_.getInt64(0), b_.getInt64(t.rows / outer.step), ForKind::Serial, 0, [&] {
        emitLoop(j0, b_.getInt64(0), b_.getInt64(t.cols / inner.step), ForKind::Serial, 0, [&] {
          std::vector<llvm::Value*> rows(size_t(t.block), nullptr);
          at(along, 0);
          for (int64_t k = 0; k < t.block; ++k) {
            std::vector<llvm::Value*> segments;
            for (int64_t p = 0; p < t.pack; ++p) {
              at(across, p * t.block + k);
              segments.push_back(b_.CreateAlignedLoad(vec, emitAddress(t.load->buffer, t.load->indices), align));
            }
            rows[size_t(k)] = concatVectors(b_, std::move(segments));
          }
          rows = transposeInRegisters(b_, std::move(rows));
          at(across, 0);
          for (int64_t m = 0; m < t.block; ++m) {
            at(along, m);
            llvm::Value* addr = emitAddress(t.store->buffer, t.store->indices);
            if (stream)
              storeLine(rows[size_t(m)], addr);
            else
              b_.CreateAlignedStore(rows[size_t(m)], addr, align);
          }
        });
      });
    };
    // Stores of whole 64-byte lines to a large write-only tensor stream
    // (streaming_stores.h) when every one of them is aligned: the first, and
    // the distance between consecutive values of `along`.
    bool lines = span * dtypeBytes(t.store->buffer->dtype) == 64;
    if (!streamingAllowed_ || !lines || !writeOnly_->count(t.store->buffer.get())) {
      nest(false);
    } else {
      llvm::Type* i64t = b_.getInt64Ty();
      vars_[i0.get()] = b_.getInt64(0);
      vars_[j0.get()] = b_.getInt64(0);
      at(along, 0);
      at(across, 0);
      llvm::Value* first = b_.CreatePtrToInt(emitAddress(t.store->buffer, t.store->indices), i64t);
      at(along, 1);
      llvm::Value* second = b_.CreatePtrToInt(emitAddress(t.store->buffer, t.store->indices), i64t);
      llvm::Value* misaligned = b_.CreateAnd(b_.CreateOr(first, b_.CreateSub(second, first)), 63);
      llvm::Value* stream = b_.CreateAnd(b_.CreateICmpEQ(misaligned, b_.getInt64(0)),
                                         b_.CreateICmpSGE(tensorBytes(*t.store->buffer), streamMinBytes()), "stream");
      auto* yes = llvm::BasicBlock::Create(ctx_, "transpose.stream", fn_);
      auto* no = llvm::BasicBlock::Create(ctx_, "transpose.plain", fn_);
      auto* done = llvm::BasicBlock::Create(ctx_, "transpose.end", fn_);
      b_.CreateCondBr(stream, yes, no);
      b_.SetInsertPoint(yes);
      nest(true);
      b_.CreateBr(done);
      b_.SetInsertPoint(no);
      nest(false);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      streamed_ = true;
    }
    for (const Var& v : {i0, j0, t.outer->var, t.inner->var}) vars_.erase(v.get());
  }

  // for (var = lo; var < end; ++var) body(), with the loop metadata of `kind`
  // (and a vectorization width when width > 0).
  template <class Body>
  void emitLoop(const Var& var, llvm::Value* lo, llvm::Value* end, ForKind kind, int width, Body&& body,
                bool keepRolled = false) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, var->name + ".loop", fn_);
    auto* bodyBB = llvm::BasicBlock::Create(ctx_, var->name + ".body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, var->name + ".end", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(lo->getType(), 2, var->name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, end), bodyBB, exit);
    b_.SetInsertPoint(bodyBB);
    vars_[var.get()] = iv;

    llvm::MDNode* group = nullptr;
    if (kind == ForKind::Vectorized) {
      group = llvm::MDNode::getDistinct(ctx_, {});
      accessGroups_.push_back(group);
    }
    jumpTargets_.push_back({exit, nullptr});
    body();
    if (group) accessGroups_.pop_back();
    if (llvm::BasicBlock* cont = jumpTargets_.back().cont) {
      b_.CreateBr(cont);
      b_.SetInsertPoint(cont);
    }
    jumpTargets_.pop_back();

    llvm::Value* next = b_.CreateAdd(iv, llvm::ConstantInt::get(lo->getType(), 1), "", false, true);
    auto* latch = b_.CreateBr(header);
    iv->addIncoming(next, b_.GetInsertBlock());
    attachLoopMetadata(latch, kind, group, width, keepRolled);
    b_.SetInsertPoint(exit);
  }

  // A Vectorized loop writing a write-only tensor (streaming_stores.h): the
  // iterations before the first 64-byte boundary of the destination and after
  // its last whole line run as the loop did; each whole line between is
  // computed into a staging vector and written with a non-temporal store.
  // Small tensors, destinations not aligned to their element, and extents
  // without one whole line take the plain loop for every iteration.
  void emitStreamingFor(const ForStmt* f, const StoreStmt* store, llvm::Value* lo, llvm::Value* ext) {
    llvm::Type* it = lo->getType();
    llvm::Type* i64t = b_.getInt64Ty();
    DType dt = store->buffer->dtype;
    int64_t elemBytes = dtypeBytes(dt);
    int64_t lineElems = 64 / elemBytes;
    llvm::Type* elem = storageType(ctx_, dt);

    vars_[f->var.get()] = lo;
    llvm::Value* first = emitAddress(store->buffer, store->indices);
    llvm::Value* addr = b_.CreatePtrToInt(first, i64t);
    llvm::Value* ext64 = b_.CreateSExt(ext, i64t);
    llvm::Value* headBytes = b_.CreateAnd(b_.CreateSub(b_.getInt64(64), b_.CreateAnd(addr, 63)), 63);
    llvm::Value* head = b_.CreateUDiv(headBytes, b_.getInt64(elemBytes));
    llvm::Value* big = b_.CreateICmpSGE(tensorBytes(*store->buffer), streamMinBytes());
    llvm::Value* elemAligned = b_.CreateICmpEQ(b_.CreateAnd(addr, elemBytes - 1), b_.getInt64(0));
    llvm::Value* oneLine = b_.CreateICmpSGE(b_.CreateSub(ext64, head), b_.getInt64(lineElems));
    llvm::Value* stream = b_.CreateAnd(b_.CreateAnd(big, elemAligned), oneLine, "stream");
    head = b_.CreateSelect(stream, head, ext64);
    llvm::Value* lines = b_.CreateSelect(
        stream, b_.CreateUDiv(b_.CreateSub(ext64, head), b_.getInt64(lineElems)), b_.getInt64(0), "lines");
    llvm::Value* mid = b_.CreateAdd(lo, b_.CreateTrunc(head, it));
    llvm::Value* end = b_.CreateAdd(lo, ext);


    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    auto* lineTy = llvm::FixedVectorType::get(elem, unsigned(lineElems));
    auto* stage = entry.CreateAlloca(lineTy, nullptr, store->buffer->name + ".line");
    stage->setAlignment(llvm::Align(64));
    auto line = makeVar(f->var->name + "_line", DType::Int64);
    emitLoop(line, b_.getInt64(0), lines, ForKind::Serial, 0, [&] {
      llvm::Value* offset = b_.CreateAdd(head, b_.CreateMul(vars_[line.get()], b_.getInt64(lineElems)));
      llvm::Value* base = b_.CreateAdd(lo, b_.CreateTrunc(offset, it));
      auto lane = makeVar(f->var->name + "_lane", f->var->dtype);
      emitLoop(lane, llvm::ConstantInt::get(it, 0), llvm::ConstantInt::get(it, lineElems), ForKind::Vectorized,
               int(lineElems), [&] {
                 llvm::Value* l = vars_[lane.get()];
                 vars_[f->var.get()] = b_.CreateAdd(base, l);
                 llvm::Value* v = valueToStored(b_, emitExpr(store->value), dt);
                 markParallelAccess(b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(elem, stage, l), llvm::Align(elemBytes)));
               });
      vars_.erase(lane.get());
      llvm::Value* whole = b_.CreateAlignedLoad(lineTy, stage, llvm::Align(64));
      storeLine(whole, b_.CreateInBoundsGEP(elem, first, offset));
    });
    vars_.erase(line.get());
    streamed_ = true;

    // The edges, [lo, mid) then [tail, end), by one copy of the loop that a
    // two-trip loop kept rolled runs twice (the body is emitted once more,
    // not twice: compile time).
    llvm::Value* tail = b_.CreateAdd(lo, b_.CreateTrunc(b_.CreateAdd(head, b_.CreateMul(lines, b_.getInt64(lineElems))), it));
    auto edge = makeVar(f->var->name + "_edge", DType::Int64);
    emitLoop(
        edge, b_.getInt64(0), b_.getInt64(2), ForKind::Serial, 0,
        [&] {
          llvm::Value* second = b_.CreateICmpNE(vars_[edge.get()], b_.getInt64(0));
          emitLoop(f->var, b_.CreateSelect(second, tail, lo), b_.CreateSelect(second, end, mid), ForKind::Vectorized,
                   forcedVectorWidth(*f, target_.vectors.vectorBits),
                   [&] { emit(f->body); });
        },
        /*keepRolled=*/true);
    vars_.erase(edge.get());
  }

  // The enclosing serial loop whose next iteration an access at `indices`
  // should be prefetched for, when the loops around it make a block read
  // more than kNextBlockBytes (no next-block prefetch) and the next block is
  // too far ahead: the innermost serial loop using one of the indices'
  // variables inside which the access covers at least kAheadMinBytes
  // (`innerBytes`: what the innermost loop covers) and at most
  // kNextBlockBytes. The blocks of a running sum over 128 rows, for
  // example, read 128 short rows per step of their column loop: too many
  // streams for the hardware prefetchers.
  const ForStmt* aheadLoop(const std::vector<Expr>& indices, int64_t innerBytes) const {
    for (auto it = forStack_.rbegin(); it != forStack_.rend(); ++it) {
      const ForStmt* f = *it;
      bool uses = false;
      for (const Expr& e : indices) uses = uses || usesVar(e, f->var);
      if (f->forKind == ForKind::Serial && uses && innerBytes >= kAheadMinBytes)
        return innerBytes <= kNextBlockBytes ? f : nullptr;
      int64_t n = 0;
      if (!constInt(f->extent, &n)) return nullptr;
      innerBytes *= n;
    }
    return nullptr;
  }

  // Prefetches the elements [lo, lo + ext) of `var` at `indices` of `buf`
  // (contiguous in `var`), for reading into L2 (prefetcht1) or for writing
  // (prefetchw: the line is fetched owned, so the store does not wait for
  // it): for the next block of the grid (`nextIterationOf` null,
  // next_block_prefetch.h), when the loops around
  // make the block read at most kNextBlockBytes, or for the next iteration of
  // `nextIterationOf`, when they make it read more.
  void prefetchAhead(const VarNode* var, const Buffer& buf, const std::vector<Expr>& indices, llvm::Value* lo,
                     llvm::Value* ext, bool write, const ForStmt* nextIterationOf) {
    std::vector<std::pair<const VarNode*, llvm::Value*>> saved;
    auto bind = [&](const VarNode* v, llvm::Value* value) {
      saved.push_back({v, vars_.count(v) ? vars_[v] : nullptr});
      vars_[v] = value;
    };
    if (nextIterationOf) {
      llvm::Value* k = vars_[nextIterationOf->var.get()];
      bind(nextIterationOf->var.get(), b_.CreateAdd(k, llvm::ConstantInt::get(k->getType(), 1)));
    } else {
      for (size_t i = 0; i < blockVars_.size(); ++i) bind(blockVars_[i], nextBlockValues_[i]);
    }
    bind(var, lo);
    llvm::Value* first = emitAddress(buf, indices, /*inBounds=*/false);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      if (it->second)
        vars_[it->first] = it->second;
      else
        vars_.erase(it->first);

    llvm::Type* i64t = b_.getInt64Ty();
    llvm::Value* addr = b_.CreatePtrToInt(first, i64t);
    llvm::Value* lead = b_.CreateAnd(addr, 63);
    llvm::Value* bytes = b_.CreateMul(b_.CreateSExt(ext, i64t), b_.getInt64(dtypeBytes(buf->dtype)));
    // Lines prefetched for the next block help only if they are still in L2
    // when it runs: not when this block reads more of the tensor than
    // kNextBlockBytes in between (the loops around this one: a block that
    // walks a tall strip, such as a column reduction's).
    llvm::Value* footprint = bytes;
    for (llvm::Value* e : loopExtents_) footprint = b_.CreateMul(footprint, e);
    llvm::Value* nearEnough = b_.CreateICmpSLE(footprint, b_.getInt64(kNextBlockBytes));
    if (nextIterationOf) nearEnough = b_.CreateNot(nearEnough);
    bytes = b_.CreateSelect(nearEnough, bytes, b_.getInt64(0));
    llvm::Value* lines = b_.CreateSelect(b_.CreateICmpSGT(bytes, b_.getInt64(0)),
                                         b_.CreateUDiv(b_.CreateAdd(b_.CreateAdd(bytes, lead), b_.getInt64(63)),
                                                       b_.getInt64(64)),
                                         b_.getInt64(0));
    llvm::Value* lineStart = b_.CreateGEP(b_.getInt8Ty(), first, b_.CreateNeg(lead));
    llvm::Function* prefetch = llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::prefetch, {b_.getPtrTy()});
    auto line = makeVar(buf->name + "_prefetch", DType::Int64);
    emitLoop(line, b_.getInt64(0), lines, ForKind::Serial, 0, [&] {
      llvm::Value* p = b_.CreateGEP(b_.getInt8Ty(), lineStart, b_.CreateMul(vars_[line.get()], b_.getInt64(64)));
      // read (locality 2, prefetcht1: into L2) or write (prefetchw), data
      b_.CreateCall(prefetch, {p, b_.getInt32(write ? 1 : 0), b_.getInt32(write ? 3 : 2), b_.getInt32(1)});
    });
    vars_.erase(line.get());
  }

  // One aligned non-temporal store of a 64-byte line (streaming_stores.h).
  void storeLine(llvm::Value* line, llvm::Value* addr) {
    auto* st = b_.CreateAlignedStore(line, addr, llvm::Align(64));
    st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
  }

  // The bytes of tensor `buf` (i64).
  llvm::Value* tensorBytes(const BufferNode& buf) {
    llvm::Value* bytes = b_.getInt64(dtypeBytes(buf.dtype));
    for (const Expr& d : buf.shape)
      bytes = b_.CreateMul(bytes, b_.CreateIntCast(emitExpr(d), b_.getInt64Ty(), isSigned(d->dtype)));
    return bytes;
  }

  // tlc_cpu_stream_store_min_bytes(), called once at the function's entry.
  llvm::Value* streamMinBytes() {
    if (!streamMinBytes_) {
      llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      llvm::FunctionCallee get =
          mod_.getOrInsertFunction("tlc_cpu_stream_store_min_bytes", llvm::FunctionType::get(b_.getInt64Ty(), false));
      streamMinBytes_ = entry.CreateCall(get, {}, "stream.min.bytes");
    }
    return streamMinBytes_;
  }

  // Streamed lines are weakly ordered: fence them before the function returns
  // (and so before the thread pool reports its blocks done).
  void fenceStreamedStores() {
    if (streamed_) b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::x86_sse_sfence));
  }

  void attachLoopMetadata(llvm::Instruction* latch, ForKind kind, llvm::MDNode* group, int width,
                          bool keepRolled = false) {
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

  void emitEvaluate(const EvaluateStmt* s) {
    auto* call = as<Call>(s->value);
    if (call && call->callee == cpu_intrinsics::kGemm) return emitGemmCall(call);
    if (call && cpu_intrinsics::isAtomic(call->callee)) {
      emitAtomic(call);
      return;
    }
    emitExpr(s->value);
  }

  const Load* addressedLoad(const Expr& e) {
    auto* c = as<Call>(e);
    TLC_CHECK(c && c->callee == cpu_intrinsics::kAddressOf && c->args.size() == 1 && as<Load>(c->args[0]),
              "intrinsic operand must be cpu.address_of(load)");
    return as<Load>(c->args[0]);
  }

  llvm::Value* i64(const Expr& e) { return b_.CreateIntCast(emitExpr(e), b_.getInt64Ty(), isSigned(e->dtype)); }

  void emitGemmCall(const Call* c) {
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

  // The element's value before the update.
  llvm::Value* emitAtomic(const Call* c) {
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

  // ---- kernels: outlined block functions run by the thread pool ----------

  void emitKernel(const KernelStmt* k) {
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

  const CpuTarget& target_;
  std::string kernelPrefix_;
  int kernelCount_ = 0;
  const BufferSet* writeOnly_;
  bool streamingAllowed_;
  llvm::Value* streamMinBytes_ = nullptr;
  // The extents (i64) of the loops around the statement being emitted.
  std::vector<llvm::Value*> loopExtents_;
  // The loops around the statement being emitted (emitFor's), innermost last.
  std::vector<const ForStmt*> forStack_;
  static constexpr int64_t kNextBlockBytes = 256 << 10;
  static constexpr int64_t kAheadMinBytes = 4 << 10;
  bool streamed_ = false;
  // In block functions: the values of the kernel's block index variables
  // for the next block (for next_block_prefetch.h).
  std::vector<llvm::Value*> nextBlockValues_;
  llvm::Value* heapLocals_ = nullptr;  // the exported function's own heap locals
  // The loops around the statement being emitted, innermost last: where
  // `break` goes, and where `continue` goes (made on first use).
  struct JumpTarget {
    llvm::BasicBlock* exit;
    llvm::BasicBlock* cont;
  };
  std::vector<JumpTarget> jumpTargets_;
  // Statements of the kernel body emitted before the block loop.
  std::unordered_set<const StmtNode*> hoisted_;

  // Binds the buffers of `body`'s leading Allocs that planLocals puts on the
  // heap to parts of one allocation made here; returns it (null: none).
  llvm::Value* allocateHeapLocals(const Stmt& body) {
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

  void freeHeapLocals(llvm::Value* heap) {
    if (!heap) return;
    llvm::FunctionCallee release = mod_.getOrInsertFunction(
        "tlc_cpu_free_local", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
    b_.CreateCall(release, {heap});
  }

 public:
  // The function's failure record, when its kernels can fail.
  bool startFailureRecord(const PrimFunc& f) {
    if (!reporting_.checkBounds && !usesHeapLocals(f.body, mod_.getDataLayout(), ctx_)) return false;
    createFailureRecord();
    failureExit_ = llvm::BasicBlock::Create(ctx_, "done", fn_);
    return true;
  }
  void bindParams(const PrimFunc& f) {
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
  void finish() {
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
};

}  // namespace

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
