// Gather nests run ahead by a pipeline (ir/gather_nest.h): the Parallel
// loops that fill a shared tile from global memory at computed indices (an
// implicit-GEMM convolution's im2col tile) become asynchronous copies.
//
// The nest's innermost loop is cut into runs of `lanes` consecutive
// iterations (16, 8 or 4 bytes of the tile's elements). A run moves as one
// `cp.async` when, with the innermost variable j = r * lanes + l (l the lane,
// in [0, lanes)), the simplifier proves that
//  - the stored value is a load of a global tensor, or a select between such
//    a load and zero whose condition does not depend on l (rows and columns
//    of the image outside it read zero);
//  - the load's indices other than its last do not depend on l, and its last
//    is the first lane's plus l: the lanes read consecutive elements of one
//    row of the tensor;
//  - the tile's offsets (its layout: swizzled, padded or in panels) are the
//    first lane's plus l: the lanes write consecutive bytes.
// Everything is evaluated at the run's first lane: the lets, the condition,
// the addresses. A run whose source address is not aligned to the access
// size at run time (a tensor whose rows are not) moves element by element,
// as does every run of a nest for which the proof fails. A false condition
// copies zero bytes from the source and zero-fills the destination (the
// source is then never read).
#include <cmath>

#include "compiler/backends/cuda/cuda_kernel_emitter.h"
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

bool uses(const Expr& e, const Var& v) {
  std::unordered_set<const VarNode*> vars{v.get()};
  UsesVars u(vars);
  u.visit(e);
  return u.found;
}

}  // namespace

// The run length of `g` (1: element by element), its global load, and the
// condition under which the load is stored (null: always).
KernelEmitter::GatherRuns KernelEmitter::planGatherRuns(const GatherNest& g) {
  GatherRuns out;
  const Expr& value = g.store->value;
  if (auto* l = as<Load>(value)) {
    out.load = l;
  } else if (auto* s = as<Select>(value)) {
    if (auto* l = as<Load>(s->t); l && isZero(s->f)) {
      out.load = l;
      out.cond = s->cond;
    } else if (auto* l2 = as<Load>(s->f); l2 && isZero(s->t)) {
      out.load = l2;
      out.cond = makeUnary(UnaryOp::Not, s->cond, s->loc);
    }
  }
  const BufferNode* tile = g.tile;
  if (!out.load || out.load->buffer->scope != MemScope::Global || out.load->buffer->dtype != tile->dtype ||
      !options_.asyncCopy)
    return out;
  const BufferInfo& dst = bufs_[tile];
  if (dst.place != Placement::Shared || (dst.layout && dst.layout->isTabulated())) return out;
  // The lets, inlined, so that the proofs see the innermost variable.
  VarMap lets;
  for (const LetStmt* l : g.lets) lets[l->var.get()] = substitute(l->value, lets);
  const ForStmt* inner = g.loops.back();
  int64_t extent = 0;
  constInt(inner->extent, &extent);
  const int64_t eb = dtypeBytes(tile->dtype);
  for (int64_t bytes : {16, 8, 4}) {
    int64_t lanes = bytes / eb;
    if (lanes < 1 || bytes % eb || extent % lanes) continue;
    Var run = makeVar("run"), lane = makeVar("lane");
    std::vector<passes::VarRange> ranges;
    for (size_t d = 0; d + 1 < g.loops.size(); ++d) ranges.push_back({g.loops[d]->var, g.loops[d]->min, g.loops[d]->extent});
    ranges.push_back({run, makeInt(0), makeInt(extent / lanes)});
    ranges.push_back({lane, makeInt(0), makeInt(lanes)});
    Expr first = mul(makeVarRef(run), makeInt(lanes));
    Expr at = add(first, makeVarRef(lane));
    // `e` at lane l and at the first lane, simplified.
    auto atLane = [&](const Expr& e) {
      return passes::simplifyExpr(substitute(substitute(e, lets), inner->var, at), ranges);
    };
    auto atFirst = [&](const Expr& e) {
      return passes::simplifyExpr(substitute(substitute(e, lets), inner->var, first), ranges);
    };
    auto sameForLanes = [&](const Expr& e) { return !uses(atLane(e), lane); };
    auto movesByLane = [&](const Expr& e) {
      auto d = constantDifference(atLane(e), add(atFirst(e), makeVarRef(lane)));
      return d && *d == 0;
    };
    bool ok = !out.cond || sameForLanes(out.cond);
    const std::vector<Expr>& idx = out.load->indices;
    for (size_t d = 0; ok && d + 1 < idx.size(); ++d) ok = sameForLanes(idx[d]);
    ok = ok && !idx.empty() && movesByLane(idx.back());
    std::vector<Expr> dstIdx;
    for (const ForStmt* l : g.loops) dstIdx.push_back(makeVarRef(l->var));
    ok = ok && movesByLane(offsetExpr(g.store->buffer, dstIdx));
    if (!ok) continue;
    out.lanes = lanes;
    out.bytes = bytes;
    return out;
  }
  return out;
}

