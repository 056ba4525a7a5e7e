// TileLang's thread-level programs and TVM script's conditional frames:
// `tid = T.get_thread_binding()` at the top level of a kernel's body starts
// code each thread runs (a Parallel loop over the block's threads), and
// `with T.If(c): with T.Then(): ... with T.Else(): ...` is an if / else.
#include <map>
#include <set>

#include "compiler/ir/buffer_writes.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

// TVM script's conditional frames, which TileLang kernels write as
//   with T.If(cond):
//       with T.Then(): ...
//       with T.Else(): ...     (optional)
// are an `if` / `else`. The `T.If` frame holds exactly a `T.Then()` frame
// and at most one `T.Else()` after it.
void Sema::lowerIfFrame(const BuiltinInfo& b, const ast::Expr& ctx, const ast::Stmt& s) {
  std::string name = std::string("T.") + b.name;
  if (b.id != BuiltinId::IfFrame) {
    report(DiagKind::MisusedBuiltin, ctx.loc,
           "`with " + name + "():` is a branch of a `with T.If(cond):` frame and stands directly inside one");
    return;
  }
  if (!s.names.empty()) {
    report(DiagKind::MisusedBuiltin, ctx.loc, "`with T.If(cond):` binds no name; drop the `as`");
    return;
  }
  CallArgs args;
  if (!matchArgs(ctx, name, b.params, b.required, b.variadic, args)) return;
  // The branches: `with T.Then():` first, then an optional `with T.Else():`.
  const ast::Block* branches[2] = {nullptr, nullptr};
  auto frameOf = [&](const ast::Stmt& st) -> std::optional<BuiltinId> {
    if (st.kind != ast::StmtKind::With || !st.value || st.value->kind != ast::ExprKind::Call ||
        st.value->operands.empty() || !st.value->operands[0])
      return std::nullopt;
    const ast::Expr& callee = *st.value->operands[0];
    if (callee.kind != ast::ExprKind::Attribute || (callee.name != "Then" && callee.name != "Else"))
      return std::nullopt;
    return callee.name == "Then" ? BuiltinId::ThenFrame : BuiltinId::ElseFrame;
  };
  for (const ast::StmtPtr& st : s.body) {
    if (!st || st->kind == ast::StmtKind::Pass) continue;
    std::optional<BuiltinId> f = frameOf(*st);
    int slot = f == BuiltinId::ThenFrame ? 0 : f == BuiltinId::ElseFrame ? 1 : -1;
    std::string problem;
    if (slot < 0)
      problem = "a `with T.If(cond):` frame holds `with T.Then():` and, after it, `with T.Else():`; put this "
                "statement in one of them";
    else if (slot == 1 && !branches[0])
      problem = "`with T.Else():` comes after `with T.Then():`";
    else if (branches[slot])
      problem = std::string("a `T.If` frame has one `with T.") + (slot == 0 ? "Then" : "Else") + "():` branch";
    if (!problem.empty()) {
      report(DiagKind::MisusedBuiltin, st->loc, problem);
      return;
    }
    branches[slot] = &st->body;
  }
  if (!branches[0]) {
    report(DiagKind::MisusedBuiltin, ctx.loc, "`with T.If(cond):` needs a `with T.Then():` branch inside it");
    return;
  }
  static const ast::Block kEmpty;
  lowerConditional(*args.slots[0], "`T.If`", *branches[0], branches[1] ? *branches[1] : kEmpty, s.loc);
}

// Whether `e` (or a statement's own expressions, not its bodies') calls
// TileLang's `T.get_thread_binding`.
static bool bindsThread(const ast::Expr* e) {
  if (!e) return false;
  if (e->kind == ast::ExprKind::Attribute && (e->name == "get_thread_binding" || e->name == "get_thread_bindings"))
    return true;
  for (const ast::ExprPtr& x : e->operands)
    if (bindsThread(x.get())) return true;
  for (const ast::Keyword& k : e->keywords)
    if (bindsThread(k.value.get())) return true;
  return false;
}
static bool bindsThread(const ast::Stmt& s) { return bindsThread(s.target.get()) || bindsThread(s.value.get()); }

