// Emission for fragments held in registers with a row-group layout
// (cuda_fragment_layout.h): Parallel nests become unrolled loops over the
// calling thread's registers, copies move each thread's own elements
// (16-byte vectors where the run is contiguous and aligned), and no barrier is
// needed since no other thread sees these registers. Their reductions are in
// cuda_register_reduce.cpp.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_region_index.h"
#include "compiler/ir/functor.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;
using namespace regions;

std::vector<const ForStmt*> parallelNest(const ForStmt* f, Stmt* body);  // cuda_mma.cpp

namespace {

// Lets, ifs and stores only: a body the simplifier may rebuild (no loop or
// tile statement that the emitter's plans know by its node).
bool plainBody(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Store: return true;
    case StmtKind::Let: return plainBody(as<LetStmt>(s)->body);
    case StmtKind::If: {
      auto* i = as<IfStmt>(s);
      return plainBody(i->thenBody) && (!i->elseBody || plainBody(i->elseBody));
    }
    case StmtKind::Seq:
      for (auto& x : as<SeqStmt>(s)->stmts)
        if (!plainBody(x)) return false;
      return true;
    default: return false;
  }
}

}  // namespace

KernelEmitter::TileLoops KernelEmitter::openTileLoops(const RegisterLayout& l, FragmentRole kind, bool vectorLoop,
                                                      bool pairs) {
  TileLoops loops;
  auto loop = [&](const std::string& hint, int64_t n) {
    Var v = makeVar(hint);
    markNonNegative(v);
    open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(v) + " = 0; " + varName(v) +
         " < " + std::to_string(n) + "; ++" + varName(v) + ")");
    ++loops.opened;
    return makeVarRef(v);
  };
  Expr ri = makeInt(0), chunk = makeInt(0), lane = makeInt(0);
  Expr tid = threadIdx();
  if (kind != FragmentRole::Columns) ri = loop("ri", l.rowsPerThread());
  if (kind != FragmentRole::Rows) chunk = loop("chunk", l.chunksPerRow());
  // The padding slots of a tile the threads do not divide hold no element.
  Expr inRange = logicalAnd(kind != FragmentRole::Columns ? l.rowInRange(ri, tid) : makeBool(true),
                            kind != FragmentRole::Rows ? l.chunkInRange(chunk, tid) : makeBool(true));
  if (!isAlwaysTrue(inRange)) {
    open("if (" + expr(inRange) + ")");
    ++loops.opened;
  }
  if (kind != FragmentRole::Rows) {
    if (pairs) {
      loops.pairLane = makeVar("v");
      markNonNegative(loops.pairLane);
      lane = add(mul(loop("pair", l.vector / 2), makeInt(2)), makeVarRef(loops.pairLane));
    } else if (vectorLoop) {
      lane = loop("v", l.vector);
    }
  }
  loops.row = l.rowOf(ri, tid);
  loops.col = l.colOf(chunk, lane, tid);
  loops.reg[(int)FragmentRole::Tile] = l.tileRegister(ri, chunk, lane);
  loops.reg[(int)FragmentRole::Rows] = ri;
  loops.reg[(int)FragmentRole::Columns] = add(mul(chunk, makeInt(l.vector)), lane);
  return loops;
}

void KernelEmitter::closeTileLoops(const TileLoops& loops) {
  for (int k = 0; k < loops.opened; ++k) close();
}

