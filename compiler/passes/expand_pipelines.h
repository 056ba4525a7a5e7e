// expand-pipelines: a Pipelined loop whose plan loads tiles ahead becomes
// explicit asynchronous code in the tile IR: versioned shared tiles, a
// prologue, a steady state and a drain (ir.h: AllocStmt::versions,
// VersionStmt, CopyStmt::async, AsyncCommitStmt, AsyncWaitStmt).
//
// Assumes: pipeline-planning ran (every Pipelined loop with num_stages >= 2
// carries `stage` and `order`).
//
// A loop is expanded when its plan has this shape (pipelineExpansion):
// the stage-0 statements are copies from global to shared memory, first in
// `order`, each filling a whole tile that only this loop touches (besides
// its allocation and layout annotations) and that nothing in the loop
// writes otherwise, with regions that depend on no value the body computes
// and read no memory but tables the loop does not write; the other
// statements share one stage D - 1 (D, the depth, is at least 2) and keep
// program order; the body has no break or continue. With P the producers
// (stage 0), C the rest, k in [min, min + n):
//
//   alloc T: shared ... versions(D)                  (each tile)
//   for p in serial(0 : +D-1) {                      prologue
//     if p < n { version(T...) = p { copy_async P[k := min + p] } }
//     commit_group
//   }
//   for k in serial(min : +n) {                      steady state
//     wait_group(D-2)                                (iteration k's tiles are complete)
//     if k - min + D-1 < n {
//       version(T...) = (k - min + D-1) % D { copy_async P[k := k + D-1] }
//     }
//     commit_group
//     version(T...) = (k - min) % D { C }
//   }
//   wait_group(0)                                    drain
//
// Every iteration reads its tiles after they completed and before the copies
// of D - 1 iterations later overwrite them, so the result equals the
// loop's: the interpreter runs both (it completes copies at waits and
// rejects reading a tile an unfinished copy writes). Loops of another shape
// stay as they are.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

ir::Module expandPipelines(const ir::Module& m, PassContext& ctx);

// warp-specialize-pipelines: the same loops, where their `warp_specialize`
// is on (the default), in the warp-specialized form instead: a producer role
// of kProducerThreads threads issues each iteration's copies into a stage
// once the consumers have released it, and the consumer role runs the rest
// of the body once the copies have landed, both over the whole loop. Each
// stage s has a `full` barrier (the producer's arrival with the bytes of its
// copies, which deliver them) and an `empty` one (the consumers' arrival
// when they are done with the stage); iteration i uses stage i % D and waits
// for phase i / D of `full`, the producer for phase i / D - 1 of `empty`
// (parity (i / D + 1) % 2: a fresh barrier's previous phase counts as
// completed, so the first round waits for nothing):
//
//   alloc T: shared ... versions(D)                  (each tile)
//   alloc k_full: barrier uint64[D] arrivals(1)
//   alloc k_empty: barrier uint64[D] arrivals(1)
//   warp_specialize(producer_threads=128) {
//     for k_load in serial(min : +n) {               i = k_load - min
//       barrier_wait(k_empty[i % D], (i / D + 1) % 2)
//       barrier_arrive(k_full[i % D], expect_bytes=<bytes of the tiles>)
//       version(T...) = i % D { copy_async(P[k := k_load], barrier=k_full[i % D]) }
//     }
//   } consumer {
//     for k in serial(min : +n) {                    i = k - min
//       barrier_wait(k_full[i % D], (i / D) % 2)
//       version(T...) = i % D { C }
//       barrier_arrive(k_empty[i % D])
//     }
//   }
//
// The producer runs up to D iterations ahead of the consumers, never onto a
// stage they still read. Loops with warp_specialize off stay as they are
// (expand-pipelines may expand them after this pass).
ir::Module warpSpecializePipelines(const ir::Module& m, PassContext& ctx);
constexpr int64_t kProducerThreads = 128;

// For targets that compile Pipelined loops themselves (the CPU, and the GPU
// emitter for now): reports `async-unsupported` at the first asynchronous
// pipeline statement of each function of `m` (a versioned allocation, a
// version block, copy_async, commit_group, wait_group, a barrier
// allocation, barrier_arrive, barrier_wait, warp_specialize) and returns false,
// or returns true when there is none.
bool rejectAsyncStatements(const ir::Module& m, DiagnosticEngine& diags, const std::string& target);

// The expansion of one planned Pipelined loop: its producers (stage 0, in
// program order), the rest of its body, the tiles the producers fill, and
// the depth; or `why` it has not the shape above (the tile conditions that
// look outside the loop are the pass's).
struct PipelineExpansion {
  std::vector<ir::Stmt> producers, consumers;
  std::vector<ir::Buffer> tiles;
  int64_t depth = 0;
  std::string why;
};
PipelineExpansion pipelineExpansion(const ir::ForStmt* loop);

// The warp-specialized form above of `loop` and its expansion `x`: the
// barriers' allocations and the warp_specialize (the tiles' allocations are
// the caller's), with `consumer` applied to each of the later statements.
ir::Stmt specializeLoop(const ir::ForStmt* loop, const PipelineExpansion& x,
                        const std::function<ir::Stmt(const ir::Stmt&)>& consumer);

// The prologue, steady state and drain above for `loop` and its expansion
// `x` (the tiles' allocations are the caller's), with `consumer` applied to
// each of the later statements. `issued`, when given, receives each
// copy_async written and the index in x.producers of the copy it issues.
// `stmt` is the whole; the other fields name its parts, for emitters that
// arrange the steady state's statements themselves (the CUDA tensor-core
// mainloop moves each iteration's wait to the end of the iteration before).
struct ExpandedLoop {
  ir::Stmt stmt;
  ir::Stmt prologue;       // for p in serial(0 : +D-1) { ... }
  ir::Stmt wait;           // wait_group(D-2), first in the steady state
  ir::Stmt issue, commit;  // if k - min + D-1 < n { version ... { copy_async ... } }; commit_group
  ir::Stmt drain;          // wait_group(0)
};
ExpandedLoop expandLoop(const ir::ForStmt* loop, const PipelineExpansion& x,
                        const std::function<ir::Stmt(const ir::Stmt&)>& consumer,
                        std::vector<std::pair<const ir::CopyStmt*, size_t>>* issued = nullptr);

}  // namespace tlc::passes
