// Gather nests run ahead by a pipeline (ir/gather_nest.h): the Parallel
// loops that fill a shared tile from global memory at computed indices (an
// implicit-GEMM convolution's im2col tile) become asynchronous copies.
//
// The nest's innermost loop is cut into runs of `lanes` consecutive
// iterations (16, 8 or 4 bytes of the tile's elements). A run moves as one
// `cp.async` when, with the innermost variable j = r * lanes + l (l the lane,
// in [0, lanes)), the simplifier proves that
//  - the stored value is a load of a global tensor, or a select between such
//    a load and zero whose condition is a conjunction of terms that do not
//    depend on l (rows and columns of the image outside it read zero) and
//    of comparisons whose one side moves with l and whose other does not
//    (`k * 32 + j < K`: the edge of a runtime size), which hold for every
//    lane when they hold for the first and the last;
//  - the load's indices other than its last do not depend on l, and its last
//    is the first lane's plus l: the lanes read consecutive elements of one
//    row of the tensor;
//  - the tile's offsets (its layout: swizzled, padded or in panels) are the
//    first lane's plus l: the lanes write consecutive bytes.
// Elements of 4 or 8 bytes that no wider run covers move as runs of one
// element, which need no proof.
// Everything is evaluated at the run's first lane (the lets, the condition,
// the addresses), the edge comparisons also at its last. A run whose lane-free
// terms are false is zero-filled by a cp.async that reads nothing; a run whose
// terms all hold at both ends moves by one cp.async when its source address
// is aligned to the access size at run time; any other run (one that an edge
// cuts, a source whose rows are not aligned) moves element by element, as
// does every run of a nest for which the proof fails.
//
// Two things keep a pipeline's producer from spending its time on address
// arithmetic (a convolution's producer issues a cp.async per 16 bytes):
//  - the source offset is split into the terms that stay the same through
//    the pipelined loop and those that move with it (for im2col: image,
//    output row and column against filter tap and channel), each summed in
//    64 bits, so that the compiler computes the first once per thread;
//  - where the offset of every run's first element is a known multiple of
//    the run's lanes, the runs are aligned exactly when the tensor is: one
//    test of the tensor's address picks a form in which each run is a
//    single cp.async, zero-filling where the image ends, with no branch.
#include <cmath>
#include <functional>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_vector_loops.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;

namespace {

bool isZero(const Expr& e) {
  if (auto* c = as<Cast>(e)) return isZero(c->value);
  int64_t v = 0;
  if (constInt(e, &v)) return v == 0;
  if (auto* f = as<FloatImm>(e)) return f->value == 0.0 && !std::signbit(f->value);
  return false;
}

// The indices `idx` of a load in the nest whose lets are `lets`, each split
// into two int64 sums: the terms that use neither `iterVar` nor a let that
// does, and the terms that do. Lets that read no memory are inlined first,
// so that the terms are those of the index arithmetic.
std::pair<std::vector<Expr>, std::vector<Expr>> splitByIteration(const std::vector<Expr>& idx,
                                                                 const std::vector<const LetStmt*>& lets,
                                                                 const VarNode* iterVar) {
  std::unordered_set<const VarNode*> moving{iterVar};
  VarMap inlined;
  for (const LetStmt* l : lets) {
    UsesVars u(moving);
    u.visit(l->value);
    if (u.found) moving.insert(l->var.get());
    if (!u.loads) inlined[l->var.get()] = substitute(l->value, inlined);
  }
  std::vector<Expr> same, moves;
  for (const Expr& i : idx) {
    LinearForm f = linearForm(substitute(i, inlined));
    Expr s = makeInt(f.constant, DType::Int64), m = makeInt(0, DType::Int64);
    for (const auto& [term, coeff] : f.terms) {
      UsesVars u(moving);
      u.visit(term);
      Expr t = mul(makeCast(DType::Int64, term), makeInt(coeff, DType::Int64));
      (u.found ? m : s) = add(u.found ? m : s, t);
    }
    same.push_back(s);
    moves.push_back(m);
  }
  return {same, moves};
}

}  // namespace

