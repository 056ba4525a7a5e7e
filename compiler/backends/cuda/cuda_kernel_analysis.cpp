// Analyses of one kernel before emission: where each buffer lives, which
// shared buffers are versioned by software pipelining or swizzled for
// tensor-core operands, and which memory each statement touches (for barriers).
#include <iostream>
#include <optional>

#include "compiler/backends/cuda/cuda_bank_conflicts.h"
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_kernel_scan.h"
#include "compiler/backends/cuda/cuda_private_locals.h"
#include "compiler/backends/cuda/cuda_layout_plan.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/ir/buffer_access.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cuda {

using namespace ir;

void Accesses::merge(const Accesses& o) {
  reads.insert(o.reads.begin(), o.reads.end());
  writes.insert(o.writes.begin(), o.writes.end());
}

bool Accesses::conflictsWith(const Accesses& later) const {
  for (auto* b : writes)
    if (later.reads.count(b) || later.writes.count(b)) return true;
  for (auto* b : reads)
    if (later.writes.count(b)) return true;
  return false;
}

namespace {

// The destinations of copies out of the given buffers.
class CopyTargets : public IRVisitor {
 public:
  explicit CopyTargets(std::function<bool(const BufferNode*)> from) : from_(std::move(from)) {}
  std::unordered_set<const BufferNode*> targets;
  void visitCopy(const CopyStmt* c) override {
    if (from_(c->src.buffer.get())) targets.insert(c->dst.buffer.get());
  }

 private:
  std::function<bool(const BufferNode*)> from_;
};

class AccessScan : public BufferAccessVisitor {
 public:
  // `staged`: the versioned tiles of pipelines, whose copy_async writes are
  // ordered by the pipeline's own waits and barriers.
  AccessScan(const std::function<bool(const Buffer&)>& visible, const std::function<bool(const Buffer&)>& staged)
      : visible_(visible), staged_(staged) {}
  Accesses acc;

 protected:
  void read(const Buffer& b) override {
    if (visible_(b)) acc.reads.insert(b.get());
  }
  void write(const Buffer& b) override {
    if (visible_(b)) acc.writes.insert(b.get());
  }
  // A copy_async into a pipeline's stage (an expanded pipeline's,
  // emitExpandedPipeline) writes it when a wait_group completes it, and the
  // barrier after that wait orders the writes before every later read; the
  // stage's earlier readers finished before the barrier ahead of its issue
  // (the steady state's wait, or the one before the prologue). So no other
  // barrier is its. Other copy_asyncs (cuda-async-copies) count as copies.
  void visitCopy(const CopyStmt* n) override {
    if (!n->async || !staged_(n->dst.buffer)) return BufferAccessVisitor::visitCopy(n);
    read(n->src.buffer);
    IRVisitor::visitCopy(n);
  }

