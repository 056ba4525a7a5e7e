#!/bin/bash
# The low-bit, fp8 and convolution examples on a GPU (examples/dequantize_gemm/,
# examples/gemm_fp8/, examples/convolution/):
#   1. each against the reference interpreter, at sizes its tiles do not
#      divide (tlc_cuda_runner --check);
#   2. W4A16 and the fp4 variant timed by tlc_cuda_runner: at decode sizes
#      (M = 1, 16) against the weight bytes moved at the device-to-device copy
#      bandwidth measured in the same process (the kernel's tensor bytes are
#      almost all weight bytes there), at M = 4096 against cuBLAS float16 on
#      the same M x N x K, in the same process;
#   3. the fp8 gemms against cuBLASLt fp8 with per-tensor scales and conv2d
#      against cuDNN, through torch in one process (bench/lowbit/lowbit_bench.py,
#      on the modules scripts/gpu/prepare.sh built into BUNDLE/lowbit), with a
#      check against torch's result first.
#   scripts/gpu/lowbit_bench.sh [BUNDLE_DIR]
# Writes $OUT/lowbit_results.md (OUT defaults to ./gpu-out) and lowbit.log.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
runner="$bundle/tlc_cuda_runner"
arch=sm_90a
report="$out/lowbit_results.md"
log="$out/lowbit.log"
: >"$log"
failures=0
echo "# low-bit, fp8 and convolution examples on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')" >"$report"
echo '```' >>"$report"

# check NAME FILE ARGS...: the example against the interpreter.
check() {
  local name=$1 f=$root/examples/$2
  shift 2
  echo "=== $name check $*" >>"$log"
  if "$runner" "$f" --arch "$arch" --check "$@" >>"$log" 2>&1; then
    echo "$name: check PASS ($*)" >>"$report"
  else
    echo "$name: check **FAIL** ($*)" >>"$report"
    failures=$((failures + 1))
  fi
}
# bench NAME FILE REF ARGS...: timed, REF is --copy-bandwidth or --cublas.
bench() {
  local name=$1 f=$root/examples/$2 ref=$3
  shift 3
  echo "=== $name bench $*" >>"$log"
  "$runner" "$f" --arch "$arch" --bench "$ref" "$@" 2>>"$log" | grep -E '^(bench|copy|cublas)' |
    sed "s/^/$name ($*): /" | tee -a "$log" >>"$report" || failures=$((failures + 1))
}

w4=dequantize_gemm/w4a16_gemm.tl
fp4=dequantize_gemm/fp4_gemm.tl
check w4a16 $w4 --dim M=37 --dim N=150 --dim K=200 -D group=64
check w4a16 $w4 --dim M=1 --dim N=130 --dim K=264 -D block_M=16
check fp4 $fp4 --dim M=37 --dim N=150 --dim K=200
check gemm_fp8 gemm_fp8/gemm_fp8.tl --dim M=70 --dim N=150 --dim K=200
check gemm_fp8_blockscale gemm_fp8/gemm_fp8_blockscale.tl --dim M=70 --dim N=200 --dim K=300
conv="-D N=2 -D H=9 -D W=11 -D C=24 -D F=40"
check conv2d_k3 convolution/conv2d_nhwc.tl $conv
check conv2d_k3_s2_d2 convolution/conv2d_nhwc.tl $conv -D S=2 -D P=2 -D D=2
check conv2d_k1_s2 convolution/conv2d_nhwc.tl $conv -D KH=1 -D KW=1 -D P=0 -D S=2

# A Llama-70B MLP projection: N = 28672, K = 8192 (117 MB of 4-bit weights, above L2).
shape="--dim N=28672 --dim K=8192"
for m in 1 16; do
  bench w4a16 $w4 --copy-bandwidth --dim M=$m $shape -D block_M=16
  bench fp4 $fp4 --copy-bandwidth --dim M=$m $shape -D block_M=16
done
bench w4a16 $w4 --cublas --dim M=4096 $shape -D block_M=128 -D block_N=128 -D block_K=64 -D threads=256 -D stages=3
bench fp4 $fp4 --cublas --dim M=4096 $shape -D block_M=128 -D block_N=128 -D block_K=64 -D threads=256 -D stages=3
echo '```' >>"$report"

if [ -d "$bundle/lowbit" ] && python3 -c "import torch" 2>/dev/null; then
  echo >>"$report"
  echo "## fp8 gemms against cuBLASLt fp8, conv2d against cuDNN (torch, same process)" >>"$report"
  echo >>"$report"
  echo '```' >>"$report"
  python3 "$root/bench/lowbit/lowbit_bench.py" "$bundle/lowbit" 2>>"$log" | tee -a "$log" >>"$report" ||
    failures=$((failures + 1))
  echo '```' >>"$report"
else
  echo "fp8 / conv2d against torch: skipped (no $bundle/lowbit or no torch)" | tee -a "$report"
fi
echo "lowbit: $failures failure(s)" | tee -a "$report"
[ "$failures" -eq 0 ]