// The run length of `g` (1: element by element), its global load, and the
// condition under which the load is stored, split into lane-free terms and
// edge comparisons.
KernelEmitter::GatherRuns KernelEmitter::planGatherRuns(const GatherNest& g, const VarNode* iterVar) {
  GatherRuns out;
  const Expr& value = g.store->value;
  Expr cond;
  if (auto* l = as<Load>(value)) {
    out.load = l;
  } else if (auto* s = as<Select>(value)) {
    if (auto* l = as<Load>(s->t); l && isZero(s->f)) {
      out.load = l;
      cond = s->cond;
    } else if (auto* l2 = as<Load>(s->f); l2 && isZero(s->t)) {
      out.load = l2;
      cond = makeUnary(UnaryOp::Not, s->cond, s->loc);
    }
  }
  const BufferNode* tile = g.tile;
  if (!out.load || out.load->buffer->scope != MemScope::Global || out.load->buffer->dtype != tile->dtype ||
      !options_.asyncCopy)
    return out;
  const BufferInfo& dst = bufs_[tile];
  if (dst.place != Placement::Shared || (dst.layout && dst.layout->isTabulated())) return out;
  // The lets, inlined, so that the proofs see the innermost variable.
  for (const LetStmt* l : g.lets) out.lets[l->var.get()] = substitute(l->value, out.lets);
  const ForStmt* inner = g.loops.back();
  int64_t extent = 0;
  constInt(inner->extent, &extent);
  const int64_t eb = dtypeBytes(tile->dtype);
  std::vector<Expr> terms;
  if (cond) conjuncts(cond, &terms);
  for (int64_t bytes : {16, 8, 4}) {
    int64_t lanes = bytes / eb;
    if (lanes < 1 || bytes % eb || extent % lanes) continue;
    if (lanes == 1) {
      // Runs of one element (a column of 4-byte scales): nothing moves with a
      // lane, and each is aligned where the tensor is.
      out.lanes = 1;
      out.bytes = bytes;
      out.free = terms;
      splitGatherOffset(g, iterVar, &out);
      out.lanesAligned = out.invariantOffset != nullptr;
      return out;
    }
    Var run = makeVar("run"), lane = makeVar("lane");
    std::vector<passes::VarRange> ranges;
    for (size_t d = 0; d + 1 < g.loops.size(); ++d) ranges.push_back({g.loops[d]->var, g.loops[d]->min, g.loops[d]->extent});
    ranges.push_back({run, makeInt(0), makeInt(extent / lanes)});
    ranges.push_back({lane, makeInt(0), makeInt(lanes)});
    Expr first = mul(makeVarRef(run), makeInt(lanes));
    Expr at = add(first, makeVarRef(lane));
    // `e` at lane l and at the first lane, simplified.
    auto atLane = [&](const Expr& e) {
      return passes::simplifyExpr(substitute(substitute(e, out.lets), inner->var, at), ranges);
    };
    auto atFirst = [&](const Expr& e) {
      return passes::simplifyExpr(substitute(substitute(e, out.lets), inner->var, first), ranges);
    };
    LaneProbe probe{atLane, atFirst, lane};
    std::vector<Expr> free, edges;
    bool ok = true;
    for (const Expr& t : terms) {
      if (probe.same(t)) {
        free.push_back(t);
        continue;
      }
      if (!probe.edge(t)) ok = false;
      edges.push_back(t);
    }
    const std::vector<Expr>& idx = out.load->indices;
    for (size_t d = 0; ok && d + 1 < idx.size(); ++d) ok = probe.same(idx[d]);
    ok = ok && !idx.empty() && probe.moves(idx.back());
    std::vector<Expr> dstIdx;
    for (const ForStmt* l : g.loops) dstIdx.push_back(makeVarRef(l->var));
    ok = ok && probe.moves(offsetExpr(g.store->buffer, dstIdx));
    if (!ok) continue;
    out.lanes = lanes;
    out.bytes = bytes;
    out.free = free;
    out.edges = edges;
    splitGatherOffset(g, iterVar, &out);
    out.lanesAligned =
        out.invariantOffset && knownMultiple(atFirst(offsetExpr(out.load->buffer, idx))) % lanes == 0;
    return out;
  }
  return out;
}