// Adds the names an expression or statement (bodies included) uses to `out`.
static void namesIn(const ast::Expr* e, std::set<std::string>& out) {
  if (!e) return;
  if (e->kind == ast::ExprKind::Name) out.insert(e->name);
  for (const ast::ExprPtr& x : e->operands) namesIn(x.get(), out);
  for (const ast::Keyword& k : e->keywords) namesIn(k.value.get(), out);
}
static void namesIn(const ast::Stmt& s, std::set<std::string>& out) {
  namesIn(s.target.get(), out);
  namesIn(s.value.get(), out);
  for (const ast::Block* b : {&s.body, &s.orelse})
    for (const ast::StmtPtr& x : *b)
      if (x) namesIn(*x, out);
}
static bool readsElements(const ast::Expr* e) {
  if (!e) return false;
  if (e->kind == ast::ExprKind::Subscript) return true;
  for (const ast::ExprPtr& x : e->operands)
    if (readsElements(x.get())) return true;
  for (const ast::Keyword& k : e->keywords)
    if (readsElements(k.value.get())) return true;
  return false;
}
// `T.alloc_var(...)`, `T.alloc_local(...)` or `T.alloc_fragment(shape, dtype, "local")`: a thread's own buffer.
static bool allocatesPrivate(const ast::Expr* e, const std::string& callee) {
  if (callee == "alloc_var" || callee == "alloc_local") return true;
  if (callee != "alloc_fragment") return false;
  auto local = [](const ast::Expr* x) { return x && x->kind == ast::ExprKind::String && x->name == "local"; };
  if (e->operands.size() > 3 && local(e->operands[3].get())) return true;
  for (const ast::Keyword& k : e->keywords)
    if (k.name == "scope" && local(k.value.get())) return true;
  return false;
}
// The callee's attribute name of `T.f(...)`, or "".
static std::string calleeName(const ast::Expr* e) {
  if (!e || e->kind != ast::ExprKind::Call || e->operands.empty() || !e->operands[0]) return "";
  const ast::Expr& c = *e->operands[0];
  return c.kind == ast::ExprKind::Attribute ? c.name : "";
}

// The statements before `first` (the binding) that allocate a thread's own
// buffer (`x = T.alloc_var(...)`, `T.alloc_local(...)`) or only set one up
// (`T.clear(x)`, `T.fill(x, v)`, `x[i] = v`, `x = v`, `x += v` with v reading
// no buffer element), for buffers no other statement before `first` names.
std::vector<bool> Sema::threadPrivateSetup(const ast::Block& block, size_t first) {
  std::vector<bool> deferred(first, false);
  std::map<std::string, std::vector<size_t>> owned;  // buffer name -> its statements
  std::set<std::string> pinned;
  auto targetName = [](const ast::Expr* t) -> std::string {
    if (t && t->kind == ast::ExprKind::Name) return t->name;
    if (t && t->kind == ast::ExprKind::Subscript && !t->operands.empty() && t->operands[0] &&
        t->operands[0]->kind == ast::ExprKind::Name)
      return t->operands[0]->name;
    return "";
  };
  for (size_t i = 0; i < first; ++i) {
    if (!block[i]) continue;
    const ast::Stmt& s = *block[i];
    std::string callee = calleeName(s.value.get()), name;
    bool assign = s.kind == ast::StmtKind::Assign || s.kind == ast::StmtKind::AugAssign;
    if (s.kind == ast::StmtKind::Assign && s.target && s.target->kind == ast::ExprKind::Name &&
        allocatesPrivate(s.value.get(), callee) && !owned.count(s.target->name)) {
      name = s.target->name;
    } else if (s.kind == ast::StmtKind::Expr && (callee == "clear" || callee == "fill") &&
               s.value->operands.size() > 1 && s.value->operands[1] &&
               s.value->operands[1]->kind == ast::ExprKind::Name && owned.count(s.value->operands[1]->name)) {
      name = s.value->operands[1]->name;
      for (size_t k = 2; k < s.value->operands.size(); ++k)
        if (readsElements(s.value->operands[k].get())) pinned.insert(name);
      for (const ast::Keyword& k : s.value->keywords)
        if (readsElements(k.value.get())) pinned.insert(name);
    } else if (assign && owned.count(targetName(s.target.get()))) {
      name = targetName(s.target.get());
      if (readsElements(s.value.get())) pinned.insert(name);
    }
    // Another thread-private buffer this statement names stays the block's.
    std::set<std::string> used;
    if (name.empty())
      namesIn(s, used);
    else
      namesIn(s.value.get(), used);
    for (const std::string& n : used)
      if (n != name && owned.count(n)) pinned.insert(n);
    if (!name.empty()) owned[name].push_back(i);
  }
  for (auto& [n, stmts] : owned)
    if (!pinned.count(n))
      for (size_t i : stmts) deferred[i] = true;
  return deferred;
}