 private:
  const std::function<bool(const Buffer&)>& visible_;
  const std::function<bool(const Buffer&)>& staged_;
};

bool constShape(const Buffer& b, int64_t* elems) {
  int64_t n = 1;
  for (auto& d : b->shape) {
    int64_t v;
    if (!constInt(d, &v)) return false;
    n *= v;
  }
  *elems = n;
  return true;
}

// Variables bound inside a statement (loop vars, lets) — a producer copy that
// uses one of them cannot be hoisted into an earlier iteration.
// The coefficient c of `k` in `e` when e = c * k + rest, with c a constant
// and rest the same in every iteration (no variable of `bound`, no load);
// nothing otherwise. Index arithmetic is assumed not to overflow.
std::optional<int64_t> coefficientOf(const Expr& e, const VarNode* k, const std::unordered_set<const VarNode*>& bound) {
  switch (e->kind) {
    case ExprKind::IntImm: return 0;
    case ExprKind::VarRef: {
      const VarNode* v = as<VarRef>(e)->var.get();
      if (v == k) return 1;
      if (bound.count(v)) return std::nullopt;
      return 0;
    }
    case ExprKind::Cast: {
      auto* c = as<Cast>(e);
      if (!isInteger(c->dtype) || !isInteger(c->value->dtype)) return std::nullopt;
      return coefficientOf(c->value, k, bound);
    }
    case ExprKind::Binary: {
      auto* b = as<Binary>(e);
      auto ca = coefficientOf(b->a, k, bound), cb = coefficientOf(b->b, k, bound);
      if (!ca || !cb) return std::nullopt;
      int64_t c;
      if (b->op == BinaryOp::Add) return *ca + *cb;
      if (b->op == BinaryOp::Sub) return *ca - *cb;
      if (b->op == BinaryOp::Mul && constInt(b->a, &c)) return c * *cb;
      if (b->op == BinaryOp::Mul && constInt(b->b, &c)) return c * *ca;
      if (*ca == 0 && *cb == 0) return 0;
      return std::nullopt;
    }
    default: {
      std::unordered_set<const VarNode*> vars = bound;
      vars.insert(k);
      UsesVars uses(vars);
      uses.visit(e);
      if (uses.found || uses.loads) return std::nullopt;
      return 0;
    }
  }
}

// The writes of each buffer in a statement: the regions of copies and fills,
// and how many writes of any kind.
class WriteScan : public IRVisitor {
 public:
  std::unordered_map<const BufferNode*, std::vector<const Region*>> regions;
  std::unordered_map<const BufferNode*, int> writes;
  void visitStore(const StoreStmt* s) override {
    ++writes[s->buffer.get()];
    IRVisitor::visitStore(s);
  }
  void visitAtomic(const AtomicStmt* a) override {
    ++writes[a->buffer.get()];
    IRVisitor::visitAtomic(a);
  }
  void visitCopy(const CopyStmt* c) override {
    region(c->dst);
    IRVisitor::visitCopy(c);
  }
  void visitFill(const FillStmt* f) override {
    region(f->dst);
    IRVisitor::visitFill(f);
  }
  void visitReduce(const ReduceStmt* r) override {
    ++writes[r->dst.buffer.get()];
    IRVisitor::visitReduce(r);
  }
  void visitGemm(const GemmStmt* g) override {
    ++writes[g->c.buffer.get()];
    IRVisitor::visitGemm(g);
  }

 private:
  void region(const Region& r) {
    ++writes[r.buffer.get()];
    regions[r.buffer.get()].push_back(&r);
  }
};

}  // namespace

Accesses KernelEmitter::loopCarried(const ForStmt* f) {
  // The body's accesses, except writes to a global tensor that the body does
  // not read and writes once per iteration, by a copy or fill whose region
  // moves along some dimension by at least its extent from one iteration to
  // the next (min = c * k + rest, |c| >= extent): successive iterations then
  // write disjoint elements, which needs no ordering between threads.
  Accesses carried = accessesOf(f->body);
  WriteScan scan;
  scan.visit(f->body);
  BoundVars bound;
  bound.visit(f->body);
  for (auto it = carried.writes.begin(); it != carried.writes.end();) {
    const BufferNode* b = *it;
    bool disjoint = false;
    auto rs = scan.regions.find(b);
    if (b->scope == MemScope::Global && !carried.reads.count(b) && scan.writes[b] == 1 && rs != scan.regions.end())
      for (auto& range : rs->second[0]->ranges) {
        int64_t extent;
        auto c = coefficientOf(range.min, f->var.get(), bound.vars);
        disjoint |= c && constInt(range.extent, &extent) && extent > 0 && std::abs(*c) >= extent;
      }
    it = disjoint ? carried.writes.erase(it) : std::next(it);
  }
  return carried;
}

namespace {

// The elements per contiguous run of a two-dimensional shared layout: the
// widest power of two V below 16 bytes such that every V-aligned run of a
// row lies at consecutive offsets; 0 where 16-byte runs do.
int64_t contiguousRun(const layout::Layout& l, int elemBytes) {
  const auto& shape = l.inputShape();
  if (shape.size() != 2) return 0;
  for (int64_t V = 16 / elemBytes; V > 1; V /= 2) {
    bool whole = shape[1] % V == 0;
    for (int64_t r = 0; whole && r < shape[0]; ++r)
      for (int64_t c = 0; whole && c < shape[1]; c += V) {
        const int64_t first = l.apply({r, c})[0];
        for (int64_t v = 1; whole && v < V; ++v) whole = l.apply({r, c + v})[0] == first + v;
      }
    if (whole) return V * elemBytes >= 16 ? 0 : V;
  }
  return 1;
}

}  // namespace

