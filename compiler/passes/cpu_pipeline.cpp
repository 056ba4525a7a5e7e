#include "compiler/passes/cpu_pipeline.h"

#include "compiler/passes/expand_pipelines.h"
#include "compiler/passes/cpu_block_local_storage.h"
#include "compiler/passes/drop_layout_annotations.h"
#include "compiler/passes/fold_implied_conditions.h"
#include "compiler/passes/lower_buffer_prints.h"
#include "compiler/passes/cpu_coarsen_k.h"
#include "compiler/passes/cpu_lower_atomics.h"
#include "compiler/passes/cpu_lower_copy_fill.h"
#include "compiler/passes/cpu_group_blocks.h"
#include "compiler/passes/cpu_guards_to_bounds.h"
#include "compiler/passes/cpu_hoist_fast_paths.h"
#include "compiler/passes/cpu_inline_producers.h"
#include "compiler/passes/cpu_interchange_serial.h"
#include "compiler/passes/cpu_lower_gemm.h"
#include "compiler/passes/cpu_lower_reduce.h"
#include "compiler/passes/cpu_map_loops.h"
#include "compiler/passes/cpu_select_stores.h"
#include "compiler/passes/cpu_split_block_rows.h"
#include "compiler/passes/cpu_vector_layouts.h"
#include "compiler/passes/cpu_version_guards.h"

#include <algorithm>
#include <thread>

#include <unistd.h>

namespace tlc::cpu {

using passes::Pass;
using passes::PassContext;

static Pass wrap(const char* name, const char* summary, ir::Module (*fn)(const ir::Module&)) {
  return Pass{name, summary, [fn](const ir::Module& m, PassContext&) { return fn(m); }};
}

passes::PassPipeline cpuPipeline(const CpuLoweringOptions& options) {
  passes::PassPipeline p;
  p.printAfterAll = options.printAfterAll;
  p.timePasses = options.timePasses;
  p.add(wrap("drop-layout-annotations", "annotate_layout statements: CPU buffers are plain row-major",
             passes::dropLayoutAnnotations));
  p.add(wrap("lower-buffer-prints", "print of a whole buffer -> loops of element prints", passes::lowerBufferPrints));
  p.add(wrap("cpu-coarsen-k", "gemm reduction loops: several block_K steps per micro-kernel call", coarsenGemmK));
  GroupLimits limits;
  int64_t threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  int64_t l2 = options.l2Bytes;
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (l2 <= 0) l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  limits.minGroups = 2 * threads;
  limits.maxBytes = std::max<int64_t>(256 << 10, (l2 > 0 ? l2 : 1 << 20) / 2);
  p.add(Pass{"cpu-group-blocks", "neighbouring blocks run together, sharing the gemm operand tiles they copy",
             [limits](const ir::Module& m, PassContext&) { return groupBlocks(m, limits); }});
  int64_t l1 = options.l1Bytes;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (l1 <= 0) l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
#endif
  int64_t rowTileBytes = (l1 > 0 ? l1 : 32 << 10) / 4;
  p.add(Pass{"cpu-split-block-rows", "a block of independent rows runs a few rows at a time when its tiles overflow L1",
             [rowTileBytes](const ir::Module& m, PassContext&) { return splitBlockRows(m, rowTileBytes); }});
  p.add(wrap("cpu-lower-gemm", "gemm -> cpu.gemm micro-kernel intrinsic (clear_accum -> fill)", lowerGemm));
  p.add(wrap("cpu-lower-copy-fill", "copy and fill -> masked Parallel loops", lowerCopyAndFill));
  p.add(wrap("cpu-lower-reduce", "reduce_* -> loops over a local accumulator", lowerReductions));
  p.add(wrap("cpu-lower-atomics", "atomic_* -> cpu.atomic_* read-modify-write intrinsics", lowerAtomics));
  p.add(wrap("cpu-version-guards", "a guarded Parallel nest gets an unguarded version for tiles inside the tensors",
             versionGuardedNests));
  p.add(wrap("cpu-hoist-fast-paths", "the likely tests of a statement list combine in front of it",
             hoistFastPaths));
  p.add(wrap("cpu-inline-producers", "loops computing a block-local buffer fold into the statements that read it",
             inlineProducers));
  p.add(wrap("cpu-map-loops", "innermost Parallel -> Vectorized, Pipelined -> Serial", mapLoopsForCpu));
  p.add(wrap("cpu-interchange-serial", "serial loops in a vector loop move out of it (the vector loop innermost)",
             interchangeSerialLoops));
  p.add(wrap("cpu-vector-layouts", "block buffers' dimensions ordered so vector loops run along their rows",
             chooseVectorLayouts));
  p.add(wrap("cpu-guards-to-bounds", "vector loop guards -> loop bounds and ifs around the loop", moveGuardsToBounds));
  p.add(wrap("fold-implied-conditions",
             "integer comparisons decided by the enclosing ifs' conditions and loops' ranges -> constants",
             passes::foldImpliedConditions));
  p.add(Pass{"cpu-block-local-storage", "shared/fragment buffers -> block-local arrays", makeBlockLocalStorage});
  p.add(wrap("cpu-select-stores", "a vector loop's guarded store into block-local memory -> a store of a select",
             selectGuardedStores));
  return p;
}

std::optional<ir::Module> lowerForCpu(const ir::Module& m, PassContext& ctx, const CpuLoweringOptions& options) {
  if (!passes::rejectAsyncStatements(m, ctx.diags, "CPU")) return std::nullopt;
  return cpuPipeline(options).run(m, ctx);
}

}  // namespace tlc::cpu
