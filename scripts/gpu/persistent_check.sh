#!/bin/bash
# Persistent gemm kernels (--persistent) on a GPU: checked against the
# interpreter at sizes the tiles divide and sizes they do not and under
# compute-sanitizer, then each gemm timed persistent and not, against
# cuBLAS / cublasLt in the same process.
#   scripts/gpu/persistent_check.sh [BUNDLE_DIR] [ARCH]
# Writes $OUT/persistent_results.md (OUT defaults to ./gpu-out).
set -uo pipefail
# shellcheck source=scripts/gpu/check_lib.sh
source "$(dirname "$0")/check_lib.sh" "$@"
gemm="$root/examples/gemm/gemm.tl"
fp8="$root/examples/gemm_fp8/gemm_fp8.tl"
report="$out/persistent_results.md"
log="$out/persistent_log.txt"
f16="-D block_M=128 -D block_N=256 -D block_K=64 -D stages=3 -D threads=256"
f8="-D block_N=256"

start "persistent gemms"
for dims in "M=700 N=900 K=384" "M=333 N=517 K=256" "M=2048 N=512 K=128"; do
  args=$(for d in $dims; do echo --dim "$d"; done)
  # shellcheck disable=SC2086
  run "gemm --persistent $dims" "$runner" "$gemm" --arch "$arch" --persistent --check $args
  # shellcheck disable=SC2086
  run "gemm --persistent 128x256x64 $dims" "$runner" "$gemm" --arch "$arch" --persistent --check $f16 $args
  # shellcheck disable=SC2086
  run "gemm_fp8 --persistent 128x256x128 $dims" "$runner" "$fp8" --arch "$arch" --persistent --check $f8 $args
done
# shellcheck disable=SC2086
run "gemm_splitk --persistent M=150 N=300 K=2000" "$runner" "$root/bench/zoo/gemm_splitk.tl" --arch "$arch" \
  --persistent --check --dim M=150 --dim N=300 --dim K=2000
for tool in memcheck racecheck synccheck; do
  # shellcheck disable=SC2086
  run "gemm --persistent $tool (M=600 N=700 K=256)" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$gemm" \
    --arch "$arch" --persistent --check $f16 --dim M=600 --dim N=700 --dim K=256
done

echo >>"$report"
echo '## persistent and not, against cuBLAS (same process)' >>"$report"
echo '```' >>"$report"
for n in 4096 8192; do
  for dtype in float16 bfloat16; do
    for p in --no-persistent --persistent; do
      # shellcheck disable=SC2086
      bench "gemm $dtype $n^3 128x256x64 $p" "$gemm" $p -D dtype=$dtype $f16 --dim M=$n --dim N=$n --dim K=$n
    done
  done
  for p in --no-persistent --persistent; do
    # shellcheck disable=SC2086
    bench "gemm_fp8 $n^3 128x256x128 $p" "$fp8" $p $f8 --dim M=$n --dim N=$n --dim K=$n
  done
done
for p in --no-persistent --persistent; do
  # shellcheck disable=SC2086
  bench "gemm float16 4095x4097x4093 128x256x64 $p" "$gemm" $p $f16 --dim M=4095 --dim N=4097 --dim K=4093
  # shellcheck disable=SC2086
  bench "gemm float16 4096x4096x4096 default tiles $p" "$gemm" $p --dim M=4096 --dim N=4096 --dim K=4096
  # shellcheck disable=SC2086
  bench "gemm_fp8 4095x4080x4080 128x256x128 $p" "$fp8" $p $f8 --dim M=4095 --dim N=4080 --dim K=4080
done
echo '```' >>"$report"
echo "failures: $failures" >>"$report"
cat "$report"
exit $((failures > 0))
