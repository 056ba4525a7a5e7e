// Emission for fragments held in registers with a row-group layout
// (cuda_fragment_layout.h): Parallel nests become unrolled loops over the
// calling thread's registers, copies move each thread's own elements
// (16-byte vectors where the run is contiguous and aligned), and no barrier is
// needed since no other thread sees these registers. Row-wise reductions are
// in cuda_tile_ops.cpp (emitReduce).
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_region_index.h"

namespace tlc::cuda {

using namespace ir;
using namespace regions;

std::vector<const ForStmt*> parallelNest(const ForStmt* f, Stmt* body);  // cuda_mma.cpp

KernelEmitter::TileLoops KernelEmitter::openTileLoops(const RowGroupLayout& l, FragmentRole kind, bool vectorLoop) {
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
  if (kind != FragmentRole::Columns) ri = loop("ri", l.rowsPerThread());
  if (kind != FragmentRole::Rows) {
    chunk = loop("chunk", l.chunksPerRow());
    if (vectorLoop) lane = loop("v", l.vector);
  }
  Expr tid = threadIdx();
  loops.row = add(mul(ri, makeInt(l.rowSlots())), floorDiv(tid, makeInt(l.group)));
  loops.col = add(mul(add(mul(chunk, makeInt(l.group)), floorMod(tid, makeInt(l.group))), makeInt(l.vector)), lane);
  Expr colReg = add(mul(chunk, makeInt(l.vector)), lane);
  loops.reg[(int)FragmentRole::Tile] = add(mul(ri, makeInt(l.colsPerThread())), colReg);
  loops.reg[(int)FragmentRole::Rows] = ri;
  loops.reg[(int)FragmentRole::Columns] = colReg;
  return loops;
}

void KernelEmitter::closeTileLoops(const TileLoops& loops) {
  for (int k = 0; k < loops.opened; ++k) close();
}

void KernelEmitter::emitRegisterNest(const ForStmt* f, const RegisterNest& nest) {
  Stmt body;
  auto loops = parallelNest(f, &body);
  open("");
  TileLoops t = openTileLoops(nest.layout, nest.kind, true);
  auto define = [&](const ForStmt* l, const Expr& value) {
    markNonNegative(l->var);
    Expr v = value->dtype == l->var->dtype ? value : makeCast(l->var->dtype, value);
    line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(v) + ";");
  };
  if (nest.kind == FragmentRole::Tile) {
    define(loops[0], t.row);
    define(loops[1], t.col);
  } else {
    define(loops[0], nest.kind == FragmentRole::Rows ? t.row : t.col);
  }
  std::vector<const BufferNode*> bound;
  for (auto& [b, tile] : tiles_.buffers) {
    if (tile.group != nest.group) continue;
    if (nest.kind != FragmentRole::Tile && tile.role != nest.kind) continue;
    fragmentRegister_[b] = t.reg[(int)tile.role];
    bound.push_back(b);
  }
  ++parallelDepth_;
  emitThread(body);
  --parallelDepth_;
  for (auto* b : bound) fragmentRegister_.erase(b);
  closeTileLoops(t);
  close();
}

namespace {

// A region whose two non-unit dimensions are `rows` x `cols`, the last of
// them the buffer's contiguous dimension: a tile row is a contiguous run.
bool rowContiguous(const Region& r, const RowGroupLayout& l) {
  auto dims = nonUnitDims(r);
  int64_t a, b;
  return dims.size() == 2 && dims[1] == (int)r.ranges.size() - 1 && constInt(r.ranges[dims[0]].extent, &a) &&
         constInt(r.ranges[dims[1]].extent, &b) && a == l.rows && b == l.cols;
}

// A region with one non-unit dimension of `cols` elements, the buffer's contiguous one.
bool columnContiguous(const Region& r, const RowGroupLayout& l) {
  auto dims = nonUnitDims(r);
  int64_t a;
  return dims.size() == 1 && dims[0] == (int)r.ranges.size() - 1 && constInt(r.ranges[dims[0]].extent, &a) && a == l.cols;
}

}  // namespace

