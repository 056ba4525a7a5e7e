#include "compiler/passes/cpu_group_blocks.h"

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/buffer_names.h"
#include "compiler/ir/buffer_writes.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/loop_jumps.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"

namespace tlc::cpu {

using namespace ir;

namespace {

constexpr unsigned kX = 1, kY = 2;  // block-dependence bits

// Which block indices (kX, kY) expressions and statements depend on, through
// the variables they use, the lets and loops that bind those, and the
// conditions and loop bounds around them. A value read from a block-local
// buffer depends on both.
class BlockDependence : public IRVisitor {
 public:
  std::unordered_map<const VarNode*, unsigned> varBits;
  // Per block-local buffer: the dependence of its writes, and whether any
  // write is other than a fill or a copy from a tensor the kernel never writes.
  std::unordered_map<const BufferNode*, unsigned> writeBits;
  std::unordered_set<const BufferNode*> otherWrites;
  std::vector<Buffer> allocs;
  std::vector<const GemmStmt*> gemms;
  // Per gemm operand read in place from a tensor: what its region depends on.
  std::vector<unsigned> globalOperandBits;
  bool unsupported = false;  // an alloc below the top level, or a block-dependent let that reads memory

  BlockDependence(const KernelStmt& k, std::set<const BufferNode*> written) : written_(std::move(written)) {
    if (!k.blockVars.empty()) varBits[k.blockVars[0].get()] = kX;
    if (k.blockVars.size() > 1) varBits[k.blockVars[1].get()] = kY;
  }

  unsigned bitsOf(const Expr& e) {
    struct Refs : IRVisitor {
      const std::unordered_map<const VarNode*, unsigned>* bits;
      unsigned out = 0;
      bool loads = false;
      void visitVarRef(const VarRef* r) override {
        auto it = bits->find(r->var.get());
        if (it != bits->end()) out |= it->second;
      }
      void visitLoad(const Load* l) override {
        loads = true;
        // A block's own buffers (a mask copied into a local or shared
        // buffer, a count in a var) may hold other values in each block.
        if (l->buffer->scope != MemScope::Global) out |= kX | kY;
        IRVisitor::visitLoad(l);
      }
    } refs;
    refs.bits = &varBits;
    refs.visit(e);
    lastLoads_ = refs.loads;
    return refs.out;
  }
  unsigned bitsOf(const Region& r) {
    unsigned b = 0;
    for (const Range& rg : r.ranges) b |= bitsOf(rg.min) | bitsOf(rg.extent);
    return b;
  }

  void visitSeq(const SeqStmt* n) override {
    for (const Stmt& s : n->stmts) visit(s);
  }
  void visitAlloc(const AllocStmt* n) override {
    if (depth_ > 0) unsupported = true;
    allocs.push_back(n->buffer);
  }
  void visitFor(const ForStmt* n) override {
    unsigned b = context_ | bitsOf(n->min) | bitsOf(n->extent);
    varBits[n->var.get()] = b;
    nested(b, n->body);
  }
  void visitIf(const IfStmt* n) override {
    unsigned b = context_ | bitsOf(n->cond);
    nested(b, n->thenBody);
    if (n->elseBody) nested(b, n->elseBody);
  }
  void visitLet(const LetStmt* n) override {
    unsigned b = context_ | bitsOf(n->value);
    if (b != context_ && lastLoads_) unsupported = true;
    varBits[n->var.get()] = b;
    nested(context_, n->body);
  }
  void visitCopy(const CopyStmt* n) override {
    const Buffer& src = n->src.buffer;
    bool fromTable = src->scope == MemScope::Global && !written_.count(src.get());
    write(n->dst.buffer, bitsOf(n->src) | bitsOf(n->dst), fromTable);
  }
  void visitFill(const FillStmt* n) override { write(n->dst.buffer, bitsOf(n->dst) | bitsOf(n->value), true); }
  void visitGemm(const GemmStmt* n) override {
    gemms.push_back(n);
    for (const Region* r : {&n->a, &n->b})
      if (r->buffer->scope == MemScope::Global) globalOperandBits.push_back(context_ | bitsOf(*r));
    write(n->c.buffer, 0, false);
  }
  void visitReduce(const ReduceStmt* n) override { write(n->dst.buffer, 0, false); }
  void visitStore(const StoreStmt* n) override { write(n->buffer, 0, false); }
  void visitAtomic(const AtomicStmt* n) override { write(n->buffer, 0, false); }

