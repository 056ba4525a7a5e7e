// Which software-pipelined loops the CUDA backend runs pipelined, and how:
// the schedule of a loop's stage-0 copies (pipelineSchedule) and whether the
// buffers they fill were versioned for it (runsPipelined).
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/backends/cuda/cuda_kernel_scan.h"
#include "compiler/backends/cuda/cuda_mma.h"
#include "compiler/ir/buffer_access.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/var_uses.h"

namespace tlc::cuda {

using namespace ir;

// The plan's stage-0 statements must be global->shared copies whose regions
// use nothing the body binds or loads, first in `order`, and used by no
// statement before them; the other statements must share one later stage
// and keep program order: those copies run ahead as cp.async producers,
// into stage + 1 versions of their buffers, and the rest runs in program order.
PipelineSchedule pipelineSchedule(const ForStmt* loop) {
  PipelineSchedule s;
  std::vector<Stmt> body = seqStmts(loop->body);
  if (loop->stage.size() != body.size() || loop->order.size() != body.size()) return s;
  size_t ahead = std::count(loop->stage.begin(), loop->stage.end(), 0);
  if (ahead == body.size()) return s;  // the plan runs the loop unpipelined
  int64_t later = -1;
  int64_t lastOrder = -1;
  for (size_t i = 0; i < body.size(); ++i) {
    if (loop->stage[i] == 0) {
      if (loop->order[i] >= (int64_t)ahead) {
        s.unsupported = "its stage-0 copies must come first in `order`";
        return s;
      }
      continue;
    }
    if (later >= 0 && loop->stage[i] != later) {
      s.unsupported = "its statements after the stage-0 copies must all share one stage";
      return s;
    }
    later = loop->stage[i];
    if (loop->order[i] <= lastOrder) {
      s.unsupported = "its statements after the stage-0 copies must keep program order";
      return s;
    }
    lastOrder = loop->order[i];
  }
  BoundVars bound;
  bound.visit(loop->body);
  std::unordered_set<const BufferNode*> dsts, whole;
  std::vector<const CopyStmt*> producers;
  std::vector<GatherNest> gathers;
  // A statement before stage-0 statement i that uses its tile would see the
  // next iteration's tile once the producer runs ahead.
  auto usedBefore = [&](size_t i, const BufferNode* tile) {
    for (size_t j = 0; j < i; ++j)
      if (loop->stage[j] != 0 && accessesBuffer(body[j], tile)) return true;
    return false;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    if (loop->stage[i] != 0) continue;
    if (auto g = gatherNest(body[i], loop)) {
      if (usedBefore(i, g->tile)) {
        s.unsupported = "a statement before a stage-0 gather uses the tile it fills";
        return s;
      }
      gathers.push_back(*g);
      dsts.insert(g->tile);
      whole.insert(g->tile);
      continue;
    }
    auto* c = as<CopyStmt>(body[i]);
    if (!c || c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared) {
      s.unsupported = "stage 0 must hold only copies from global to shared memory and Parallel nests that fill a "
                      "shared tile from global tensors the loop never writes";
      return s;
    }
    UsesVars uses(bound.vars);
    uses.visitRegion(c->src);
    uses.visitRegion(c->dst);
    if (uses.found || !uses.loadsOnlyTablesOf(loop->body)) {
      s.unsupported = "a stage-0 copy's region depends on a value computed in the loop body";
      return s;
    }
    if (usedBefore(i, c->dst.buffer.get())) {
      s.unsupported = "a statement before a stage-0 copy uses the tile it fills";
      return s;
    }
    producers.push_back(c);
    dsts.insert(c->dst.buffer.get());
    if (isFullRegion(c->dst)) whole.insert(c->dst.buffer.get());
  }
  // The rest of the body must not write the producers' buffers, except tiles
  // a stage-0 statement overwrites entirely every iteration: what the rest
  // writes there then never reaches another iteration, so each iteration's
  // version may take it.
  KernelScan rest;
  for (size_t i = 0; i < body.size(); ++i) {
    if (loop->stage[i] == 0) continue;
    rest.depth = 1;  // count every write
    rest.visit(body[i]);
  }
  for (auto* b : rest.writtenInParallel)
    if (dsts.count(b) && !whole.count(b)) {
      s.unsupported = "a later stage writes a buffer that a stage-0 copy fills";
      return s;
    }
  s.producers = producers;
  s.gathers = gathers;
  s.depth = later + 1;
  return s;
}

std::vector<const BufferNode*> PipelineSchedule::tiles() const {
  std::vector<const BufferNode*> out;
  for (auto* c : producers) out.push_back(c->dst.buffer.get());
  for (auto& g : gathers) out.push_back(g.tile);
  return out;
}

bool PipelineSchedule::produces(const StmtNode* s) const {
  for (auto* c : producers)
    if (c == s) return true;
  for (auto& g : gathers)
    if (g.outer == s) return true;
  return false;
}

bool KernelEmitter::runsPipelined(const ForStmt* f, PipelineSchedule* sched) {
  if (f->forKind != ForKind::Pipelined || f->numStages < 2) return false;
  *sched = dialectSchedule(f);
  bool versioned = !sched->empty();
  for (auto* b : sched->tiles()) versioned &= bufs_[b].versions == sched->depth;
  return versioned;
}

}  // namespace tlc::cuda