bool KernelEmitter::isStagedTile(const Buffer& b) const {
  auto it = bufs_.find(b.get());
  return it != bufs_.end() && it->second.versions > 1;
}

bool KernelEmitter::isRegister(const Buffer& b) const {
  auto it = bufs_.find(b.get());
  return it != bufs_.end() && it->second.place == Placement::Register;
}

// Kernels without tensor-core gemms are mostly bound by memory latency and
// bandwidth: they need many warps in flight per SM, and ptxas, left alone,
// spends registers on instruction-level parallelism instead (a 256-thread
// normalization kernel at 96 registers fits 2 blocks, a quarter of the SM's
// warps). Such a kernel asks, through __launch_bounds__'s minimum blocks per
// SM, for as many blocks as bring 1024 threads (half the SM's) when its
// register tiles, with room for the next iteration's prefetched tile and
// addresses, fit the register share that leaves each thread, and its shared
// memory fits too; fewer blocks when only fewer fit. The room for the
// prefetched tile (half the tiles again) is left out when asked: a kernel
// whose prefetch would cost it blocks per SM does not prefetch (the blocks
// hide the latency the prefetch would). Gemm kernels keep
// ptxas's choice (their tiles are sized for their own occupancy), and so do
// kernels of HIP (whose launch bounds mean something else).
int64_t KernelEmitter::streamingBlocksPerSM(bool prefetchRoom) const {
  if (!options_.dialect().nvidiaTensorCores || hopper_ || hasGemms_) return 0;
  int64_t tileRegisters = 0;
  for (auto& [b, info] : bufs_)
    if (info.place == Placement::Register) tileRegisters += info.elems * std::max<int64_t>(1, dtypeBytes(b->dtype) / 4);
  const int64_t needed = (prefetchRoom ? tileRegisters * 3 / 2 : tileRegisters) + 32;
  const int64_t registerFile = 65536, maxPerThread = 255, smShared = 228 * 1024;
  for (int64_t blocks = 1024 / threads_; blocks >= 2; --blocks) {
    int64_t perThread = std::min<int64_t>(maxPerThread, registerFile / (blocks * threads_) / 8 * 8);
    if (perThread >= needed && blocks * (sharedBytes_ + 1024) <= smShared) return blocks;
  }
  return 0;
}

Accesses KernelEmitter::accessesOf(const Stmt& s) {
  std::function<bool(const Buffer&)> visible = [this](const Buffer& b) { return !isRegister(b); };
  std::function<bool(const Buffer&)> staged = [this](const Buffer& b) { return isStagedTile(b); };
  AccessScan scan(visible, staged);
  scan.visit(s);
  scan.acc.merge(scratchAccesses(s));
  if (sharedAlias_.empty()) return scan.acc;
  // Shared buffers that reuse each other's memory count as one: a write to
  // one after accesses to another then gets its barrier.
  Accesses canonical;
  auto slot = [&](const BufferNode* b) {
    auto it = sharedAlias_.find(b);
    return it == sharedAlias_.end() ? b : it->second;
  };
  for (auto* b : scan.acc.reads) canonical.reads.insert(slot(b));
  for (auto* b : scan.acc.writes) canonical.writes.insert(slot(b));
  return canonical;  // (the scratch halves alias nothing: they are no buffer of the kernel)
}

