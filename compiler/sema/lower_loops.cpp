// `for` loops over T.Parallel / T.Pipelined / T.serial / range / T.unroll /
// T.vectorized, and `with T.Kernel(...) as (bx, by)`.
//
// `T.Parallel(a, b)` binds two variables and becomes two nested parallel
// loops. A serial loop with a step other than 1 iterates a hidden counter and
// binds the user's variable as `start + counter * step`.
#include <algorithm>

#include "compiler/ir/loop_jumps.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

bool Sema::requireKernel(SourceLoc loc, const std::string& what) {
  if (inKernel_) return true;
  report(DiagKind::ScopeViolation, loc, what + " must be inside a `with T.Kernel(...)` block");
  return false;
}

// The pipeline attributes of `T.Pipelined(start, stop, num_stages, order,
// stage, warp_specialize, group)`. `order` and `stage` give one entry per
// statement of the body, or, with TileLang's `group` (consecutive runs of
// statements: `[[0], [1, 2], [3]]`), one per group; an entry -1 marks, as in
// TileLang, a statement its producer warps issue. pipeline-planning maps
// such a plan onto the body's statements, or keeps its own plan with a note
// when it cannot. Without `num_stages`, the stages give it: max(stage) + 1.
bool Sema::pipelineAttributes(const CallArgs& args, int64_t& numStages, std::vector<int64_t>& order,
                              std::vector<int64_t>& stage, std::vector<std::vector<int64_t>>& group,
                              bool& warpSpecialize) {
  if (args.slots[5]) {
    auto w = constBool(*args.slots[5], "`warp_specialize`");
    if (!w) return false;
    warpSpecialize = *w;
  }
  if (args.slots[2]) {
    auto n = constInt(*args.slots[2], "`num_stages`");
    if (!n) return false;
    if (*n < 0) {
      report(DiagKind::BadLoop, args.slots[2]->loc, "`num_stages` cannot be negative");
      return false;
    }
    numStages = *n;
  }
  // A list of integers, or (nested) a list of such lists.
  auto intList = [&](const ast::Expr& list, const std::string& what, const std::string& example,
                     std::vector<int64_t>& dst) {
    if (list.kind != ast::ExprKind::Tuple) {
      report(DiagKind::TypeMismatch, list.loc, what + " is a list of integers, e.g. `" + example + "`");
      return false;
    }
    for (const auto& x : list.operands) {
      auto c = constInt(*x, "an entry of " + what);
      if (!c) return false;
      dst.push_back(*c);
    }
    return true;
  };
  for (int k : {3, 4}) {
    const ast::Expr* list = args.slots[k];
    if (!list) continue;
    std::vector<int64_t>& dst = k == 3 ? order : stage;
    std::string what = std::string("`") + (k == 3 ? "order" : "stage") + "`";
    if (!intList(*list, what, "[0, 1, 2]", dst)) return false;
    for (int64_t v : dst)
      if (v < -1) {
        report(DiagKind::BadLoop, list->loc,
               "an entry of " + what + " is " + std::to_string(v) +
                   "; entries are statement positions or stages from 0, or -1 (TileLang's mark of a statement its "
                   "producer warps issue)");
        return false;
      }
  }
  if (const ast::Expr* list = args.slots[6]) {
    std::string shape = "`group` lists the statements of the loop body in order, in runs: `[[0], [1, 2], [3]]`";
    if (list->kind != ast::ExprKind::Tuple) {
      report(DiagKind::TypeMismatch, list->loc, shape);
      return false;
    }
    int64_t next = 0;
    for (const auto& g : list->operands) {
      group.emplace_back();
      if (!intList(*g, "a group", "[1, 2]", group.back())) return false;
      bool consecutive = !group.back().empty();
      for (int64_t i : group.back()) consecutive = consecutive && i == next++;
      if (!consecutive) {
        report(DiagKind::BadLoop, g->loc, shape + "; this group does not continue from statement " +
                                              std::to_string(next - (int64_t)group.back().size()));
        return false;
      }
    }
    if (group.empty()) {
      report(DiagKind::BadLoop, list->loc, shape);
      return false;
    }
    for (int k : {3, 4}) {
      const std::vector<int64_t>& l = k == 3 ? order : stage;
      if (args.slots[k] && l.size() == group.size()) continue;
      report(DiagKind::BadLoop, args.slots[k] ? args.slots[k]->loc : list->loc,
             std::string("with `group`, `") + (k == 3 ? "order" : "stage") + "` gives one entry per group (" +
                 std::to_string(group.size()) + ")" +
                 (args.slots[k] ? ", but it has " + std::to_string(l.size()) : ", but it is not given"));
      return false;
    }
  }
  if (!order.empty() && !stage.empty() && order.size() != stage.size()) {
    report(DiagKind::BadLoop, args.slots[4]->loc,
           "`order` has " + std::to_string(order.size()) + " entries but `stage` has " + std::to_string(stage.size()) +
               "; give one entry per statement of the loop body");
    return false;
  }
  if (stage.empty()) return true;
  int64_t last = *std::max_element(stage.begin(), stage.end());
  if (!args.slots[2]) numStages = last + 1;
  if (numStages > 0 && last >= numStages) {
    report(DiagKind::BadLoop, args.slots[4]->loc,
           "pipeline stage " + std::to_string(last) + " is outside [0, num_stages) with `num_stages=" +
               std::to_string(numStages) + "`; raise `num_stages` or lower the stage");
    return false;
  }
  return true;
}

