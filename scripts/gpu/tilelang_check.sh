#!/bin/bash
# The kernels written in TileLang's spelling (tests/tilelang/) on a GPU:
# each against the reference interpreter at the sizes the emulator test uses
# (tiles that do not divide them) and at larger ones, on ARCH and on sm_90
# (the mma.sync path), the split-K gemm's tile-level atomics, the while
# loops and a reducer kernel under compute-sanitizer memcheck and racecheck; then the split-K gemm
# timed against cuBLAS on a shape split-K is for (small M x N, long K).
#   scripts/gpu/tilelang_check.sh [BUNDLE_DIR] [ARCH]
# Writes $OUT/tilelang_results.md (OUT defaults to ./gpu-out).
set -uo pipefail
# shellcheck source=scripts/gpu/check_lib.sh
source "$(dirname "$0")/check_lib.sh" "$@"
t="$root/tests/tilelang"
report="$out/tilelang_results.md"
log="$out/tilelang_log.txt"

start "TileLang-style kernels"
checks=(
  "matmul.tl -D M=72 -D N=80 -D K=40"
  "matmul.tl -D M=1000 -D N=777 -D K=1001"
  "softmax.tl -D N=100 --dim M=11"
  "bias_relu.tl -D M=45 -D N=100 -D block_M=16 -D block_N=32"
  "tvm_spellings.tl --dim M=21"
  "python_helper.tl --dim N=37"
  "shape_lists.tl --dim batch=2 --dim seq=37"
  "batched_gemm.tl -D N=70 -D K=50 --dim batch=3 --dim M=150"
  "flash_attention.tl -D dim=64 --dim batch=2 --dim heads=3 --dim seq_len=100"
  "lse_combine.tl -D H=5 -D splits=3 -D dim=100"
  "splitk_atomic.tl -D M=70 -D N=45 -D K=96"
  "splitk_atomic_x2.tl -D M=70 -D N=46 -D K=96"
  "splitk_atomic.tl -D M=1000 -D N=777 -D K=3072 -D block_M=128 -D block_N=128 -D block_K=64 -D split_k=4"
  "while_loops.tl --dim M=11 --fill V=1:1000"
  "thread_binding.tl -D N=45 -D K=37"
  "if_frames.tl -D M=70"
  "thread_binding.tl -D N=1000 -D K=4097"
  "while_loops.tl -D per_block=7 --dim M=1000 --fill V=1:100000"
  "reducers.tl --kernel row_sum_reducer --dim M=37 --dim N=300"
  "reducers.tl --kernel rmsnorm_reducer --dim M=5"
  "reducers.tl --kernel col_max_min --dim M=70 --dim N=100"
  "reducers.tl --kernel row_sum_reducer --dim M=1000 --dim N=4097"
)
for a in "$arch" sm_90; do
  for c in "${checks[@]}"; do
    set -- $c
    f=$1
    shift
    run "$a ${c}" "$runner" "$t/$f" --arch "$a" --check "$@"
  done
done
for tool in memcheck racecheck; do
  run "$tool splitk_atomic" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$t/splitk_atomic.tl" --arch "$arch" \
    --check -D M=70 -D N=45 -D K=96
  run "$tool while_loops" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$t/while_loops.tl" --arch "$arch" \
    --check --dim M=11 --fill V=1:1000
  run "$tool reducers" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$t/reducers.tl" --kernel col_max_min \
    --arch "$arch" --check --dim M=70 --dim N=100
done
for shape in "512 512 16384 8" "1024 1024 8192 4"; do
  set -- $shape
  bench "splitk_atomic ${1}x${2}x${3} split_k=$4 vs cuBLAS" "$t/splitk_atomic.tl" -D M="$1" -D N="$2" -D K="$3" \
    -D split_k="$4" -D block_M=128 -D block_N=128 -D block_K=64
done
echo "failures: $failures" >>"$report"
cat "$report"
exit $((failures > 0))