 private:
  void nested(unsigned bits, const Stmt& s) {
    unsigned saved = context_;
    context_ = bits;
    ++depth_;
    visit(s);
    --depth_;
    context_ = saved;
  }
  void write(const Buffer& b, unsigned bits, bool plain) {
    if (b->scope == MemScope::Global) return;
    writeBits[b.get()] |= context_ | bits;
    if (!plain) otherWrites.insert(b.get());
  }

  std::set<const BufferNode*> written_;
  unsigned context_ = 0;
  int depth_ = 0;
  bool lastLoads_ = false;
};

struct Member {
  int ix, iy;
  VarMap vars;
  BufferMap buffers;
  Expr inGrid;  // null: always inside the grid
};

class Grouping {
 public:
  Grouping(const KernelStmt& k, BlockDependence& dep, const GroupLimits& limits)
      : k_(k), dep_(dep), limits_(limits) {}

  // The grouped kernel, or null when grouping does not pay or does not apply.
  Stmt run() {
    if (dep_.unsupported || !chooseFactors()) return nullptr;
    SourceLoc loc = k_.loc;
    std::vector<Var> vars = k_.blockVars;
    std::vector<Expr> grid = k_.grid;
    int f[2] = {fx_, fy_};
    for (int a = 0; a < 2; ++a) {
      if (f[a] == 1) continue;
      const Var& old = k_.blockVars[size_t(a)];
      vars[size_t(a)] = makeVar(old->name, old->dtype, old->loc);
      Expr g = grid[size_t(a)];
      grid[size_t(a)] = floorDiv(add(g, makeInt(f[a] - 1, g->dtype)), makeInt(f[a], g->dtype));
    }
    std::unordered_set<std::string> names = bufferNames(k_.body);
    for (int iy = 0; iy < fy_; ++iy)
      for (int ix = 0; ix < fx_; ++ix) {
        Member m{ix, iy, {}, {}, nullptr};
        int at[2] = {ix, iy};
        for (int a = 0; a < 2; ++a) {
          if (f[a] == 1) continue;
          const Var& old = k_.blockVars[size_t(a)];
          Expr idx = add(mul(makeVarRef(vars[size_t(a)], loc), makeInt(f[a], old->dtype)), makeInt(at[a], old->dtype));
          m.vars[old.get()] = idx;
          int64_t g;
          bool divides = constInt(k_.grid[size_t(a)], &g) && g % f[a] == 0;
          if (at[a] > 0 && !divides) {
            Expr inside = lt(idx, k_.grid[size_t(a)]);
            m.inGrid = m.inGrid ? logicalAnd(m.inGrid, inside) : inside;
          }
        }
        members_.push_back(std::move(m));
      }
    // Each buffer's instance per member: its own, or the earliest member's
    // that writes the same values into it (shared()).
    for (const Buffer& b : dep_.allocs) {
      std::vector<Buffer> inst(members_.size());
      for (size_t i = 0; i < members_.size(); ++i) {
        size_t r = representative(b.get(), i);
        if (r != i) {
          inst[i] = inst[r];
        } else if (i == 0) {
          inst[i] = b;
        } else {
          inst[i] = makeBuffer(freshBufferName(b->name, "_g" + std::to_string(i), &names), b->dtype, b->shape,
                               b->scope, b->loc);
        }
        if (inst[i] != b) members_[i].buffers[b.get()] = inst[i];
      }
    }
    Stmt body = jam(k_.body);
    return std::make_shared<const KernelStmt>(grid, vars, k_.threads, body, loc, k_.swizzle);
  }

