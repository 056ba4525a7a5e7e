// pipeline-planning: decides, for every Pipelined loop, which statement of
// its body runs in which pipeline stage and in which order.
//
// Assumes: a verified module.
//
// Guarantees: every Pipelined loop with num_stages >= 2 carries `stage` and
// `order` lists with one entry per statement of its body (the statements of
// a SeqStmt body, or the body itself); nothing else changes, so every
// target computes the same values as before. A statement in stage s runs its
// iteration i in the pipeline's time step i + s: stage-0 statements run
// num_stages - 1 iterations ahead of the last stage.
//
// The default plan: the copies from global to shared memory whose regions
// use nothing the body binds and read no memory but tables (global tensors
// the loop never writes: a page table's entry is the same whenever it is
// read), whose source tensor the loop does not write (an iteration would
// read ahead of the write of the iteration before it) and whose tile is not
// read after the loop (it would hold another iteration's version there),
// and the gather nests (ir/gather_nest.h: Parallel loops filling a
// whole shared tile from tables, an implicit-GEMM convolution's im2col tile),
// whose destinations no other statement writes (unless the copy or nest
// overwrites the whole tile every iteration: then what later statements
// write there stays in that iteration's version), and which no statement
// before them reads from or writes to (so that they can run ahead of those),
// run in stage 0 (a flash-attention body's K and V loads, wherever they
// stand); the other statements run in stage num_stages - 1; the order is the
// stage-0 statements, then the rest, each in program order. A loop without
// such statements gets stage 0 throughout: it runs unpipelined.
//
// A plan the user wrote (`T.Pipelined(n, num_stages=s, order=[...],
// stage=[...])`) is kept and checked: one entry per statement, the order a
// permutation of the statements, no statement in an earlier stage than a
// statement whose result it reads (one before it, or one after it, whose
// result of the iteration before it reads), and no statement filling a
// shared tile read after the loop in an earlier stage than the last (error
// `pipeline-plan-invalid` at the loop, with a note at the statements
// involved). Given only `order`,
// the stages are the default plan's; given only `stage`, the order is
// program order.
//
// A plan in TileLang's form (ir::ForStmt::group, -1 entries) is first mapped
// onto the statements: each statement takes its group's stage and order
// (one group per statement without `group`), a stage -1 (a statement
// TileLang's producer warps issue) becomes stage 0, and the order is the
// groups' order with the -1 groups first, program order breaking ties. It
// was written for TileLang's statements and pipelines: where it counts
// another number of statements than tlc's body has, fails the checks
// above, or is not of the form tlc's pipelines take (stage-0 statements
// that the default plan would load ahead, first in order; the others in
// one later stage, in program order), the loop gets the default plan and a
// note `pipeline-plan-ignored` at the loop says why (with num_stages < 2
// the plan is dropped silently).
#pragma once

#include <set>
#include <unordered_map>

#include "compiler/ir/ir.h"
#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

ir::Module planPipelines(const ir::Module& m, PassContext& ctx);

// For each loop of a function body, the buffers whose values after it may be
// read (later in the function, or again in the body of a loop around it,
// before a copy or fill overwrites them whole).
using ReadsAfterLoops = std::unordered_map<const ir::ForStmt*, std::set<const ir::BufferNode*>>;
ReadsAfterLoops readsAfterLoops(const ir::Stmt& body);

// `f` (a Pipelined loop whose user plan, if any, is valid) with the plan
// above filled in where the user gave none; `readAfter`: the buffers read
// after the loop (readsAfterLoops).
std::shared_ptr<ir::ForStmt> withDefaultPlan(const ir::ForStmt* f, const std::set<const ir::BufferNode*>& readAfter);

}  // namespace tlc::passes
