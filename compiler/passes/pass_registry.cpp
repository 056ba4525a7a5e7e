#include "compiler/passes/pass_registry.h"

#include "compiler/passes/accumulate_reductions.h"
#include "compiler/passes/inline_loop_lets.h"
#include "compiler/passes/drop_layout_annotations.h"
#include "compiler/passes/expand_pipelines.h"
#include "compiler/passes/hoist_guarded_copies.h"
#include "compiler/passes/fold_implied_conditions.h"
#include "compiler/passes/lower_buffer_prints.h"
#include "compiler/passes/pipeline_planning.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/stage_accumulator_stores.h"
#include "compiler/passes/stage_transposed_stores.h"

namespace tlc::passes {

namespace {

std::vector<Pass> registeredPasses() {
  return {
      {"simplify", "fold constants, apply exact algebraic identities, remove dead control flow",
       [](const ir::Module& m, PassContext&) { return simplify(m); }},
      {"inline-loop-lets", "substitute the pure scalar lets of Pipelined loop bodies into their statements",
       inlineLoopLets},
      {"hoist-guarded-copies",
       "move the tile loads of a guarded group of a Pipelined loop's body before its `if`, to load them ahead",
       hoistGuardedCopies},
      {"pipeline-planning", "assign each statement of a Pipelined loop its stage and order", planPipelines},
      {"expand-pipelines",
       "a planned Pipelined loop -> versioned tiles, asynchronous copies, prologue, steady state and drain",
       expandPipelines},
      {"warp-specialize-pipelines",
       "a planned Pipelined loop -> a producer role issuing its copies on full barriers and a consumer role "
       "releasing each stage on an empty barrier",
       warpSpecializePipelines},
      {"stage-accumulator-stores", "store gemm accumulators to global memory through shared memory",
       stageAccumulatorStores},
      {"stage-transposed-stores",
       "a Parallel nest reading rows along its inner loop and writing rows along its outer one goes through a "
       "shared tile",
       stageTransposedStores},
      {"accumulate-reductions", "fold a reduction into a temporary and its accumulation into one accumulating reduction",
       accumulateReductions},
      {"drop-layout-annotations", "remove annotate_layout statements (targets with plain row-major memory)",
       [](const ir::Module& m, PassContext&) { return dropLayoutAnnotations(m); }},
      {"lower-buffer-prints", "print of a whole buffer -> loops of element prints",
       [](const ir::Module& m, PassContext&) { return lowerBufferPrints(m); }},
      {"fold-implied-conditions",
       "integer comparisons decided by the enclosing ifs' conditions and loops' ranges -> constants",
       [](const ir::Module& m, PassContext&) { return foldImpliedConditions(m); }},
      // Register new passes here: {"name", "summary", function}.
  };
}

}  // namespace

const std::vector<Pass>& allPasses() {
  static const std::vector<Pass> passes = registeredPasses();
  return passes;
}

const Pass* findPass(std::string_view name) {
  for (const Pass& p : allPasses())
    if (p.name == name) return &p;
  return nullptr;
}

std::optional<PassPipeline> pipelineFromNames(std::string_view names, std::string& error) {
  PassPipeline pipeline;
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    std::string_view name = names.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    const Pass* p = findPass(name);
    if (!p) {
      std::string known;
      for (const Pass& q : allPasses()) known += (known.empty() ? "" : ", ") + q.name;
      error = name.empty() ? "empty pass name in `" + std::string(names) + "`"
                           : "unknown pass `" + std::string(name) + "` (known passes: " + known + ")";
      return std::nullopt;
    }
    pipeline.add(*p);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return pipeline;
}

}  // namespace tlc::passes
