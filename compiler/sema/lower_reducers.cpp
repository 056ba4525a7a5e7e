// TileLang's reducers: `acc = T.alloc_reducer(shape, dtype, op="sum")`, a
// fragment that the iterations of a `T.Parallel` loop may all update
// (`acc[i] += v`, `acc[i] = T.max(acc[i], v)`, `T.reducer_update(acc[i], v)`),
// then `T.finalize_reducer(acc)`.
//
// The tile IR has no such buffer: the outermost Parallel nest that updates a
// reducer is lowered as
//   partial = fragment of the nest's shape, filled with the op's identity
//   the nest, each update written `partial[iteration] = op(partial[...], v)`
//     (every iteration owns its element, so the nest stays race-free)
//   partial reduced (T.reduce_*) over the nest dimensions the reducer's
//     index does not name, then combined into the reducer's elements
// so that the reducer holds the combined value after every nest, and
// T.finalize_reducer has nothing left to combine (with a second argument it
// copies the reducer there).
#include <cmath>

#include <algorithm>

#include "compiler/ir/equality.h"
#include "compiler/ir/substitute.h"
#include "compiler/ir/var_uses.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"
#include "compiler/sema/tile_operands.h"

namespace tlc::sema {

namespace {

// The operation that folds a value into a reducer of kind `op`.
ir::BinaryOp combineOp(ir::ReduceKind op) {
  return op == ir::ReduceKind::Sum ? ir::BinaryOp::Add : op == ir::ReduceKind::Max ? ir::BinaryOp::Max : ir::BinaryOp::Min;
}

ir::Expr combine(ir::ReduceKind op, ir::Expr a, ir::Expr b, SourceLoc loc) {
  return ir::makeBinary(combineOp(op), std::move(a), std::move(b), loc);
}

}  // namespace

bool Sema::isReducer(const ir::Buffer& b) const { return reducers_.count(b.get()) > 0; }

// `T.alloc_reducer(shape, dtype, op="sum", replication="all")`: the op, checked.
std::optional<ir::ReduceKind> Sema::reducerOp(const ast::Expr* opArg, const ast::Expr* replicationArg) {
  ir::ReduceKind op = ir::ReduceKind::Sum;
  if (opArg) {
    Value v = eval(*opArg);
    if (v.isError()) return std::nullopt;
    if (v.kind != ValueKind::String || (v.str != "sum" && v.str != "max" && v.str != "min")) {
      report(DiagKind::TypeMismatch, opArg->loc, "`op` of `T.alloc_reducer` is \"sum\", \"max\" or \"min\"");
      return std::nullopt;
    }
    op = v.str == "sum" ? ir::ReduceKind::Sum : v.str == "max" ? ir::ReduceKind::Max : ir::ReduceKind::Min;
  }
  if (replicationArg) {
    Value v = eval(*replicationArg);
    if (v.isError()) return std::nullopt;
    if (v.kind != ValueKind::String || (v.str != "all" && v.str != "none")) {
      report(DiagKind::TypeMismatch, replicationArg->loc, "`replication` of `T.alloc_reducer` is \"all\" or \"none\"");
      return std::nullopt;
    }
  }
  return op;
}

// `T.reducer_init(acc)`, `T.finalize_reducer(acc[, result])` and
// `T.reducer_update(acc[i, ...], value)`.
void Sema::lowerReducerOp(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args) {
  std::string fname = std::string("T.") + b.name;
  if (b.id == BuiltinId::ReducerUpdate) {
    Value dst = eval(*args.slots[0]);
    if (dst.isError()) return;
    auto* load = dst.isExpr() ? ir::as<ir::Load>(dst.expr) : nullptr;
    if (!load || !isReducer(load->buffer)) {
      report(DiagKind::TypeMismatch, args.slots[0]->loc,
             "the first argument of `" + fname + "` is an element of a `T.alloc_reducer` buffer, `acc[i, ...]`");
      return;
    }
    Value v = eval(*args.slots[1]);
    ir::Expr x = expectScalar(v, "the value of `" + fname + "`");
    if (!x) return;
    if (!parallelLoc_.known()) {
      // Outside a Parallel loop one thread's update is the whole update.
      const ir::Buffer& acc = load->buffer;
      ir::Expr cur = ir::makeLoad(acc, load->indices, call.loc);
      builder_->emit(std::make_shared<const ir::StoreStmt>(
          acc, load->indices, combine(reducers_[acc.get()], cur, convert(v, acc->dtype, call.loc), call.loc),
          call.loc));
      return;
    }
    reducerUpdate(load->buffer, load->indices, convert(v, load->buffer->dtype, call.loc), call.loc);
    return;
  }
  Value acc = eval(*args.slots[0]);
  if (acc.isError() || !outsideParallel(fname, call.loc)) return;
  if (acc.kind != ValueKind::Buffer || !isReducer(acc.buffer)) {
    report(DiagKind::TypeMismatch, args.slots[0]->loc, "`" + fname + "` takes a `T.alloc_reducer` buffer");
    return;
  }
  const ir::Buffer& buf = acc.buffer;
  if (b.id == BuiltinId::ReducerInit) {
    builder_->emit(std::make_shared<const ir::FillStmt>(
        ir::fullRegion(buf, call.loc), ir::reduceIdentity(reducers_[buf.get()], buf->dtype, call.loc), call.loc));
    return;
  }
  // T.finalize_reducer: the reducer is combined already; `batch` is a hint.
  if (args.slots[2] && !constInt(*args.slots[2], "`batch`")) return;
  if (!args.slots[1]) return;
  Value result = eval(*args.slots[1]);
  if (result.isError()) return;
  bool sameShape = result.kind == ValueKind::Buffer && result.buffer->shape.size() == buf->shape.size();
  for (size_t d = 0; sameShape && d < buf->shape.size(); ++d)
    sameShape = constIntValue(result.buffer->shape[d]) == constIntValue(buf->shape[d]);
  if (!sameShape || result.buffer->scope == ir::MemScope::Global || result.buffer->scope == ir::MemScope::Var) {
    report(DiagKind::ShapeMismatch, args.slots[1]->loc,
           "the result of `" + fname + "` is a fragment, shared or local buffer of the reducer's shape " +
               formatShape(buf->shape));
    return;
  }
  builder_->emit(std::make_shared<const ir::CopyStmt>(ir::fullRegion(buf, call.loc),
                                                       ir::fullRegion(result.buffer, args.slots[1]->loc), call.loc));
}

// A store into a reducer inside a Parallel nest, `acc[idx] = stored`: it
// must be an update, `op(acc[idx], v)` (either order) with the reducer's op.
void Sema::reducerStore(const ir::Buffer& acc, const std::vector<ir::Expr>& idx, const ir::Expr& stored,
                        SourceLoc loc) {
  ir::ReduceKind op = reducers_[acc.get()];
  ir::BinaryOp want = combineOp(op);
  ir::Expr self = ir::makeLoad(acc, idx, loc), v;
  if (auto* bin = ir::as<ir::Binary>(stored); bin && bin->op == want) {
    if (ir::structurallyEqual(bin->a, self)) v = bin->b;
    else if (ir::structurallyEqual(bin->b, self)) v = bin->a;
  }
  if (!v) {
    std::string acc_i = acc->name + "[...]";
    std::string form = op == ir::ReduceKind::Sum ? "`" + acc_i + " += v`"
                                                 : "`" + acc_i + " = T." + ir::reduceKindName(op) + "(" + acc_i + ", v)`";
    report(DiagKind::BadReducer, loc,
           "in a `T.Parallel` loop, the " + std::string(ir::reduceKindName(op)) + " reducer " + quoted(acc->name) +
               " is only updated, as " + form + " or `T.reducer_update(" + acc_i + ", v)`")
        .note(acc->loc, quoted(acc->name) + " allocated here");
    return;
  }
  if (v->dtype != acc->dtype) v = ir::makeCast(acc->dtype, v, loc);
  reducerUpdate(acc, idx, v, loc);
}

// An update `acc[idx] = op(acc[idx], value)` inside a Parallel nest: written
// into the nest's partial buffer for `acc`, combined after the nest
// (finishReducers).
void Sema::reducerUpdate(const ir::Buffer& acc, const std::vector<ir::Expr>& idx, ir::Expr value, SourceLoc loc) {
  if (threadVar_) {
    report(DiagKind::ScopeViolation, loc,
           "a reducer is updated in a `T.Parallel` loop; the statements after `T.get_thread_binding()` run once per "
           "thread and cannot combine their updates")
        .note(perThreadLoc_, "per-thread code starts here");
    return;
  }
  // The nest: the Parallel variables around the update, with constant extents.
  std::vector<ir::Var> nest;
  std::vector<int64_t> mins, extents;
  for (auto& [name, var] : parallelIteration_) {
    auto r = parallelRanges_.find(var.get());
    if (r == parallelRanges_.end()) {
      report(DiagKind::NotCompileTimeConstant, loc,
             "a reducer updated in a `T.Parallel` loop needs the loop's extents at compile time (the partial values "
             "are a fragment of the loop's shape), but `" + name + "`'s are known only at run time");
      return;
    }
    nest.push_back(var);
    mins.push_back(r->second.first);
    extents.push_back(r->second.second);
  }
  // Each index is one of the nest's variables (each at most once) or uses
  // none of them nor a loop inside the nest.
  std::unordered_set<const ir::VarNode*> nestVars, innerVars;
  for (auto& v : nest) nestVars.insert(v.get());
  for (auto& v : nestSerialVars_) innerVars.insert(v.get());
  std::vector<int> kept;  // the nest position each index names, or -1
  std::vector<ir::Expr> at;  // the index with the nest's lets substituted
  for (const ir::Expr& e : idx) at.push_back(ir::substitute(e, letValues_));
  for (size_t i = 0; i < at.size(); ++i) {
    const ir::Expr& x = at[i];
    auto* ref = ir::as<ir::VarRef>(x);
    int pos = -1;
    for (size_t k = 0; ref && k < nest.size(); ++k)
      if (nest[k] == ref->var) pos = static_cast<int>(k);
    if (pos >= 0 && std::find(kept.begin(), kept.end(), pos) != kept.end()) pos = -2;
    ir::UsesVars usesNest(nestVars), usesInner(innerVars);
    usesNest.visit(x);
    usesInner.visit(x);
    if (pos == -2 || (pos < 0 && (usesNest.found || usesInner.found))) {
      report(DiagKind::BadReducer, idx[i]->loc,
             "each index of a reducer updated in a `T.Parallel` loop is one of the loop's variables (each at most "
             "once) or does not change within the loop; this one is neither");
      return;
    }
    kept.push_back(pos);
  }
  for (ReducerNest& u : reducerNests_) {
    if (u.acc != acc) continue;
    if (!ir::structurallyEqual(u.idx, at) || u.nest.size() != nest.size()) {
      report(DiagKind::BadReducer, loc,
             "a reducer is updated at one index per `T.Parallel` loop; this loop updates " + quoted(acc->name) +
                 " at another index too")
          .note(u.loc, "the first update");
      return;
    }
    emitPartialUpdate(u, value, loc);
    return;
  }
  ReducerNest u{acc, nullptr, at, kept, nest, mins, loc};
  std::vector<ir::Expr> shape;
  for (int64_t e : extents) shape.push_back(ir::makeInt(e, DType::Int32, loc));
  u.partial = ir::makeBuffer(uniqueName(acc->name + "_partial"), acc->dtype, shape, ir::MemScope::Fragment, loc);
  reducerNests_.push_back(u);
  emitPartialUpdate(reducerNests_.back(), value, loc);
}

void Sema::emitPartialUpdate(const ReducerNest& u, ir::Expr value, SourceLoc loc) {
  std::vector<ir::Expr> at;
  for (size_t k = 0; k < u.nest.size(); ++k) {
    ir::Expr i = ir::makeVarRef(u.nest[k], loc);
    at.push_back(u.mins[k] ? ir::makeBinary(ir::BinaryOp::Sub, i, ir::makeInt(u.mins[k], i->dtype, loc), loc) : i);
  }
  ir::Expr cur = ir::makeLoad(u.partial, at, loc);
  builder_->emit(std::make_shared<const ir::StoreStmt>(
      u.partial, at, combine(reducers_[u.acc.get()], cur, std::move(value), loc), loc));
}

// Emits the outermost Parallel nest `nest`, whose body updated reducers:
// the partial buffers filled first, then the nest, then each reduced and
// combined into its reducer.
void Sema::finishReducers(const ir::Stmt& nest, SourceLoc loc) {
  std::vector<ReducerNest> updates = std::move(reducerNests_);
  reducerNests_.clear();
  for (const ReducerNest& u : updates) {
    builder_->emit(std::make_shared<const ir::AllocStmt>(u.partial, loc));
    builder_->emit(std::make_shared<const ir::FillStmt>(
        ir::fullRegion(u.partial, loc), ir::reduceIdentity(reducers_[u.acc.get()], u.acc->dtype, loc), loc));
  }
  builder_->emit(nest);
  for (const ReducerNest& u : updates) {
    ir::ReduceKind op = reducers_[u.acc.get()];
    // Reduce the dimensions no index names, the last first.
    ir::Buffer cur = u.partial;
    std::vector<int> dims;  // the nest position of each dimension of `cur`
    for (size_t k = 0; k < u.nest.size(); ++k) dims.push_back(static_cast<int>(k));
    for (int d = static_cast<int>(u.nest.size()); d-- > 0;) {
      if (std::find(u.kept.begin(), u.kept.end(), d) != u.kept.end()) continue;
      size_t at = std::find(dims.begin(), dims.end(), d) - dims.begin();
      std::vector<ir::Expr> shape = cur->shape;
      shape.erase(shape.begin() + at);
      dims.erase(dims.begin() + at);
      if (shape.empty()) shape.push_back(ir::makeInt(1, DType::Int32, loc));
      ir::Buffer next = ir::makeBuffer(uniqueName(u.acc->name + "_partial"), u.acc->dtype, shape,
                                       ir::MemScope::Fragment, loc);
      builder_->emit(std::make_shared<const ir::AllocStmt>(next, loc));
      builder_->emit(std::make_shared<const ir::ReduceStmt>(op, ir::fullRegion(cur, loc), ir::fullRegion(next, loc),
                                                            static_cast<int>(at), true, loc));
      cur = next;
    }
    // acc[idx] = op(acc[idx], cur[...]) over cur's elements, the nest's
    // variables in the index replaced by cur's.
    std::vector<ir::Var> vars;
    ir::VarMap toCur;
    for (size_t k = 0; k < cur->shape.size(); ++k) {
      vars.push_back(freshVar(u.acc->name + "_i", DType::Int32, loc));
      if (k < dims.size()) {
        const ir::Var& v = u.nest[dims[k]];
        ir::Expr i = ir::makeVarRef(vars[k], loc);
        if (i->dtype != v->dtype) i = ir::makeCast(v->dtype, i, loc);
        int64_t min = u.mins[dims[k]];
        toCur[v.get()] = min ? ir::makeBinary(ir::BinaryOp::Add, i, ir::makeInt(min, v->dtype, loc), loc) : i;
      }
    }
    std::vector<ir::Expr> accIdx, curIdx;
    for (const ir::Expr& e : u.idx) accIdx.push_back(ir::substitute(e, toCur));
    for (auto& v : vars) curIdx.push_back(ir::makeVarRef(v, loc));
    ir::Stmt body = std::make_shared<const ir::StoreStmt>(
        u.acc, accIdx, combine(op, ir::makeLoad(u.acc, accIdx, loc), ir::makeLoad(cur, curIdx, loc), loc), loc);
    for (size_t k = vars.size(); k-- > 0;)
      body = std::make_shared<ir::ForStmt>(vars[k], ir::makeInt(0, DType::Int32, loc), cur->shape[k],
                                           ir::ForKind::Parallel, body, loc);
    builder_->emit(body);
  }
}

}  // namespace tlc::sema