void KernelEmitter::emitTileCopy(const CopyStmt* c) {
  const Buffer &sb = c->src.buffer, &db = c->dst.buffer;
  BufferInfo &s = bufs_[sb.get()], &d = bufs_[db.get()];
  DType ts = sb->dtype, td = db->dtype;
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
  const RowGroupLayout& l = tile.layout;
  auto dims = nonUnitDims(other);
  auto ext = extentsOf(other, dims);
  // The buffer index of the fragment element (row, col) (or of element `col`/`row` of a vector).
  auto partnerIndex = [&](const Expr& row, const Expr& col) {
    if (tile.role == FragmentRole::Tile && rowContiguous(other, l)) return regionIndex(other, dims, {row, col});
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
      line(access(db, {}) + " = " + v + ";");
    } else {
      std::string store = access(db, idx) + " = " + cast(td, ts, access(sb, {})) + ";";
      line(isAlwaysTrue(in) ? store : "if (" + expr(in) + ") " + store);
    }
    fragmentRegister_.erase(fb.get());
  };

  bool contiguous = tile.role == FragmentRole::Tile      ? rowContiguous(other, l)
                    : tile.role == FragmentRole::Columns ? columnContiguous(other, l)
                                                         : false;
  bool vector = l.vector > 1 && contiguous &&
                bufs_[other.buffer.get()].place != Placement::Register && !bufs_[other.buffer.get()].layout;
  if (!vector) {
    TileLoops t = openTileLoops(l, tile.role, true);
    // Replicated vectors are written out by one copy only.
    if (!load && tile.role == FragmentRole::Rows && l.group > 1) open("if (tid % " + std::to_string(l.group) + " == 0)");
    if (!load && tile.role == FragmentRole::Columns && l.rowSlots() > 1) open("if (tid < " + std::to_string(l.group) + ")");
    scalarMove(t.row, t.col, t.reg[(int)tile.role]);
    if (!load && tile.role != FragmentRole::Tile && (tile.role == FragmentRole::Rows ? l.group : l.rowSlots()) > 1) close();
    closeTileLoops(t);
    close();
    return;
  }
  // One V-element run per (row, chunk): a vector access when the run is in
  // bounds and aligned, element by element otherwise.
  TileLoops t = openTileLoops(l, tile.role, false);
  bool guarded = !load && tile.role == FragmentRole::Columns && l.rowSlots() > 1;
  if (guarded) open("if (tid < " + std::to_string(l.group) + ")");
  std::string V = std::to_string(l.vector);
  DType tp = other.buffer->dtype;
  auto idx = partnerIndex(t.row, t.col);
  auto lastIdx = idx;
  lastIdx.back() = add(lastIdx.back(), makeInt(l.vector - 1));
  std::string ptr = fresh("run_ptr");
  line((load ? "const " : "") + typeName(tp) + "* " + ptr + " = " + bufs_[other.buffer.get()].name + " + " +
       expr(offsetExpr(other.buffer, idx)) + ";");
  Expr full = logicalAnd(inBounds(other.buffer, idx), inBounds(other.buffer, lastIdx));
  // A run wider than 16 bytes of this buffer's elements takes several accesses.
  int64_t piece = std::min<int64_t>(l.vector, 16 / dtypeBytes(tp));
  std::string P = std::to_string(piece);
  auto vectorMoves = [&](const std::string& to, const std::string& from) {
    for (int64_t k = 0; k < l.vector; k += piece) {
      std::string off = k ? " + " + std::to_string(k) : "";
      line("tlc::copy_vec<" + typeName(tp) + ", " + P + ">(" + to + off + ", " + from + off + ");");
    }
  };
  std::string cond = "tlc::aligned(" + ptr + ", " + std::to_string(piece * dtypeBytes(tp)) + ")";
  if (!isAlwaysTrue(full)) cond = expr(full) + " && " + cond;
  std::string run = fresh("run");
  Expr reg0 = t.reg[(int)tile.role];
  auto regAt = [&](int64_t v) { return fragmentRegister_[fb.get()] = add(reg0, makeInt(v)); };
  open("if (" + cond + ")");
  line("__align__(16) " + typeName(tp) + " " + run + "[" + V + "];");
  if (load) {
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
  close("} else {");
  ++indent_;
  Var v = makeVar("v");
  markNonNegative(v);
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + varName(v) + " = 0; " + varName(v) + " < " + V +
       "; ++" + varName(v) + ")");
  scalarMove(t.row, add(t.col, makeVarRef(v)), add(reg0, makeVarRef(v)));
  close();
  close();
  if (guarded) close();
  fragmentRegister_.erase(fb.get());
  closeTileLoops(t);
  close();
}

}  // namespace tlc::cuda