void KernelEmitter::emitRegisterNest(const ForStmt* f, const RegisterNest& nest) {
  Stmt body;
  auto loops = parallelNest(f, &body);
  // A plain body is simplified knowing the nest's ranges: index arithmetic
  // that only looks like it depends on the element folds away (the group
  // of a scale, `floordiv(k * 64 + j, 128)` for j < 64).
  if (plainBody(body)) {
    std::vector<passes::VarRange> ranges;
    for (auto* l : loops) ranges.push_back({l->var, l->min, l->extent});
    body = passes::simplifyStmt(body, ranges);
  }
  const StoreStmt* paired = pairedStore(body, loops, nest);
  open("");
  TileLoops t = openTileLoops(nest.layout, nest.kind, true, paired != nullptr);
  std::vector<const BufferNode*> bound;
  for (auto& [b, tile] : tiles_.buffers) {
    if (tile.group != nest.group) continue;
    if (nest.kind != FragmentRole::Tile && tile.role != nest.kind) continue;
    // Tiles of another width (an mma group's) and their column vectors are not this nest's.
    if (tile.role != FragmentRole::Rows && tile.layout.cols != nest.layout.cols) continue;
    fragmentRegister_[b] = t.reg[(int)tile.role];
    bound.push_back(b);
  }
  if (paired) body = pairColumns(body, loops[1], t);
  // The loop variables the body reads other than as indices of the bound
  // registers (which the register index replaces) are defined.
  struct Reads : IRVisitor {
    const std::unordered_map<const BufferNode*, Expr>& regs;
    std::unordered_set<const VarNode*> vars;
    explicit Reads(const std::unordered_map<const BufferNode*, Expr>& r) : regs(r) {}
    void visitVarRef(const VarRef* r) override { vars.insert(r->var.get()); }
    void visitLoad(const Load* l) override {
      if (!regs.count(l->buffer.get())) IRVisitor::visitLoad(l);
    }
    void visitStore(const StoreStmt* st) override {
      if (!regs.count(st->buffer.get())) return IRVisitor::visitStore(st);
      visit(st->value);
    }
  } reads(fragmentRegister_);
  reads.visit(body);
  auto define = [&](const ForStmt* l, const Expr& value) {
    if (!reads.vars.count(l->var.get())) return;
    markNonNegative(l->var);
    Expr v = value->dtype == l->var->dtype ? value : makeCast(l->var->dtype, value);
    line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(v) + ";");
  };
  auto defineLoopVars = [&] {
    if (nest.kind == FragmentRole::Tile) {
      define(loops[0], t.row);
      define(loops[1], t.col);
    } else {
      define(loops[0], nest.kind == FragmentRole::Rows ? t.row : t.col);
    }
  };
  std::string outerOwner = replicaOwner_;
  if (nest.kind != FragmentRole::Tile) {
    // Every replica of a vector runs the nest; one of them writes memory.
    const RegisterLayout& l = nest.layout;
    replicaOwner_ = expr(nest.kind == FragmentRole::Rows ? l.rowVectorOwner(threadIdx()) : l.columnVectorOwner(threadIdx()));
  }
  ++parallelDepth_;
  if (paired) {
    emitPairedBody(body, t, defineLoopVars);
  } else {
    defineLoopVars();
    emitThread(body);
  }
  --parallelDepth_;
  replicaOwner_ = outerOwner;
  for (auto* b : bound) fragmentRegister_.erase(b);
  closeTileLoops(t);
  close();
}

namespace {

// A region whose two non-unit dimensions are `rows` x `cols` (only `cols`
// for a one-row tile), the last of them the buffer's contiguous dimension: a
// tile row is a contiguous run.
bool rowContiguous(const Region& r, const RegisterLayout& l) {
  auto dims = nonUnitDims(r);
  int64_t a, b;
  if (l.rows == 1 && l.cols > 1 && dims.size() == 1)
    return dims[0] == (int)r.ranges.size() - 1 && constInt(r.ranges[dims[0]].extent, &b) && b == l.cols;
  return dims.size() == 2 && dims[1] == (int)r.ranges.size() - 1 && constInt(r.ranges[dims[0]].extent, &a) &&
         constInt(r.ranges[dims[1]].extent, &b) && a == l.rows && b == l.cols;
}

// A region with one non-unit dimension of `cols` elements, the buffer's contiguous one.
bool columnContiguous(const Region& r, const RegisterLayout& l) {
  auto dims = nonUnitDims(r);
  int64_t a;
  return dims.size() == 1 && dims[0] == (int)r.ranges.size() - 1 && constInt(r.ranges[dims[0]].extent, &a) && a == l.cols;
}

}  // namespace