// Offsets of the shared buffers in the kernel's one dynamic allocation.
// Buffers whose lifetimes (the span of top-level kernel statements that
// access them, a copy_async's destination until its wait_group; a let's
// body's statements count as top-level) do not overlap
// may share bytes: first fit, in allocation order, at 128-byte alignment. Buffers that overlap in memory are recorded
// as aliases of one representative for the barrier analysis.
int64_t KernelEmitter::packSharedBuffers(const std::vector<const BufferNode*>& shared) {
  std::vector<Stmt> top;
  std::function<void(const Stmt&)> flatten = [&](const Stmt& st) {
    if (auto* seq = as<SeqStmt>(st)) {
      for (auto& x : seq->stmts) flatten(x);
    } else if (auto* let = as<LetStmt>(st)) {  // its value, then its body's statements
      top.push_back(std::make_shared<EvaluateStmt>(let->value, let->loc));
      flatten(let->body);
    } else {
      top.push_back(st);
    }
  };
  flatten(kernel_.body);
  std::unordered_set<const BufferNode*> candidates(shared.begin(), shared.end());
  std::unordered_map<const BufferNode*, std::pair<int64_t, int64_t>> live;
  std::function<bool(const Buffer&)> visible = [&](const Buffer& b) { return candidates.count(b.get()) > 0; };
  std::function<bool(const Buffer&)> staged = [this](const Buffer& b) { return isStagedTile(b); };
  // A copy_async's destination stays live until the wait_group that
  // completes it (cuda-async-copies puts both in one statement list).
  std::vector<const BufferNode*> inFlight;
  for (int64_t i = 0; i < (int64_t)top.size(); ++i) {
    AccessScan scan(visible, staged);
    scan.visit(top[i]);
    if (auto* c = as<CopyStmt>(top[i]); c && c->async && visible(c->dst.buffer)) inFlight.push_back(c->dst.buffer.get());
    if (top[i]->kind == StmtKind::AsyncWait) {
      scan.acc.writes.insert(inFlight.begin(), inFlight.end());
      inFlight.clear();
    }
    for (auto* set : {&scan.acc.reads, &scan.acc.writes})
      for (auto* b : *set) {
        auto [it, fresh] = live.try_emplace(b, i, i);
        if (!fresh) it->second.second = i;
      }
  }
  struct Placed {
    const BufferNode* buffer;
    int64_t begin, end, first, last;
  };
  std::vector<Placed> placed;
  int64_t total = 0;
  for (const BufferNode* b : shared) {
    BufferInfo& info = bufs_[b];
    int64_t bytes = info.elems * info.versions * dtypeBytes(b->dtype);
    auto lt = live.count(b) ? live[b] : std::make_pair<int64_t, int64_t>(0, (int64_t)top.size());
    // Tiles written by TMA: aligned to the 128-byte swizzle's period, and
    // live from the kernel's start (the producer warpgroup copies into them
    // while the other threads run the statements before the mainloop).
    bool tma = hopper_ && loopTile(*hopper_, b);
    // wgmma tiles and TMA-stored staging tiles: the swizzle's period too
    bool panels = wgmmaTile(wgmma_, b) != nullptr || tmaStoreOf(b);
    int64_t align = tma || panels ? 1024 : 128;
    if (tma) lt.first = 0;
    // A persistent kernel's producer fills the ring for the next tile while
    // the consumers finish this one: nothing else may use its bytes.
    if (tma && persistent_) lt.second = (int64_t)top.size();
    int64_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Placed& p : placed)
        if (p.first <= lt.second && lt.first <= p.last && offset < p.end && p.begin < offset + bytes) {
          offset = (p.end + align - 1) / align * align;
          moved = true;
        }
    }
    info.sharedOffset = offset;
    for (const Placed& p : placed)
      if (offset < p.end && p.begin < offset + bytes) {
        const BufferNode* rep = sharedAlias_.count(p.buffer) ? sharedAlias_[p.buffer] : p.buffer;
        sharedAlias_[p.buffer] = rep;
        sharedAlias_[b] = rep;
      }
    placed.push_back({b, offset, offset + bytes, lt.first, lt.second});
    total = std::max(total, offset + bytes);
  }
  return total;
}

