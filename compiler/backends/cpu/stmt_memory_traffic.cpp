// The statement emitter's members that move memory faster than the plain
// loops (stmt_emitter.h): transposing nests through registers
// (tile_transpose.h), streamed stores of whole lines (streaming_stores.h),
// and prefetches for the next block or the next iteration of a loop
// (next_block_prefetch.h).
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>

#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/backends/cpu/next_block_prefetch.h"
#include "compiler/backends/cpu/stmt_emitter.h"
#include "compiler/backends/cpu/vector_width.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cpu {

using namespace ir;

void StmtEmitter::emitTransposeNest(const TransposeNest& t) {
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
    // store would wait for its line (fetched into L1 ahead of the stores).
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

void StmtEmitter::emitStreamingFor(const ForStmt* f, const StoreStmt* store, llvm::Value* lo, llvm::Value* ext) {
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

const ForStmt* StmtEmitter::aheadLoop(const std::vector<Expr>& indices, int64_t innerBytes) const {
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

void StmtEmitter::prefetchAhead(const VarNode* var, const Buffer& buf, const std::vector<Expr>& indices, llvm::Value* lo,
                   llvm::Value* ext, bool write, const ForStmt* nextIterationOf, const VarNode* lane) {
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
  if (lane) bind(lane, llvm::ConstantInt::get(valueType(ctx_, lane->dtype), 0));
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
    // A line to read goes into L2 (prefetcht1), one to store into L1
    // (prefetcht0). Not prefetchw: on a Xeon, fetching the stored lines owned
    // made transposes slower than fetching them shared into L1 (2 threads:
    // permute_3d 2.42 -> 2.06 ms, a running sum over 128-row tiles 22.1 ->
    // 15.5 ms, bench/RESULTS.md).
    b_.CreateCall(prefetch, {p, b_.getInt32(0), b_.getInt32(write ? 3 : 2), b_.getInt32(1)});
  });
  vars_.erase(line.get());
}

void StmtEmitter::storeLine(llvm::Value* line, llvm::Value* addr) {
  auto* st = b_.CreateAlignedStore(line, addr, llvm::Align(64));
  st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                  llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
}

llvm::Value* StmtEmitter::tensorBytes(const BufferNode& buf) {
  llvm::Value* bytes = b_.getInt64(dtypeBytes(buf.dtype));
  for (const Expr& d : buf.shape)
    bytes = b_.CreateMul(bytes, b_.CreateIntCast(emitExpr(d), b_.getInt64Ty(), isSigned(d->dtype)));
  return bytes;
}

llvm::Value* StmtEmitter::streamMinBytes() {
  if (!streamMinBytes_) {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::FunctionCallee get =
        mod_.getOrInsertFunction("tlc_cpu_stream_store_min_bytes", llvm::FunctionType::get(b_.getInt64Ty(), false));
    streamMinBytes_ = entry.CreateCall(get, {}, "stream.min.bytes");
  }
  return streamMinBytes_;
}

void StmtEmitter::fenceStreamedStores() {
  if (streamed_) b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::x86_sse_sfence));
}

}  // namespace tlc::cpu