 private:
  bool shared(const BufferNode* b) const {
    auto it = dep_.writeBits.find(b);
    return it != dep_.writeBits.end() && !dep_.otherWrites.count(b);
  }
  unsigned bits(const BufferNode* b) const {
    auto it = dep_.writeBits.find(b);
    return it == dep_.writeBits.end() ? 0 : it->second;
  }
  // The earliest member whose instance of `b` holds what member i's would.
  size_t representative(const BufferNode* b, size_t i) const {
    if (!shared(b)) return i;
    int rx = (bits(b) & kX) ? members_[i].ix : 0;
    int ry = (bits(b) & kY) ? members_[i].iy : 0;
    return size_t(ry * fx_ + rx);
  }

  int64_t groupBytes(int fx, int fy) const {
    int64_t total = 0;
    for (const Buffer& b : dep_.allocs) {
      int64_t bytes = dtypeBits(b->dtype) / 8;
      for (const Expr& e : b->shape) {
        int64_t n;
        if (!constInt(e, &n)) return -1;
        bytes *= n;
      }
      int copies = fx * fy;
      if (shared(b.get())) copies = ((bits(b.get()) & kX) ? fx : 1) * ((bits(b.get()) & kY) ? fy : 1);
      total += bytes * copies;
    }
    return total;
  }

  bool chooseFactors() {
    bool alongX = false, alongY = false;
    for (const GemmStmt* g : dep_.gemms)
      for (const Buffer& b : {g->a.buffer, g->b.buffer}) {
        if (b->scope == MemScope::Global || !shared(b.get())) continue;
        alongX = alongX || !(bits(b.get()) & kX);
        alongY = alongY || !(bits(b.get()) & kY);
      }
    // Operands read in place: the blocks of a group read the same lines.
    for (unsigned b : dep_.globalOperandBits) {
      alongX = alongX || !(b & kX);
      alongY = alongY || !(b & kY);
    }
    // The largest group (at most 8 blocks; of two equal ones, the one with
    // fewer buffers) within the byte limit that leaves at least minGroups groups.
    struct Try {
      int fx, fy;
      int64_t bytes;
    };
    std::vector<Try> tries;
    for (int fx : {1, 2, 4})
      for (int fy : {1, 2, 4}) {
        if ((fx > 1 && !alongX) || (fy > 1 && !alongY) || fx * fy == 1 || fx * fy > 8) continue;
        if (longerThanGrid(0, fx) || longerThanGrid(1, fy)) continue;
        int64_t bytes = groupBytes(fx, fy);
        if (bytes < 0) return false;
        if (bytes > limits_.maxBytes || groups(fx, fy) < limits_.minGroups) continue;
        tries.push_back({fx, fy, bytes});
      }
    if (tries.empty()) return false;
    std::stable_sort(tries.begin(), tries.end(), [](const Try& a, const Try& b) {
      return a.fx * a.fy != b.fx * b.fy ? a.fx * a.fy > b.fx * b.fy : a.bytes < b.bytes;
    });
    fx_ = tries[0].fx;
    fy_ = tries[0].fy;
    return true;
  }

  // Whether a factor > 1 passes the grid's known extent along axis a.
  bool longerThanGrid(size_t a, int f) const {
    int64_t g;
    return f > 1 && (a >= k_.grid.size() || (constInt(k_.grid[a], &g) && g < f));
  }

  // The number of groups of fx x fy blocks; a grid of unknown extent counts
  // as large.
  int64_t groups(int fx, int fy) const {
    int64_t n = 1;
    for (size_t a = 0; a < k_.grid.size(); ++a) {
      int64_t g;
      if (!constInt(k_.grid[a], &g)) return INT64_MAX;
      int f = a == 0 ? fx : a == 1 ? fy : 1;
      n *= (g + f - 1) / f;
    }
    return n;
  }

  unsigned exprBits(const Expr& e) { return dep_.bitsOf(e); }