// User shared buffers read or written element by element in Parallel loops
// get the row padding with the fewest bank conflicts (cuda_bank_conflicts.h).
// Operands of gemms and the tiles of the Hopper mainloop keep their layout;
// the stages that a pipelined loop's asynchronous copies fill (16 bytes at
// a time) may take the 16-byte padding only, and the one-word padding (rows
// aligned to 4 bytes only) is for buffers that only synchronous copies move.
std::unordered_map<const BufferNode*, int64_t> KernelEmitter::bankAwarePads(
    const KernelScan& scan, const KernelLayoutPlan& layouts,
    const std::unordered_map<const BufferNode*, int64_t>& versions) {
  std::unordered_set<const BufferNode*> excluded, asyncFilled, candidates, mmaTiles;
  for (auto* g : scan.gemms)
    for (const Region* r : {&g->a, &g->b, &g->c}) excluded.insert(r->buffer.get());
  if (layouts.hopper)
    for (auto& t : layouts.hopper->tiles) excluded.insert(t.tile);
  struct PipelinedCopies : IRVisitor {
    std::unordered_set<const BufferNode*>*excluded, *filled;
    void visitCopy(const CopyStmt* c) override {
      excluded->insert(c->src.buffer.get());
      filled->insert(c->dst.buffer.get());
    }
  } pipelinedCopies;
  pipelinedCopies.excluded = &excluded;
  pipelinedCopies.filled = &asyncFilled;
  for (auto* loop : scan.pipelined)
    if (loop->numStages >= 2) pipelinedCopies.visit(loop->body);
  for (auto& [b, acc] : layouts.accumulators) mmaTiles.insert(b);
  for (auto& [b, tile] : tiles_.buffers)
    if (tile.layout.isMma()) mmaTiles.insert(b);
  for (auto* a : scan.blockAllocs) {
    const BufferNode* b = a->buffer.get();
    int64_t n;
    if (b->scope == MemScope::Shared && b->shape.size() >= 2 && constShape(a->buffer, &n) &&
        (!versions.count(b) || asyncFilled.count(b)) && !excluded.count(b) && !layouts.sharedLayouts.count(b))
      candidates.insert(b);
  }
  std::unordered_map<const BufferNode*, int64_t> pads;
  if (candidates.empty()) return pads;
  // Which buffers plain Parallel nests may access as vectors (the placement
  // planBuffers gives them next).
  auto vectorizable = [&](const BufferNode* b) {
    if (b->scope == MemScope::Global) return true;
    if (tiles_.buffers.count(b) || layouts.accumulators.count(b) || layouts.sharedLayouts.count(b)) return false;
    return b->scope == MemScope::Shared || b->scope == MemScope::Fragment;
  };
  std::unordered_set<const BufferNode*> vectorBuffers;
  std::vector<LaneAccess> accesses =
      sampleSharedAccesses(kernel_.body, tiles_, candidates, mmaTiles, threads_, vectorizable, &vectorBuffers);
  for (const BufferNode* b : candidates) {
    std::vector<LaneAccess> mine;
    for (auto& a : accesses)
      if (a.buffer == b) mine.push_back(a);
    std::vector<int64_t> shape;
    for (auto& e : b->shape) {
      int64_t v = 0;
      constInt(e, &v);
      shape.push_back(v);
    }
    // Vector accesses and asynchronous copies need rows aligned to 16 bytes: no one-word padding.
    if (int64_t pad = chooseRowPad(mine, shape, dtypeBytes(b->dtype), !vectorBuffers.count(b) && !asyncFilled.count(b)))
      pads[b] = pad;
  }
  return pads;
}

