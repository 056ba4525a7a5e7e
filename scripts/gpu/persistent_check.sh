#!/bin/bash
# Persistent gemm kernels (--persistent) on a GPU: checked against the
# interpreter at sizes the tiles divide and sizes they do not and under
# compute-sanitizer, then each gemm timed persistent and not, against
# cuBLAS / cublasLt in the same process.
#   scripts/gpu/persistent_check.sh [BUNDLE_DIR] [ARCH]
# Writes $OUT/persistent_results.md (OUT defaults to ./gpu-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
arch=${2:-sm_90a}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
runner="$bundle/tlc_cuda_runner"
gemm="$root/examples/gemm/gemm.tl"
fp8="$root/examples/gemm_fp8/gemm_fp8.tl"
report="$out/persistent_results.md"
log="$out/persistent_log.txt"
failures=0
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
f16="-D block_M=128 -D block_N=256 -D block_K=64 -D stages=3 -D threads=256"
f8="-D block_N=256"

run() {
  local name=$1
  shift
  echo "=== $name" >>"$log"
  if "$@" >>"$log" 2>&1; then
    echo "| $name | PASS |" >>"$report"
  else
    echo "| $name | **FAIL** |" >>"$report"
    failures=$((failures + 1))
  fi
}

{
  echo "# persistent gemms on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "| check | result |"
  echo "|---|---|"
} >"$report"
: >"$log"
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
bench() {
  local label=$1
  shift
  echo "=== $label" >>"$report"
  "$runner" "$@" --arch "$arch" --bench --cublas 2>>"$log" | grep -E '^(bench|cublas)' >>"$report" ||
    failures=$((failures + 1))
}
for n in 4096 8192; do
  for dtype in float16 bfloat16; do
    for p in "" --persistent; do
      # shellcheck disable=SC2086
      bench "gemm $dtype $n^3 128x256x64 ${p:-(not persistent)}" "$gemm" $p -D dtype=$dtype $f16 --dim M=$n --dim N=$n --dim K=$n
    done
  done
  for p in "" --persistent; do
    # shellcheck disable=SC2086
    bench "gemm_fp8 $n^3 128x256x128 ${p:-(not persistent)}" "$fp8" $p $f8 --dim M=$n --dim N=$n --dim K=$n
  done
done
for p in "" --persistent; do
  # shellcheck disable=SC2086
  bench "gemm float16 4095x4097x4093 128x256x64 ${p:-(not persistent)}" "$gemm" $p $f16 --dim M=4095 --dim N=4097 --dim K=4093
  # shellcheck disable=SC2086
  bench "gemm float16 4096x4096x4096 default tiles ${p:-(not persistent)}" "$gemm" $p --dim M=4096 --dim N=4096 --dim K=4096
  # shellcheck disable=SC2086
  bench "gemm_fp8 4095x4080x4080 128x256x128 ${p:-(not persistent)}" "$fp8" $p $f8 --dim M=4095 --dim N=4080 --dim K=4080
done
echo '```' >>"$report"
echo "failures: $failures" >>"$report"
cat "$report"
exit $((failures > 0))