// Issues the gather nest `g` over `threads` threads, the calling one being
// `thread` (a C expression in [0, threads)): each thread takes runs
// `thread`, `thread + threads`, ... of the tile. Runs move by cp.async (the
// caller commits them, or has them arrive on an mbarrier), or element by
// element with ordinary loads and stores; with `syncFlag` (the C name of a
// bool), those set it.
void KernelEmitter::emitGather(const GatherNest& g, const std::string& thread, int64_t threads,
                               const std::string& syncFlag) {
  LocationScope at(*this, g.outer->loc);
  GatherRuns r = planGatherRuns(g);
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
  std::string q = fresh("q"), run = fresh("run");
  open("#pragma unroll 1\n" + std::string(indent_ * 2, ' ') + "for (int " + q + " = 0; " + q + " < " +
       std::to_string((runs + threads - 1) / threads) + "; ++" + q + ")");
  line("const int " + run + " = " + q + " * " + std::to_string(threads) + " + " + thread + ";");
  if (runs % threads) open("if (" + run + " < " + std::to_string(runs) + ")");
  // The nest's variables at the run's first lane.
  std::string rest = run;
  for (size_t d = g.loops.size(); d-- > 0;) {
    const ForStmt* l = g.loops[d];
    int64_t e = 0;
    constInt(l->extent, &e);
    int64_t n = d + 1 == g.loops.size() ? perRow : e;
    std::string v = d == 0 ? rest : "(" + rest + " % " + std::to_string(n) + ")";
    if (d + 1 == g.loops.size() && r.lanes > 1) v = v + " * " + std::to_string(r.lanes);
    markNonNegative(l->var);
    line("const int " + varName(l->var) + " = " + v + ";");
    rest = "(" + rest + " / " + std::to_string(n) + ")";
  }
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
  if (!r.bytes) {
    elementWise();
  } else {
    for (const LetStmt* l : g.lets) {
      if (isNonNegative(l->value)) markNonNegative(l->var);
      line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(l->value) + ";");
    }
    std::vector<Expr> dstIdx;
    for (const ForStmt* l : g.loops) dstIdx.push_back(makeVarRef(l->var));
    std::string src = fresh("src"), ok = fresh("ok");
    const BufferInfo& s = bufs_[r.load->buffer.get()];
    line("const bool " + ok + " = " + (r.cond ? expr(r.cond) : std::string("true")) + ";");
    line("const " + typeName(r.load->buffer->dtype) + "* " + src + " = " + ok + " ? &" +
         access(r.load->buffer, r.load->indices) + " : " + s.name + ";");
    open("if (tlc::aligned(" + src + ", " + std::to_string(r.bytes) + "))");
    line("tlc::cp_async" + std::to_string(r.bytes) + "(&" + access(g.store->buffer, dstIdx) + ", " + src + ", " + ok +
         ");");
    close();
    open("else");
    elementWise();
    close();
  }
  if (runs % threads) close();
  close();
}

}  // namespace tlc::cuda
