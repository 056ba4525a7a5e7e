#!/bin/bash
# Times examples/gemm/gemm.tl over tile configurations against cuBLAS in the
# same process, on a GPU host, from the repository root, with the bundle made
# by scripts/gpu/prepare.sh:
#   scripts/gpu/sweep_gemm.sh [BUNDLE_DIR] [SIZE] [DTYPE] [dynamic|static]
# Each line of the table: block_M block_N block_K stages threads.
# dynamic (the default) leaves M, N and K runtime values; static binds them
# with -D, so the kernel is compiled for that one shape.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
n=${2:-8192}
dtype=${3:-float16}
dims=${4:-dynamic}
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
arch=sm_90a
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
[ -n "$cc" ] && [ "$cc" != 90 ] && arch="sm_$cc"
while read -r bm bn bk st th; do
  printf '%s ' "tiles $bm x $bn x $bk, $st stages, $th threads ($dims):"
  shape=(--dim M="$n" --dim N="$n" --dim K="$n")
  [ "$dims" = static ] && shape=(-D M="$n" -D N="$n" -D K="$n")
  "$bundle/tlc_cuda_runner" "$root/examples/gemm/gemm.tl" --arch "$arch" --bench --cublas -D dtype="$dtype" \
    -D block_M="$bm" -D block_N="$bn" -D block_K="$bk" -D stages="$st" -D threads="$th" \
    "${shape[@]}" 2>&1 | grep -E '^cublas|rror' | sed 's/.*; tlc/tlc/'
done <<CFG
${SWEEP_CONFIGS:-128 128 32 3 128
128 128 32 4 128
128 128 64 3 128
128 256 32 3 256
128 256 32 4 256
128 256 64 3 256
256 128 32 3 256}
CFG