bool KernelEmitter::planBuffers() {
  KernelScan scan;
  scan.visit(kernel_.body);
  writtenInParallel_ = scan.writtenInParallel;
  for (const BufferNode* b : iterationPrivateLocals(kernel_.body)) writtenInParallel_.erase(b);
  hasGemms_ = !scan.gemms.empty();
  for (auto& p : func_.params)
    if (p.buffer) {
      BufferInfo& info = bufs_[p.buffer.get()];
      info.place = Placement::Global;
      info.name = nameOf(p.buffer.get(), p.name);
    }

  // Buffers that a pipelined loop writes ahead get one version per stage.
  std::unordered_map<const BufferNode*, int64_t> versions;
  // (A CUDA kernel with asynchronous copies turned off runs its pipelined
  // loops unpipelined; HIP's register-stage theirs: the tiles of each.)
  std::vector<std::vector<const BufferNode*>> registerStaged;
  if (options_.asyncCopy || !options_.dialect().asyncCopies)
    for (auto* loop : scan.pipelined)
      if (loop->numStages >= 2) {
        PipelineSchedule sched = dialectSchedule(loop);
        for (auto* b : sched.tiles()) versions[b] = sched.depth;
        if (!options_.dialect().asyncCopies && !sched.empty()) registerStaged.push_back(sched.tiles());
      }

  // Tensor-core gemms decide the accumulator fragments kept in registers
  // and the swizzled operand buffers, the other fragments get an inferred
  // register layout or stay in shared memory; layout annotations constrain both.
  KernelLayoutPlan layouts = planKernelLayouts(kernel_, scan.gemms, threads_, options_, writtenInParallel_);
  hopper_ = layouts.hopper;
  wgmma_ = layouts.wgmma;
  // Persistent: every warp-specialized mainloop, the general form's too
  // (its consumers carry the ring's stage and phase from tile to tile).
  persistent_ = options_.persistent && hopper_;
  if (options_.printAfterAll)
    std::cerr << "// -----// layouts of " << name_ << " //----- //\n" << describeKernelLayouts(kernel_, layouts);
  if (reportLayoutConflicts(layouts, diags_)) return false;
  tiles_ = std::move(layouts.fragments);

  // Shared buffers that mma accumulators, or register tiles laid out like
  // them, are stored to (see stage-accumulator-stores) take the padded
  // row-major layout: the pairs of columns a warp stores at once lie on 8
  // rows, which the pad spreads over all the banks.
  CopyTargets accumulatorStores([&](const BufferNode* b) {
    if (layouts.accumulators.count(b)) return true;
    auto it = tiles_.buffers.find(b);
    return it != tiles_.buffers.end() && it->second.role == FragmentRole::Tile && it->second.layout.isMma();
  });
  accumulatorStores.visit(kernel_.body);
  planTmaStores(accumulatorStores.targets);
  // Those stored to from MFMA accumulator layouts (the HIP dialect's gemms
  // that do not fall back to multiply-adds in the mma.sync layout).
  CopyTargets mfmaStores([&](const BufferNode* b) {
    if (auto it = layouts.accumulators.find(b); it != layouts.accumulators.end()) return it->second.mfma > 0;
    auto it = tiles_.buffers.find(b);
    return it != tiles_.buffers.end() && it->second.role == FragmentRole::Tile && it->second.layout.isMma() &&
           it->second.layout.mfma > 0;
  });
  mfmaStores.visit(kernel_.body);

  for (auto* a : scan.threadAllocs) {
    int64_t n;
    if (!constShape(a->buffer, &n)) {
      diags_.report(DiagKind::CudaUnsupported, a->loc,
                    "the shape of `" + a->buffer->name + "` must be a compile-time constant on cuda")
          .note(a->buffer->loc, "buffer declared here");
      return false;
    }
    BufferInfo& info = bufs_[a->buffer.get()];
    info.place = Placement::Register;
    info.name = nameOf(a->buffer.get(), a->buffer->name);
    info.elems = n;
  }
  std::unordered_map<const BufferNode*, int64_t> bankPads = bankAwarePads(scan, layouts, versions);
  int64_t offset = 0;
  std::vector<const BufferNode*> sharedBuffers;
  for (auto* a : scan.blockAllocs) {
    const Buffer& b = a->buffer;
    BufferInfo info;
    info.name = nameOf(b.get(), b->name);
    if (!constShape(b, &info.elems)) {
      diags_.report(DiagKind::CudaUnsupported, a->loc,
                    "the shape of `" + b->name + "` must be a compile-time constant on cuda")
          .note(b->loc, "buffer declared here");
      return false;
    }
    switch (b->scope) {
      case MemScope::Shared: info.place = Placement::Shared; break;
      case MemScope::Fragment: info.place = Placement::Shared; break;
      case MemScope::Local:
      case MemScope::Var:
        info.place = writtenInParallel_.count(b.get()) ? Placement::Shared : Placement::Register;
        break;
      case MemScope::Global: info.place = Placement::Global; break;
      case MemScope::Barrier:  // expanded pipelines are rejected before (rejectAsyncStatements)
        diags_.report(DiagKind::CudaUnsupported, a->loc, "barriers `" + b->name + "` of an expanded pipeline");
        return false;
    }
    if (auto it = layouts.accumulators.find(b.get()); it != layouts.accumulators.end()) {
      info.place = Placement::Register;
      info.fragment = it->second.fragment;
      info.warpsM = it->second.warpsM;
      info.warpsN = it->second.warpsN;
      info.mfma = it->second.mfma;
      info.colMajor = it->second.colMajor;
      info.elems = info.fragment->registersPerThread();
    }
    if (auto it = tiles_.buffers.find(b.get()); it != tiles_.buffers.end()) {
      info.place = Placement::Register;
      info.tile = it->second;
      info.elems = it->second.registers();
      // A tile of an mma group is laid out like an accumulator: copies,
      // fills and gemm operands treat it as one.
      const RegisterLayout& l = it->second.layout;
      if (l.isMma() && it->second.role == FragmentRole::Tile && !info.fragment) {
        info.fragment = l.tile();
        info.warpsM = l.warpsM;
        info.warpsN = l.warpsN;
        info.mfma = l.mfma;
        info.colMajor = l.colMajor;
        info.mmaVector = l.mfma ? 2 : l.vector;
      }
    }
    if (info.place == Placement::Shared) {
      if (auto it = versions.find(b.get()); it != versions.end()) info.versions = it->second;
      if (auto it = layouts.sharedLayouts.find(b.get()); it != layouts.sharedLayouts.end()) {
        info.layout = it->second;
        info.layoutRun = contiguousRun(*info.layout, dtypeBytes(b->dtype));
      }
      // Compiler-placed buffers (fragments, locals) get one 16-byte pad per
      // row when rows are whole multiples of 128 bytes: row-wise reductions
      // then read consecutive rows from different banks. The target of an
      // accumulator store takes the pad that spreads the pair stores: four
      // lanes store a run of R = 8 elements of a row (16 bytes of 16-bit
      // pairs, 32 of 32-bit ones), and one 128-byte phase holds 128 / R rows,
      // which fall on distinct banks when rows lie an odd number of runs
      // apart modulo 128 bytes (64-byte rows of float16 80 bytes apart,
      // 256-byte rows of float32 288 bytes apart). An MFMA accumulator
      // (the HIP dialect) stores, per register, 16 consecutive columns of a
      // row from each 16 lanes of its 16 x 16 blocks, the next 16 lanes 4
      // rows further: four rows must then lie between 16 and 112 - 16 * eb
      // bytes from a multiple of 128 apart (128-byte rows of float32 144
      // bytes apart), so that both runs of a 32-lane phase find free banks.
      int64_t last = 0;
      const int64_t eb = dtypeBytes(b->dtype);
      if (const TmaStore* ts = tmaStoreOf(b.get())) {  // in the panels TMA reads
        info.layout = layout::Layout::panels(ts->rows, ts->cols, (int)eb, ts->span);
        info.layoutRun = contiguousRun(*info.layout, eb);
      }
      bool padded = b->scope != MemScope::Shared || accumulatorStores.targets.count(b.get());
      if (padded && !info.layout && b->shape.size() >= 2 && constInt(b->shape.back(), &last)) {
        const int64_t rowBytes = last * eb, run = 8 * eb;
        if (accumulatorStores.targets.count(b.get()) && (eb == 2 || eb == 4) && rowBytes % 16 == 0) {
          auto spread = [&] {
            const int64_t stride = rowBytes + info.rowPad * eb;
            if (mfmaStores.targets.count(b.get())) return 4 * stride % 128 >= 16 * eb && 4 * stride % 128 <= 128 - 16 * eb;
            return stride % run == 0 && stride % 128 / run % 2;
          };
          while (!spread()) info.rowPad += 16 / eb;
          // A staging tile whose MFMA stores and copy out the pad cannot
          // both spread takes XORed chunks instead.
          int64_t rows;
          if (mfmaStores.targets.count(b.get()) && b->shape.size() == 2 && constInt(b->shape[0], &rows))
            if (auto l = mfmaStagingLayout(rows, last, eb, info.rowPad)) {
              info.rowPad = 0;
              info.layout = *l;
              info.layoutRun = contiguousRun(*l, eb);
            }
        } else if (rowBytes % 128 == 0) {
          info.rowPad = 16 / eb;
        }
        info.elems = info.elems / last * (last + info.rowPad);
      }
      if (auto it = bankPads.find(b.get()); it != bankPads.end() && !info.rowPad && !info.layout &&
          constInt(b->shape.back(), &last)) {
        info.rowPad = it->second;
        info.elems = info.elems / last * (last + info.rowPad);
      }
      sharedBuffers.push_back(b.get());
    }
    bufs_[b.get()] = info;
  }
  // Row reductions across warps and column reductions combine partial
  // results through shared memory (planReductionScratch).
  int64_t scratch = planReductionScratch();
  // MFMA gemms stage an A operand held in registers there (cuda_mfma.cpp).
  if (options_.dialect().mfma)
    for (const GemmStmt* g : scan.gemms) {
      MmaShape s;
      if (bufs_[g->a.buffer.get()].place == Placement::Register && mmaShapeOf(g, threads_, options_, &s) && s.mfma) {
        const int64_t eb = dtypeBytes(g->a.buffer->dtype);
        const int64_t pitch = mfmaStagePitch(s.m, s.k, eb, mfmaLaneElems(s.kind, options_.arch), s.mfma);
        mfmaStagePitches_[g] = pitch;
        scratch = std::max(scratch, s.m * eb * pitch);
      }
    }
  // Packed first as a block per tile. A kernel that runs two blocks per SM
  // that way keeps that form: persistent, such gemms measured up to a third
  // slower on the H200 (bench/RESULTS.md, 2026-12-04: int8 128 x 128 x 64 at
  // 600 against 898 TOPS, float16 128 x 128 x 64 at 471 against 611
  // TFLOP/s). A persistent kernel's ring shares its bytes with no other
  // buffer (the accumulator's staging tile): where that does not fit, a
  // block per tile too.
  const bool persistent = persistent_;
  persistent_ = false;
  offset = packSharedBuffers(sharedBuffers);
  // A register-staged pipeline whose second stages leave the plan too large
  // for the shared memory runs plain (its tiles keep one version), the later
  // loops first.
  auto withScratch = [&](int64_t end) { return scratch ? (end + 127) / 128 * 128 + scratch : end; };
  for (auto it = registerStaged.rbegin(); it != registerStaged.rend() && withScratch(offset) > options_.maxSharedBytes;
       ++it) {
    for (const BufferNode* b : *it) bufs_[b].versions = 1;
    sharedAlias_.clear();
    offset = packSharedBuffers(sharedBuffers);
  }
  if (persistent && !gemmTakesTwoBlocks(threads_, offset + 16 * hopper_->stages, options_.maxSharedBytes,
                                        widestWgmmaRegisters())) {
    persistent_ = true;
    sharedAlias_.clear();
    int64_t ring = packSharedBuffers(sharedBuffers);
    if (ring + 16 * hopper_->stages <= options_.maxSharedBytes) {
      offset = ring;
    } else {
      persistent_ = false;
      sharedAlias_.clear();
      offset = packSharedBuffers(sharedBuffers);
    }
  }
  if (hopper_) {  // the mbarriers of the ring, full[stages] then empty[stages]
    offset = (offset + 7) / 8 * 8;
    barrierOffset_ = offset;
    offset += 16 * hopper_->stages;
  }
  if (scratch) rowScratchOffset_ = (offset + 127) / 128 * 128;
  sharedBytes_ = withScratch(offset);
  if (sharedBytes_ > options_.maxSharedBytes) {
    Diagnostic& d = diags_.report(DiagKind::CudaSharedMemoryOverflow, kernel_.loc,
                           "this kernel needs " + std::to_string(sharedBytes_) + " bytes of shared memory; " +
                               options_.arch + " allows at most " + std::to_string(options_.maxSharedBytes) +
                               " per block: use smaller tiles or fewer pipeline stages");
    // The largest shared buffers, each at its allocation: a fragment among
    // them is one whose uses no register layout fits.
    std::vector<std::pair<int64_t, const BufferNode*>> largest;
    for (const auto& [b, info] : bufs_)
      if (info.place == Placement::Shared && b->scope != MemScope::Global)
        largest.push_back({info.elems * info.versions * dtypeBytes(b->dtype), b});
    std::sort(largest.begin(), largest.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second->name < y.second->name;
    });
    for (size_t i = 0; i < largest.size() && i < 4; ++i) {
      const auto& [bytes, b] = largest[i];
      const BufferInfo& info = bufs_[b];
      std::string what = "`" + b->name + "`: " + std::to_string(bytes) + " bytes";
      if (info.versions > 1) what += " (" + std::to_string(info.versions) + " pipeline versions)";
      if (b->scope == MemScope::Fragment)
        what += ", a fragment kept in shared memory: no register layout fits its uses (--print-after-all shows why)";
      d.note(b->loc.known() ? b->loc : kernel_.loc, what);
    }
    if (scratch)
      d.note(kernel_.loc, std::to_string(scratch) + " bytes of scratch: partial results of reductions across warps" +
                              (options_.dialect().mfma ? " and the LDS stage of MFMA gemms whose A operand is held in "
                                                         "registers (block_M x block_K of it)"
                                                       : ""));
    return false;
  }
  return true;
}

}  // namespace tlc::cuda
