#!/bin/bash
# The kernel zoo (bench/zoo/) on a GPU: each kernel against the reference
# interpreter at sizes its tiles do not divide, then timed at a large size,
# memory-bound kernels against device-to-device copy bandwidth and gemms
# against cuBLAS, measured in the same process by tlc_cuda_runner.
#   scripts/gpu/zoo_bench.sh [BUNDLE_DIR] [KERNEL...]
# Writes $OUT/zoo_results.md (OUT defaults to ./gpu-out) and zoo.log.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
shift || true
only=" $* "
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
runner="$bundle/tlc_cuda_runner"
arch=sm_90a
report="$out/zoo_results.md"
log="$out/zoo.log"
: >"$log"
failures=0
echo "# kernel zoo on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')" >"$report"
echo '```' >>"$report"

# zoo NAME KIND "CHECK DIMS" "BENCH DIMS" [EXTRA ARGS]: KIND is mem or gemm.
zoo() {
  local name=$1 kind=$2 small=$3 large=$4
  shift 4
  [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
  local f="$root/bench/zoo/$name.tl" d a
  a=()
  for d in $small; do a+=(--dim "$d"); done
  echo "=== $name check $small" >>"$log"
  if "$runner" "$f" --arch "$arch" --check "${a[@]}" "$@" >>"$log" 2>&1; then
    echo "$name: check PASS ($small)" >>"$report"
  else
    echo "$name: check **FAIL** ($small)" >>"$report"
    failures=$((failures + 1))
  fi
  a=()
  for d in $large; do a+=(--dim "$d"); done
  local ref=--copy-bandwidth
  [ "$kind" = gemm ] && ref=--cublas
  echo "=== $name bench $large" >>"$log"
  "$runner" "$f" --arch "$arch" --bench $ref "${a[@]}" "$@" 2>>"$log" | grep -E '^(bench|copy|cublas)' |
    sed "s/^/$name: /" | tee -a "$log" >>"$report" || failures=$((failures + 1))
}

zoo layernorm mem "M=37" "M=32768"
zoo rmsnorm_residual mem "M=37" "M=32768"
zoo groupnorm mem "B=3 C=96 HW=300" "B=32 C=512 HW=4096"
zoo transpose mem "M=100 N=77" "M=8192 N=8192"
zoo permute_0213 mem "B=2 S=70 H=3" "B=8 S=4096 H=32"
zoo permute_3d mem "B=2 M=50 N=70" "B=16 M=2048 N=2048"
zoo bias_add_mixed mem "M=50 N=300" "M=16384 N=8192"
zoo silu_mul mem "M=20 N=600" "M=16384 N=8192"
zoo gelu mem "M=20 N=600" "M=16384 N=8192"
zoo col_sum mem "M=100 N=300" "M=16384 N=8192"
zoo row_max mem "M=10 N=3000" "M=16384 N=8192"
zoo argmax mem "M=10 N=3000" "M=16384 N=8192"
zoo cumsum mem "M=200 N=100" "M=16384 N=8192"
zoo embedding mem "T_=30 V=50" "T_=65536 V=32000"
zoo gather_rows mem "M=30 R=20 N=300" "M=65536 R=32768 N=1024"
zoo gemm_nt gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
zoo gemm_tn gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
zoo gemm_batched gemm "BATCH=2 M=150 N=300 K=200" "BATCH=8 M=2048 N=2048 K=2048"
zoo gemm_bias_gelu gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
zoo gemm_splitk gemm "M=150 N=300 K=200" "M=1024 N=1024 K=16384"
zoo gemm_int8 gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
echo '```' >>"$report"
echo "zoo: $failures failure(s)" | tee -a "$report"
[ "$failures" -eq 0 ]