// The load's offset as its invariant and moving sums (GatherRuns), where the
// tensor is addressed row-major and the nest is issued by a pipelined loop.
void KernelEmitter::splitGatherOffset(const GatherNest& g, const VarNode* iterVar, GatherRuns* r) {
  if (!iterVar || bufs_[r->load->buffer.get()].layout) return;
  auto [same, moves] = splitByIteration(r->load->indices, g.lets, iterVar);
  r->invariantOffset = passes::simplifyExpr(offsetExpr(r->load->buffer, same));
  r->movingOffset = passes::simplifyExpr(offsetExpr(r->load->buffer, moves));
}

// Issues the gather nest `g` over `threads` threads, the calling one being
// `thread` (a C expression in [0, threads)): each thread takes runs
// `thread`, `thread + threads`, ... of the tile. Runs move by cp.async (the
// caller commits them, or has them arrive on an mbarrier), or element by
// element with ordinary loads and stores; with `syncFlag` (the C name of a
// bool), those set it. `iterVar`: the variable of the pipelined loop that
// issues the nest (null: none).
void KernelEmitter::emitGather(const GatherNest& g, const std::string& thread, int64_t threads,
                               const std::string& syncFlag, const VarNode* iterVar) {
  LocationScope at(*this, g.outer->loc);
  GatherRuns r = planGatherRuns(g, iterVar);
  const ForStmt* inner = g.loops.back();
  int64_t extent = 0, runs = 1;
  constInt(inner->extent, &extent);
  for (size_t d = 0; d + 1 < g.loops.size(); ++d) {
    int64_t e = 0;
    constInt(g.loops[d]->extent, &e);
    runs *= e;
  }
  const int64_t perRow = extent / r.lanes;
  runs *= perRow;
  // The element-wise form of a run: the body at each lane.
  auto elementWise = [&]() {
    Stmt body = inner->body;
    if (r.lanes > 1) {
      std::string lane = fresh("lane");
      open("for (int " + lane + " = 0; " + lane + " < " + std::to_string(r.lanes) + "; ++" + lane + ")");
      Var j = makeVar(inner->var->name, inner->var->dtype);
      markNonNegative(j);
      line("const int " + varName(j) + " = " + varName(inner->var) + " + " + lane + ";");
      body = substitute(body, inner->var, makeVarRef(j));
    }
    ++parallelDepth_;
    emitThread(body);
    --parallelDepth_;
    if (r.lanes > 1) close();
    if (!syncFlag.empty()) line(syncFlag + " = true;");
  };
  // One run as cp.async: `aligned` where the tensor's address is known to be
  // aligned to the access size (then so is every whole run's).
  auto asyncRun = [&](bool aligned) {
    for (const LetStmt* l : g.lets) {
      if (isNonNegative(l->value)) markNonNegative(l->var);
      line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(l->value) + ";");
    }
    std::vector<Expr> dstIdx;
    for (const ForStmt* l : g.loops) dstIdx.push_back(makeVarRef(l->var));
    // The lane-free terms at the first lane, the edges at both ends.
    auto conj = [&](const std::vector<Expr>& es, const std::function<std::string(const Expr&)>& f) {
      std::string c;
      for (const Expr& e : es) c += (c.empty() ? "" : " && ") + f(e);
      return c.empty() ? std::string("true") : c;
    };
    Expr lastLane = add(makeVarRef(inner->var), makeInt(r.lanes - 1));
    std::string inside = fresh("inside"), whole = fresh("whole"), src = fresh("src");
    line("const bool " + inside + " = " + conj(r.free, [&](const Expr& e) { return "(" + expr(e) + ")"; }) + ";");
    std::string ends = conj(r.edges, [&](const Expr& e) {
      return "(" + expr(e) + ") && (" + expr(substitute(substitute(e, r.lets), inner->var, lastLane)) + ")";
    });
    line("const bool " + whole + " = " + inside + (r.edges.empty() ? "" : " && " + ends) + ";");
    const BufferInfo& s = bufs_[r.load->buffer.get()];
    // (X + invariant) + moving: the inner sum is the loop-invariant
    // address, which the compiler then keeps out of the loop.
    std::string at = r.invariantOffset ? "tlc::opaque(" + s.name + " + (" + expr(r.invariantOffset) + ")) + (" +
                                             expr(r.movingOffset) + ")"
                                       : "&" + access(r.load->buffer, r.load->indices);
    // Where the tensor is aligned a run that reads nothing (a cp.async with
    // no source bytes) may be given its address outside the tensor: the
    // address then needs no select, and the moving part is computed once
    // for all of a thread's runs that share it.
    line("const " + typeName(r.load->buffer->dtype) + "* " + src + " = " +
         (aligned && r.invariantOffset ? at : whole + " ? " + at + " : " + s.name) + ";");
    std::string dst = "&" + access(g.store->buffer, dstIdx), cp = "tlc::cp_async" + std::to_string(r.bytes);
    if (aligned) {
      // A run the edges do not cut moves whole or reads nothing.
      if (!r.edges.empty()) open("if (" + whole + " || !" + inside + ")");
      line(cp + "(" + dst + ", " + src + ", " + whole + ");");
      if (r.edges.empty()) return;
      close("} else {");
      ++indent_;
      elementWise();
      close();
      return;
    }
    open("if (" + whole + " && tlc::aligned(" + src + ", " + std::to_string(r.bytes) + "))");
    line(cp + "(" + dst + ", " + src + ", true);");
    close();
    open("else if (!" + inside + ")");
    line(cp + "(" + dst + ", " + s.name + ", false);");
    close();
    open("else");
    elementWise();
    close();
  };
  // Every run of this thread.
  auto runLoop = [&](bool aligned) {
    std::string q = fresh("q"), run = fresh("run");
    // Rolled where registers are short (a pipeline's consumers issue it), else
    // unrolled: the runs' address arithmetic then overlaps.
    open(std::string(noUnroll_ ? "#pragma unroll 1\n" : "#pragma unroll\n") + std::string(indent_ * 2, ' ') + "for (int " +
         q + " = 0; " + q + " < " + std::to_string((runs + threads - 1) / threads) + "; ++" + q + ")");
    line("const unsigned " + run + " = " + q + " * " + std::to_string(threads) + "u + (unsigned)(" + thread + ");");
    if (runs % threads) open("if (" + run + " < " + std::to_string(runs) + "u)");
    // The nest's variables at the run's first lane.
    std::string rest = run;
    for (size_t d = g.loops.size(); d-- > 0;) {
      const ForStmt* l = g.loops[d];
      int64_t e = 0;
      constInt(l->extent, &e);
      int64_t n = d + 1 == g.loops.size() ? perRow : e;
      // Unsigned, so that the compiler sees that the low bits of a power of
      // two's multiples drop out: (q * 128 + thread) % 8 is thread % 8.
      std::string v = d == 0 ? rest : "(" + rest + " % " + std::to_string(n) + "u)";
      if (d + 1 == g.loops.size() && r.lanes > 1) v = v + " * " + std::to_string(r.lanes) + "u";
      markNonNegative(l->var);
      line("const int " + varName(l->var) + " = (int)(" + v + ");");
      rest = "(" + rest + " / " + std::to_string(n) + "u)";
    }
    if (r.bytes)
      asyncRun(aligned);
    else
      elementWise();
    if (runs % threads) close();
    close();
  };
  if (r.bytes && r.lanesAligned) {
    open("if (tlc::aligned(" + bufs_[r.load->buffer.get()].name + ", " + std::to_string(r.bytes) + "))");
    runLoop(true);
    close("} else {");
    ++indent_;
    runLoop(false);
    close();
  } else {
    runLoop(false);
  }
}

}  // namespace tlc::cuda