  // One statement for every member of the group.
  Stmt jam(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Seq: {
        std::vector<Stmt> out;
        for (const Stmt& c : as<SeqStmt>(s)->stmts) out.push_back(jam(c));
        return makeSeq(std::move(out), s->loc);
      }
      case StmtKind::Alloc: {
        std::vector<Stmt> out;
        const Buffer& b = as<AllocStmt>(s)->buffer;
        for (size_t i = 0; i < members_.size(); ++i) {
          if (representative(b.get(), i) != i) continue;
          auto it = members_[i].buffers.find(b.get());
          out.push_back(std::make_shared<const AllocStmt>(it == members_[i].buffers.end() ? b : it->second, s->loc));
        }
        return makeSeq(std::move(out), s->loc);
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        bool fusable = (f->forKind == ForKind::Serial || f->forKind == ForKind::Pipelined) &&
                       (exprBits(f->min) | exprBits(f->extent)) == 0 && !jumpsOutOf(f->body);
        if (!fusable) break;
        auto out = std::make_shared<ForStmt>(f->var, f->min, f->extent, f->forKind, jam(f->body), f->loc);
        out->copyLoopAttributes(*f);
        return out;
      }
      case StmtKind::If: {
        auto* n = as<IfStmt>(s);
        if (exprBits(n->cond) != 0) break;
        return std::make_shared<const IfStmt>(n->cond, jam(n->thenBody), n->elseBody ? jam(n->elseBody) : nullptr,
                                              n->loc, n->likely);
      }
      case StmtKind::Let: {
        auto* n = as<LetStmt>(s);
        if (exprBits(n->value) == 0) return std::make_shared<const LetStmt>(n->var, n->value, jam(n->body), n->loc);
        // One variable per member, bound outside in, the first member outermost.
        std::vector<std::pair<Var, Expr>> lets;
        for (size_t i = 0; i < members_.size(); ++i) {
          Var v = i == 0 ? n->var : makeVar(n->var->name + "_g" + std::to_string(i), n->var->dtype, n->var->loc);
          lets.push_back({v, substitute(n->value, members_[i].vars)});
          members_[i].vars[n->var.get()] = makeVarRef(v, n->loc);
        }
        Stmt body = jam(n->body);
        for (Member& m : members_) m.vars.erase(n->var.get());
        for (size_t i = lets.size(); i-- > 0;)
          body = std::make_shared<const LetStmt>(lets[i].first, lets[i].second, body, n->loc);
        return body;
      }
      default:
        break;
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i < members_.size(); ++i) {
      const Member& m = members_[i];
      if (dropped(s, i)) continue;
      Stmt t = substitute(s, m.vars, m.buffers);
      out.push_back(m.inGrid ? std::make_shared<const IfStmt>(m.inGrid, t, nullptr, s->loc) : t);
    }
    return makeSeq(std::move(out), s->loc);
  }

  // A fill or copy into a buffer instance that member i shares with an
  // earlier member, which writes the same values.
  bool dropped(const Stmt& s, size_t i) const {
    const Region* dst = nullptr;
    if (auto* c = as<CopyStmt>(s)) dst = &c->dst;
    if (auto* f = as<FillStmt>(s)) dst = &f->dst;
    return dst && representative(dst->buffer.get(), i) != i;
  }

  const KernelStmt& k_;
  BlockDependence& dep_;
  GroupLimits limits_;
  int fx_ = 1, fy_ = 1;
  std::vector<Member> members_;
};

class GroupKernels : public IRMutator {
 public:
  explicit GroupKernels(const GroupLimits& limits) : limits_(limits) {}

 protected:
  Stmt mutateKernel(const KernelStmt* k, const Stmt& self) override {
    BlockDependence dep(*k, collectBufferWrites(k->body).buffers);
    dep.visit(k->body);
    Stmt grouped = Grouping(*k, dep, limits_).run();
    return grouped ? grouped : self;
  }

 private:
  GroupLimits limits_;
};

}  // namespace

Module groupBlocks(const Module& m, const GroupLimits& limits) {
  return rewriteBodies(m, [&](const PrimFunc& f) { return GroupKernels(limits).mutate(f.body); });
}

}  // namespace tlc::cpu