void Sema::lowerFor(const ast::Stmt& s) {
  const ast::Expr* iter = s.value.get();
  if (!iter) return;
  Value callee;
  if (iter->kind == ast::ExprKind::Call && !iter->operands.empty() && iter->operands[0])
    callee = eval(*iter->operands[0]);
  if (callee.isError() && iter->kind == ast::ExprKind::Call) return;
  if (callee.kind != ValueKind::Builtin || callee.builtin->category != BuiltinCategory::Loop) {
    report(DiagKind::BadLoop, iter->loc,
           "a `for` loop iterates over `T.Parallel`, `T.Pipelined`, `T.serial`, `range`, `T.unroll` or `T.vectorized`");
    return;
  }
  const BuiltinInfo& b = *callee.builtin;
  std::string name = std::string("T.") + b.name;
  if (!requireKernel(iter->loc, "a `" + name + "` loop")) return;
  CallArgs args;
  if (!matchArgs(*iter, name, b.params, b.required, b.variadic, args)) return;

  ir::ForKind kind = ir::ForKind::Serial;
  switch (b.id) {
    case BuiltinId::Parallel: kind = ir::ForKind::Parallel; break;
    case BuiltinId::Pipelined: kind = ir::ForKind::Pipelined; break;
    case BuiltinId::Unroll: kind = ir::ForKind::Unroll; break;
    case BuiltinId::Vectorized: kind = ir::ForKind::Vectorized; break;
    default: break;
  }

  // (min, extent) per loop variable.
  std::vector<std::pair<ir::Expr, ir::Expr>> ranges;
  int64_t step = 1;
  ir::Expr steppedStart;  // with a step: the user variable is steppedStart + counter * step
  if (b.id == BuiltinId::Parallel) {
    if (!checkCoalescedWidth(args.slots[0])) return;
    if (args.extra.empty()) {
      report(DiagKind::WrongArgumentCount, iter->loc, "`T.Parallel` needs at least one extent");
      return;
    }
    for (const ast::Expr* x : args.extra) {
      ir::Expr ext = expectInt(eval(*x), "a `T.Parallel` extent");
      if (!ext) return;
      ranges.push_back({ir::makeInt(0, ext->dtype, x->loc), ext});
    }
  } else {
    ir::Expr start = expectInt(eval(*args.slots[0]), "a loop bound");
    if (!start) return;
    ir::Expr stop = args.slots[1] ? expectInt(eval(*args.slots[1]), "a loop bound") : nullptr;
    if (args.slots[1] && !stop) return;
    if (!stop) {
      stop = start;
      start = ir::makeInt(0, stop->dtype, iter->loc);
    }
    DType t = promote(start->dtype, stop->dtype);
    start = foldCast(t, start, iter->loc);
    stop = foldCast(t, stop, iter->loc);
    if (b.params.size() > 2 && b.params[2] == std::string("step") && args.slots[2]) {
      auto st = constInt(*args.slots[2], "the step of `" + name + "`");
      if (!st) return;
      if (*st == 0) {
        report(DiagKind::BadLoop, args.slots[2]->loc, "a loop step cannot be zero");
        return;
      }
      step = *st;
    }
    ir::Expr extent;
    if (step == 1) {
      extent = foldBinary(ir::BinaryOp::Sub, stop, start, iter->loc);
    } else {
      // ceil((stop - start) / step) iterations, counted toward the step's sign.
      ir::Expr span = step > 0 ? foldBinary(ir::BinaryOp::Sub, stop, start, iter->loc)
                               : foldBinary(ir::BinaryOp::Sub, start, stop, iter->loc);
      ir::Expr mag = ir::makeInt(step > 0 ? step : -step, t, iter->loc);
      ir::Expr num = foldBinary(ir::BinaryOp::Sub, foldBinary(ir::BinaryOp::Add, span, mag, iter->loc),
                                ir::makeInt(1, t, iter->loc), iter->loc);
      extent = foldBinary(ir::BinaryOp::FloorDiv, num, mag, iter->loc);
    }
    if (auto c = constIntValue(extent); c && *c < 0) {
      report(DiagKind::BadLoop, iter->loc,
             "this loop has a negative trip count (" + std::to_string(*c) + "); check its bounds");
      return;
    }
    ranges.push_back({step == 1 ? start : ir::makeInt(0, t, iter->loc), extent});
    steppedStart = start;
  }

  size_t nvars = b.id == BuiltinId::Parallel ? ranges.size() : 1;
  if (s.names.size() != nvars) {
    report(DiagKind::BadLoop, s.loc,
           "`" + name + "` with " + std::to_string(nvars) + " extent" + (nvars == 1 ? "" : "s") + " binds " +
               std::to_string(nvars) + " loop variable" + (nvars == 1 ? "" : "s") + ", but " +
               std::to_string(s.names.size()) + (s.names.size() == 1 ? " is" : " are") + " given");
    return;
  }

  int64_t numStages = 0;
  std::vector<int64_t> order, stage;
  std::vector<std::vector<int64_t>> group;
  bool warpSpecialize = true;
  if (b.id == BuiltinId::Pipelined &&
      !pipelineAttributes(args, numStages, order, stage, group, warpSpecialize))
    return;

  ScopeGuard guard(*this, false);
  std::vector<ir::Var> vars;
  bool stepped = step != 1;
  for (size_t i = 0; i < nvars; ++i) {
    SourceLoc vloc = i < s.nameLocs.size() ? s.nameLocs[i] : s.loc;
    std::string base = stepped ? s.names[i] + "_iter" : s.names[i];
    ir::Var v = freshVar(base, ranges[i].second->dtype, vloc);
    vars.push_back(v);
    auto lo = constIntValue(ranges[i].first), ext = constIntValue(ranges[i].second);
    if (lo && ext && *ext > 0 && !stepped) {
      loopRanges_[v.get()] = LoopRange{*lo, *ext, iter->loc};
      if (kind == ir::ForKind::Parallel) parallelRanges_[v.get()] = {*lo, *ext};
    }
    if (!stepped) bindName(s.names[i], vloc, Value::ofExpr(ir::makeVarRef(v, vloc), vloc));
  }
  StmtBuilder body;
  StmtBuilder* saved = builder_;
  builder_ = &body;
  if (stepped) {
    SourceLoc vloc = s.nameLocs.empty() ? s.loc : s.nameLocs[0];
    const ir::Expr& start = steppedStart;
    ir::Expr k = ir::makeVarRef(vars[0], vloc);
    ir::Expr value = foldBinary(ir::BinaryOp::Add, start,
                                foldBinary(ir::BinaryOp::Mul, k, ir::makeInt(step, k->dtype, vloc), vloc), vloc);
    ir::Var user = freshVar(s.names[0], value->dtype, vloc);
    body.let(user, value, vloc);
    bindName(s.names[0], vloc, Value::ofExpr(ir::makeVarRef(user, vloc), vloc));
  }
  ++loopDepth_;
  SourceLoc outerParallel = parallelLoc_;
  if (kind == ir::ForKind::Parallel && !parallelLoc_.known()) parallelLoc_ = iter->loc;
  loops_.push_back(LoopFrame{kind, b.id == BuiltinId::Range ? std::string("range") : name, iter->loc});
  size_t outerIteration = parallelIteration_.size();
  if (kind == ir::ForKind::Parallel)
    for (size_t i = 0; i < nvars; ++i) parallelIteration_.push_back({s.names[i], vars[i]});
  size_t outerSerial = nestSerialVars_.size();
  if (kind != ir::ForKind::Parallel && outerParallel.known())
    nestSerialVars_.insert(nestSerialVars_.end(), vars.begin(), vars.end());
  lowerBlockInto(s.body);
  nestSerialVars_.resize(outerSerial);
  parallelIteration_.resize(outerIteration);
  loops_.pop_back();
  parallelLoc_ = outerParallel;
  --loopDepth_;
  builder_ = saved;
  ir::Stmt stmt = body.finish(s.loc);
  for (size_t i = nvars; i-- > 0;) {
    auto loop = std::make_shared<ir::ForStmt>(vars[i], ranges[i].first, ranges[i].second, kind, stmt, s.loc);
    loop->numStages = numStages;
    loop->order = order;
    loop->stage = stage;
    loop->group = group;
    loop->warpSpecialize = warpSpecialize;
    stmt = loop;
  }
  if (kind == ir::ForKind::Parallel && !outerParallel.known() && !reducerNests_.empty())
    finishReducers(stmt, s.loc);  // the nest updated reducers
  else
    builder_->emit(stmt);
}