bool KernelEmitter::vectorRuns(const Region& other, const RegisterTile& tile) {
  const RegisterLayout& l = tile.layout;
  bool contiguous = tile.role == FragmentRole::Tile      ? rowContiguous(other, l)
                    : tile.role == FragmentRole::Columns ? columnContiguous(other, l)
                                                         : false;
  const BufferInfo& pi = bufs_[other.buffer.get()];
  return l.vector > 1 && contiguous && pi.place != Placement::Register && !pi.layout &&
         (pi.place != Placement::Shared || (pi.rowPad % l.vector == 0 && (pi.versions == 1 || pi.elems % l.vector == 0)));
}

bool KernelEmitter::packableLoad(const CopyStmt* c) {
  auto it = bufs_.find(c->dst.buffer.get());
  if (it == bufs_.end() || !it->second.tile || it->second.tile->role != FragmentRole::Tile ||
      it->second.tile->layout.isMma())
    return false;
  return vectorRuns(c->src, *it->second.tile) && (it->second.tile->layout.vector * dtypeBytes(c->src.buffer->dtype)) % 4 == 0;
}

void KernelEmitter::emitTileCopy(const CopyStmt* c, bool packed) {
  const Buffer &sb = c->src.buffer, &db = c->dst.buffer;
  BufferInfo &s = bufs_[sb.get()], &d = bufs_[db.get()];
  DType ts = sb->dtype, td = packed ? ts : db->dtype;
  open("");
  if (s.tile && d.tile) {
    // Same group and role: register to register.
    line("#pragma unroll");
    line("for (int r = 0; r < " + std::to_string(d.elems) + "; ++r) " + d.name + "[r] = " + cast(td, ts, s.name + "[r]") +
         ";");
    close();
    return;
  }
  bool load = d.tile.has_value();
  const Buffer& fb = load ? db : sb;
  const Region& other = load ? c->src : c->dst;
  const RegisterTile& tile = load ? *d.tile : *s.tile;
  const RegisterLayout& l = tile.layout;
  auto dims = nonUnitDims(other);
  auto ext = extentsOf(other, dims);
  // The buffer index of the fragment element (row, col) (or of element `col`/`row` of a vector).
  auto partnerIndex = [&](const Expr& row, const Expr& col) {
    if (tile.role == FragmentRole::Tile && rowContiguous(other, l))
      return dims.size() == 2 ? regionIndex(other, dims, {row, col}) : regionIndex(other, dims, {col});
    Expr flat = tile.role == FragmentRole::Tile ? add(mul(row, makeInt(l.cols)), col)
                : tile.role == FragmentRole::Rows ? row
                                                  : col;
    return regionIndex(other, dims, unflatten(flat, ext));
  };
  std::string zero = cast(td, DType::Int32, "0");
  auto scalarMove = [&](const Expr& row, const Expr& col, const Expr& reg) {
    fragmentRegister_[fb.get()] = reg;
    auto idx = partnerIndex(row, col);
    Expr in = inBounds(other.buffer, idx);
    if (load) {
      std::string v = cast(td, ts, access(sb, idx));
      if (!isAlwaysTrue(in)) v = "(" + expr(in) + " ? " + v + " : " + zero + ")";
      if (packed) line("tlc::pack<" + typeName(ts) + ">(" + d.name + ", " + expr(reg) + ", " + v + ");");
      else line(access(db, {}) + " = " + v + ";");
    } else {
      std::string store = access(db, idx) + " = " + cast(td, ts, access(sb, {})) + ";";
      line(isAlwaysTrue(in) ? store : "if (" + expr(in) + ") " + store);
    }
    fragmentRegister_.erase(fb.get());
  };

  DType tp = other.buffer->dtype;
  const BufferInfo& pi = bufs_[other.buffer.get()];
  // A run wider than 16 bytes of this buffer's elements takes several accesses.
  int64_t piece = std::min<int64_t>(l.vector, 16 / dtypeBytes(tp));
  bool vector = vectorRuns(other, tile);
  // Replicated vectors are written out by one copy only.
  auto guard = [&] {
    if (load || tile.role == FragmentRole::Tile) return false;
    Expr owner = tile.role == FragmentRole::Rows ? l.rowVectorOwner(threadIdx()) : l.columnVectorOwner(threadIdx());
    if (isAlwaysTrue(owner)) return false;
    open("if (" + expr(owner) + ")");
    return true;
  };
  auto scalarLoops = [&] {
    TileLoops t = openTileLoops(l, tile.role, true);
    bool guarded = guard();
    scalarMove(t.row, t.col, t.reg[(int)tile.role]);
    if (guarded) close();
    closeTileLoops(t);
  };
  if (!vector) {
    scalarLoops();
    close();
    return;
  }
  // Whole tile inside the tensor with every run aligned: straight-line vector
  // accesses (no branch per run, so all loads are in flight together);
  // otherwise element by element with masks.
  Expr fast = wholeVectorRows(other, l.vector);
  std::string cond = expr(fast);
  if (pi.place == Placement::Global)
    cond = (cond == "true" ? "" : cond + " && ") + "tlc::aligned(" + pi.name + ", " + std::to_string(l.vector * dtypeBytes(tp)) + ")";
  open("if (" + cond + ")");
  {
    TileLoops t = openTileLoops(l, tile.role, false);
    bool guarded = guard();
    auto idx = partnerIndex(t.row, t.col);
    std::string ptr = fresh("run_ptr"), run = fresh("run"), P = std::to_string(piece);
    line((load ? "const " : "") + typeName(tp) + "* " + ptr + " = " + pi.name + " + " + expr(offsetExpr(other.buffer, idx)) +
         ";");
    if (!packed) line("__align__(16) " + typeName(tp) + " " + run + "[" + std::to_string(l.vector) + "];");
    auto vectorMoves = [&](const std::string& to, const std::string& from) {
      for (int64_t k = 0; k < l.vector; k += piece) {
        std::string off = k ? " + " + std::to_string(k) : "";
        line("tlc::copy_vec<" + typeName(tp) + ", " + P + ">(" + to + off + ", " + from + off + ");");
      }
    };
    Expr reg0 = t.reg[(int)tile.role];
    auto regAt = [&](int64_t v) { fragmentRegister_[fb.get()] = add(reg0, makeInt(v)); };
    if (packed) {
      // Straight into the 32-bit words of the registers: nothing waits for the load here.
      int64_t words = piece * dtypeBytes(tp) / 4;
      for (int64_t k = 0; k < l.vector; k += piece)
        line("tlc::copy_vec<unsigned, " + std::to_string(words) + ">(" + d.name + " + " +
             expr(add(mul(reg0, makeInt(dtypeBytes(tp))), makeInt(k * dtypeBytes(tp)))) + " / 4, reinterpret_cast<const unsigned*>(" +
             ptr + (k ? " + " + std::to_string(k) : "") + "));");
    } else if (load) {
      vectorMoves(run, ptr);
      for (int64_t v = 0; v < l.vector; ++v) {
        regAt(v);
        line(access(db, {}) + " = " + cast(td, ts, run + "[" + std::to_string(v) + "]") + ";");
      }
    } else {
      for (int64_t v = 0; v < l.vector; ++v) {
        regAt(v);
        line(run + "[" + std::to_string(v) + "] = " + cast(td, ts, access(sb, {})) + ";");
      }
      vectorMoves(ptr, run);
    }
    fragmentRegister_.erase(fb.get());
    if (guarded) close();
    closeTileLoops(t);
  }
  close("} else {");
  ++indent_;
  scalarLoops();
  close();
  close();
}

}  // namespace tlc::cuda