// A kernel's body. TileLang's thread-level programs bind the thread index,
// `tid = T.get_thread_binding()`, and write the rest of the kernel as code
// every thread runs: from the first statement that binds it, the body is
// the body of a Parallel loop over the block's threads (iteration t is
// thread t's work), so such code keeps its meaning as long as its threads
// do not exchange values through shared memory (which would need the
// barriers a Parallel loop's independent iterations do not have:
// `T.sync_threads()` there is an error) and it holds no tile operations.
void Sema::lowerKernelBody(const ast::Block& block) {
  size_t first = 0;
  while (first < block.size() && !(block[first] && bindsThread(*block[first]))) ++first;
  blockPrivate_.clear();
  if (first == block.size()) {
    lowerBlockInto(block);
    return;
  }
  // TileLang's threads each have their own `T.alloc_var` / `T.alloc_local`
  // buffers, wherever they are allocated. Those allocated before the binding
  // move into the per-thread code with the statements that only set them up
  // (a `T.clear` / `T.fill`, an element or name assigned a value that reads
  // no buffer), unless a statement before the binding uses them otherwise.
  std::vector<bool> deferred = threadPrivateSetup(block, first);
  for (size_t i = 0; i < first; ++i)
    if (block[i] && !deferred[i]) lowerStmt(*block[i]);
  SourceLoc loc = block[first]->loc;
  ScopeGuard guard(*this, false);
  ir::Var thread = freshVar("thread", DType::Int32, loc);
  threadVar_ = thread;
  perThreadLoc_ = loc;
  StmtBuilder body;
  StmtBuilder* saved = builder_;
  builder_ = &body;
  ++loopDepth_;
  parallelLoc_ = loc;
  loops_.push_back(LoopFrame{ir::ForKind::Parallel, "T.get_thread_binding", loc});
  parallelIteration_.push_back({"thread", thread});
  for (size_t i = 0; i < block.size(); ++i)
    if (block[i] && (i >= first || deferred[i])) lowerStmt(*block[i]);
  parallelIteration_.pop_back();
  loops_.pop_back();
  parallelLoc_ = {};
  --loopDepth_;
  builder_ = saved;
  threadVar_ = nullptr;
  perThreadLoc_ = {};
  ir::Stmt perThread = body.finish(loc);
  // A buffer the block shares, written by every thread: wrong on the GPU.
  std::set<const ir::BufferNode*> written = collectBufferWrites(perThread).buffers;
  for (const ir::Buffer& b : blockPrivate_)
    if (written.count(b.get())) {
      report(DiagKind::ScopeViolation, loc,
             "`" + b->name + "` is allocated and used before `T.get_thread_binding()` (by more than assignments "
             "of its first values), so the block has one copy of it, but the per-thread code after the binding "
             "writes it; give the per-thread code a buffer of its own, allocated after the binding")
          .note(b->loc, "`" + b->name + "` is allocated here");
      return;
    }
  builder_->emit(std::make_shared<const ir::ForStmt>(thread, ir::makeInt(0, DType::Int32, loc),
                                                     ir::makeInt(kernelThreads_, DType::Int32, loc),
                                                     ir::ForKind::Parallel, perThread, loc));
}

// TileLang's bindings: `T.get_thread_binding(dim=0)` in per-thread code is
// the index along `dim` of the thread block `threads=(x, y, z)` describes (x
// fastest), from the thread's number in the block; `T.get_block_binding(dim)`
// is the block index along `dim` (0 past the grid's dimensions); the plural
// forms give all three.
Value Sema::binding(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args) {
  SourceLoc loc = call.loc;
  std::string name = std::string("T.") + b.name;
  bool thread = b.id == BuiltinId::GetThreadBinding || b.id == BuiltinId::GetThreadBindings;
  if (thread && !threadVar_) {
    report(DiagKind::ScopeViolation, loc,
           "`" + name + "` starts per-thread code only at the top level of a kernel's body (`tid = "
           "T.get_thread_binding()` there, the statements after it run once per thread); elsewhere write "
           "per-thread work as a `T.Parallel` loop, whose variables take the thread index's place");
    return Value::error(loc);
  }
  if (!thread && !requireKernel(loc, "`" + name + "`")) return Value::error(loc);
  auto index = [&](int64_t dim) {
    if (!thread)
      return dim < (int64_t)kernelBlockVars_.size() ? ir::makeVarRef(kernelBlockVars_[dim], loc)
                                                    : ir::makeInt(0, DType::Int32, loc);
    const std::vector<int64_t>& dims = kernelThreadDims_;
    int64_t below = 1;
    for (int64_t d = 0; d < dim && d < (int64_t)dims.size(); ++d) below *= dims[d];
    int64_t extent = dim < (int64_t)dims.size() ? dims[dim] : 1;
    ir::Expr t = ir::makeVarRef(threadVar_, loc);
    if (below > 1) t = foldBinary(ir::BinaryOp::FloorDiv, t, ir::makeInt(below, DType::Int32, loc), loc);
    if (below * extent < kernelThreads_)
      t = foldBinary(ir::BinaryOp::FloorMod, t, ir::makeInt(extent, DType::Int32, loc), loc);
    return t;
  };
  if (b.id == BuiltinId::GetThreadBindings || b.id == BuiltinId::GetBlockBindings) {
    Value all;
    all.kind = ValueKind::Tuple;
    all.loc = loc;
    for (int64_t d = 0; d < 3; ++d) all.elems.push_back(Value::ofExpr(index(d), loc));
    return all;
  }
  int64_t dim = 0;
  if (args.slots[0]) {
    auto d = constInt(*args.slots[0], "the dimension of `" + name + "`");
    if (!d) return Value::error(loc);
    dim = *d;
  }
  if (dim < 0 || dim > 2) {
    report(DiagKind::BadKernel, args.slots[0]->loc,
           "`" + name + "` takes the dimension 0, 1 or 2 of the " + (thread ? "thread block" : "grid") + ", not " +
               std::to_string(dim));
    return Value::error(loc);
  }
  return Value::ofExpr(index(dim), loc);
}

}  // namespace tlc::sema