// `while cond: body` is a serial loop that tests its condition before each
// iteration; the tile IR writes it as a serial loop over a counter nothing
// reads, which leaves when the condition fails:
//   for w in serial(0, 2^63 - 1): if not cond: break; body
// so every pass and target that handles `break` handles it. The condition is
// evaluated in the loop's body, so it sees what the previous iteration
// stored (`T.alloc_var` values, buffer elements). A condition that is false
// at compile time makes no loop; one that is true needs a `break`.
void Sema::lowerWhile(const ast::Stmt& s) {
  if (!s.value || !requireKernel(s.loc, "a `while` loop")) return;
  SourceLoc loc = s.loc;
  ScopeGuard guard(*this, false);
  StmtBuilder body;
  StmtBuilder* saved = builder_;
  builder_ = &body;
  ++loopDepth_;
  loops_.push_back(LoopFrame{ir::ForKind::Serial, "while", loc});
  ir::Expr cond = expectCondition(eval(*s.value), "the condition of `while`");
  // The condition at compile time: always true, always false, or neither.
  bool alwaysTrue = false, alwaysFalse = false;
  if (cond)
    if (auto c = constIntValue(cond)) (*c ? alwaysTrue : alwaysFalse) = true;
  if (cond && !alwaysTrue && !alwaysFalse) {
    ir::Stmt leave = std::make_shared<const ir::BreakStmt>(s.value->loc);
    body.emit(std::make_shared<const ir::IfStmt>(ir::makeUnary(ir::UnaryOp::Not, cond, s.value->loc), leave,
                                                  nullptr, s.value->loc));
  }
  ir::Stmt inner;
  if (alwaysTrue || !cond)
    inner = lowerScopedBlock(s.body, loc);
  else if (!alwaysFalse)
    inner = underCondition(cond, false, [&] { return lowerScopedBlock(s.body, loc); });
  if (inner) body.emit(inner);
  loops_.pop_back();
  --loopDepth_;
  builder_ = saved;
  if (!cond || alwaysFalse) return;
  ir::Stmt loopBody = body.finish(loc);
  if (alwaysTrue && !ir::jumpsOutOf(loopBody)) {
    report(DiagKind::BadLoop, s.value->loc,
           "this `while` loop never ends: its condition is always true and its body has no `break`");
    return;
  }
  ir::Var counter = freshVar("while_iter", DType::Int64, loc);
  builder_->emit(std::make_shared<ir::ForStmt>(counter, ir::makeInt(0, DType::Int64, loc),
                                               ir::makeInt(INT64_MAX, DType::Int64, loc), ir::ForKind::Serial,
                                               loopBody, loc));
}

// `break` and `continue` leave or restart the innermost loop, which must be
// a serial one (`T.serial`, `range`): the iterations of the other kinds are
// independent, unrolled or scheduled by the compiler.
void Sema::lowerLoopJump(const ast::Stmt& s) {
  bool isBreak = s.kind == ast::StmtKind::Break;
  std::string what = isBreak ? "`break`" : "`continue`";
  if (loops_.empty()) {
    report(DiagKind::MisplacedJump, s.loc,
           what + " is outside every loop" + (macroStack_.empty() ? "" : " of this macro") +
               "; it leaves or continues the innermost `for` loop");
    return;
  }
  const LoopFrame& loop = loops_.back();
  if (loop.kind != ir::ForKind::Serial) {
    const char* why = loop.kind == ir::ForKind::Parallel ? "its iterations are independent"
                      : loop.kind == ir::ForKind::Pipelined ? "its iterations are overlapped by the software pipeline"
                      : loop.kind == ir::ForKind::Unroll    ? "it is unrolled"
                                                            : "it is vectorized";
    report(DiagKind::MisplacedJump, s.loc,
           what + " cannot leave a `" + loop.iterator + "` loop: " + why +
               "; only `T.serial` and `range` loops stop or skip early")
        .note(loop.loc, "the innermost loop is here");
    return;
  }
  builder_->emit(isBreak ? ir::Stmt(std::make_shared<const ir::BreakStmt>(s.loc))
                         : ir::Stmt(std::make_shared<const ir::ContinueStmt>(s.loc)));
}

void Sema::lowerWith(const ast::Stmt& s) {
  const ast::Expr* ctx = s.value.get();
  if (!ctx) return;
  Value callee;
  if (ctx->kind == ast::ExprKind::Call && !ctx->operands.empty() && ctx->operands[0]) callee = eval(*ctx->operands[0]);
  if (callee.isError() && ctx->kind == ast::ExprKind::Call) return;
  if (callee.kind == ValueKind::Builtin && callee.builtin->category == BuiltinCategory::Kernel &&
      callee.builtin->id != BuiltinId::Kernel) {
    lowerIfFrame(*callee.builtin, *ctx, s);
    return;
  }
  if (callee.kind != ValueKind::Builtin || callee.builtin->id != BuiltinId::Kernel) {
    report(DiagKind::BadKernel, ctx->loc, "`with` only opens a kernel: `with T.Kernel(grid_x, grid_y, threads=128) as (bx, by):`");
    return;
  }
  if (inKernel_) {
    report(DiagKind::ScopeViolation, ctx->loc, "`T.Kernel` cannot be nested inside another kernel")
        .note(kernelLoc_, "the enclosing kernel starts here");
    return;
  }
  const BuiltinInfo& b = *callee.builtin;
  CallArgs args;
  bool ok = matchArgs(*ctx, "T.Kernel", b.params, b.required, b.variadic, args);
  if (args.extra.empty() || args.extra.size() > 3) {
    report(DiagKind::BadKernel, ctx->loc,
           "`T.Kernel` takes 1 to 3 grid extents, got " + std::to_string(args.extra.size()));
    ok = false;
  }
  std::vector<ir::Expr> grid;
  for (const ast::Expr* x : args.extra) {
    ir::Expr g = expectInt(eval(*x), "a grid extent");
    if (!g) {
      ok = false;
      continue;
    }
    if (auto c = constIntValue(g); c && *c < 1) {
      report(DiagKind::BadKernel, x->loc, "a grid extent must be at least 1, but this one is " + std::to_string(*c));
      ok = false;
      continue;
    }
    if (auto c = constIntValue(g); c && !checkInt32Extent(*c, x->loc, "the grid extent")) {
      ok = false;
      continue;
    }
    grid.push_back(foldCast(DType::Int32, g, x->loc));
  }
  int64_t threads = 128;
  std::vector<int64_t> threadDims;
  if (args.slots[0]) {
    // TileLang's `threads=(32, 4)` (a thread block of several dimensions):
    // the product; tlc numbers a block's threads in one dimension.
    std::optional<int64_t> t;
    if (const ast::Expr& a = *args.slots[0]; a.kind == ast::ExprKind::Tuple && !a.operands.empty()) {
      t = 1;
      for (const ast::ExprPtr& d : a.operands) {
        auto v = d ? constInt(*d, "`threads`") : std::nullopt;
        if (!v || *v < 1) {  // an entry below 1 is the one reported
          t = v;
          break;
        }
        if (__builtin_mul_overflow(*t, *v, &*t)) t = INT64_MAX;
        threadDims.push_back(*v);
      }
    } else {
      t = constInt(a, "`threads`");
    }
    if (!t) {
      ok = false;
    } else if (*t < 1 || *t > 1024) {
      report(DiagKind::BadKernel, args.slots[0]->loc,
             "`threads` must be between 1 and 1024, but it is " + std::to_string(*t));
      ok = false;
    } else {
      threads = *t;
    }
  }
  if (threadDims.empty()) threadDims = {threads};
  if (ok && !s.names.empty() && s.names.size() != args.extra.size()) {
    report(DiagKind::BadKernel, s.loc,
           "`T.Kernel` with " + std::to_string(args.extra.size()) + " grid extent" + (args.extra.size() == 1 ? "" : "s") +
               " binds " + std::to_string(args.extra.size()) + (args.extra.size() == 1 ? " block index" : " block indices") +
               ", but `as` names " + std::to_string(s.names.size()));
    ok = false;
  }

  // With a bad header the body is still checked, then dropped.
  ScopeGuard guard(*this, false);
  static const char* kDefaultNames[] = {"bx", "by", "bz"};
  std::vector<ir::Var> vars;
  size_t nvars = ok ? grid.size() : s.names.size();
  for (size_t i = 0; i < nvars; ++i) {
    bool named = i < s.names.size();
    SourceLoc vloc = named && i < s.nameLocs.size() ? s.nameLocs[i] : ctx->loc;
    ir::Var v = freshVar(named ? s.names[i] : kDefaultNames[i], DType::Int32, vloc);
    vars.push_back(v);
    if (named) bindName(s.names[i], vloc, Value::ofExpr(ir::makeVarRef(v, vloc), vloc));
  }
  inKernel_ = true;
  kernelLoc_ = ctx->loc;
  kernelBlockVars_ = vars;
  kernelSwizzle_ = 0;
  kernelSwizzleLoc_ = {};
  kernelThreads_ = threads;
  kernelThreadDims_ = threadDims;
  layoutAnnotations_.clear();
  StmtBuilder body;
  StmtBuilder* saved = builder_;
  builder_ = &body;
  lowerKernelBody(s.body);
  builder_ = saved;
  inKernel_ = false;
  ir::Stmt lowered = body.finish(s.loc);
  if (kernelSwizzle_ > 0 && grid.size() == 1) {
    report(DiagKind::MisusedBuiltin, kernelSwizzleLoc_,
           "`T.use_swizzle` reorders the blocks of the first two grid dimensions, but this kernel's grid has one")
        .note(kernelLoc_, "the kernel is launched here");
    ok = false;
  }
  // `enable=False` keeps the row order (a panel of one row), which a 1-D grid has anyway.
  const int64_t swizzle = kernelSwizzle_ >= 0 ? kernelSwizzle_ : grid.size() >= 2 ? 1 : 0;
  if (ok) builder_->emit(std::make_shared<const ir::KernelStmt>(grid, vars, threads, lowered, s.loc, swizzle));
  kernelSwizzle_ = 0;
  kernelSwizzleLoc_ = {};
}

}  // namespace tlc::sema
