#!/bin/bash
# The kernel zoo (bench/zoo/) on a GPU: each kernel against the reference
# interpreter at sizes its tiles do not divide, then timed at a large size,
# memory-bound kernels against device-to-device copy bandwidth and gemms
# against cuBLAS, measured in the same process by tlc_cuda_runner.
# Then the low-bit, fp8 and convolution examples (examples/dequantize_gemm/,
# examples/gemm_fp8/, examples/convolution/; KERNEL `lowbit`):
#   - each against the interpreter at sizes its tiles do not divide;
#   - W4A16 (the gemm and the decode GEMV) and the fp4 variant timed by
#     tlc_cuda_runner: at decode sizes (M = 1, 16) against the
#     device-to-device copy bandwidth of the same process (their tensor
#     bytes are almost all weight bytes there: the ratio is the fraction of
#     the weight-bandwidth bound), at M = 4096
#     against cuBLAS float16 on the same M x N x K;
#   - the fp8 gemms against cuBLASLt fp8 with per-tensor scales and conv2d
#     against cuDNN, through torch in one process (bench/lowbit/lowbit_bench.py,
#     on the modules prepare.sh built into BUNDLE_DIR/lowbit), each checked
#     against torch's result first.
#   scripts/gpu/zoo_bench.sh [BUNDLE_DIR] [KERNEL... | lowbit]
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

# check LABEL SIZES FILE ARGS...: FILE against the interpreter.
check() {
  local label=$1 sizes=$2 f=$3
  shift 3
  echo "=== $label check $sizes" >>"$log"
  if "$runner" "$f" --arch "$arch" --check "$@" >>"$log" 2>&1; then
    echo "$label: check PASS ($sizes)" >>"$report"
  else
    echo "$label: check **FAIL** ($sizes)" >>"$report"
    failures=$((failures + 1))
  fi
}

# bench LABEL FILE REF ARGS...: FILE timed, with REF (--copy-bandwidth or --cublas) in the same process.
bench() {
  local label=$1 f=$2 ref=$3
  shift 3
  echo "=== $label bench $*" >>"$log"
  "$runner" "$f" --arch "$arch" --bench "$ref" "$@" 2>>"$log" | grep -E '^(bench|copy|cublas)' |
    sed "s/^/$label: /" | tee -a "$log" >>"$report" || failures=$((failures + 1))
}

selected() { [ "$only" = "  " ] || [[ "$only" == *" $1 "* ]]; }

# zoo NAME KIND "CHECK DIMS" "BENCH DIMS" [EXTRA ARGS]: KIND is mem or gemm;
# a size written D:NAME=VALUE is bound at compile time (-D), the others at
# run time (--dim);
# bench_extra="ARGS" before it: arguments of the timed run only (the check
# keeps the default inputs, whose indices also fall outside the tables).
zoo() {
  local name=$1 kind=$2 small=$3 large=$4
  shift 4
  selected "$name" || return 0
  local f="$root/bench/zoo/$name.tl" d a ref=--copy-bandwidth
  a=()
  size() { if [[ $1 == D:* ]]; then a+=(-D "${1#D:}"); else a+=(--dim "$1"); fi; }
  for d in $small; do size "$d"; done
  check "$name" "$small" "$f" "${a[@]}" "$@"
  a=()
  for d in $large; do size "$d"; done
  [ "$kind" = gemm ] && ref=--cublas
  # shellcheck disable=SC2086
  bench "$name" "$f" $ref "${a[@]}" "$@" ${bench_extra:-}
}

zoo layernorm mem "M=37" "M=32768"
zoo rmsnorm_residual mem "M=37" "M=32768"
zoo groupnorm mem "B=3 D:C=96 D:HW=300" "B=32 D:C=512 D:HW=4096"
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
zoo topk mem "M=150 D:N=64" "M=262144 D:N=64"
# Indices spread over the whole table when timed.
bench_extra="--fill ids=0:32000" zoo embedding mem "T_=30 V=50" "T_=65536 V=32000"
bench_extra="--fill index=0:32768" zoo gather_rows mem "M=30 R=20 N=300" "M=65536 R=32768 N=1024"
zoo gemm_nt gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
zoo gemm_tn gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
zoo gemm_batched gemm "BATCH=2 M=150 N=300 K=200" "BATCH=8 M=2048 N=2048 K=2048"
zoo gemm_bias_gelu gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
zoo gemm_splitk gemm "M=150 N=300 K=200" "M=1024 N=1024 K=16384"
zoo gemm_int8 gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"
# Half of A's tiles kept (Mask in {0, 1}), against cuBLAS's dense gemm.
bench_extra="--fill Mask=0:2" zoo gemm_blocksparse gemm "M=150 N=300 K=200" "M=4096 N=4096 K=4096"

if selected lowbit; then
  ex=$root/examples
  w4=$ex/dequantize_gemm/w4a16_gemm.tl
  w4v=$ex/dequantize_gemm/w4a16_gemv.tl
  w4s=$ex/dequantize_gemm/w4a16_decode.tl
  fp4=$ex/dequantize_gemm/fp4_gemm.tl
  conv=$ex/convolution/conv2d_nhwc.tl
  small="--dim M=37 --dim N=150 --dim K=200"
  check w4a16 "M=37 N=150 K=200 group=64" "$w4" $small -D group=64
  check w4a16 "M=1 N=130 K=264 block_M=16" "$w4" --dim M=1 --dim N=130 --dim K=264 -D block_M=16
  check w4a16_decode "M=3 N=150 K=1000 group=64 split=3" "$w4s" --dim M=3 --dim N=150 --dim K=1000 -D group=64 -D split=3
  check w4a16_decode "M=1 N=130 K=600 split=4" "$w4s" --dim M=1 --dim N=130 --dim K=600 -D split=4
  check w4a16_gemv "M=5 N=150 K=200 group=64" "$w4v" --dim M=5 --dim N=150 --dim K=200 -D group=64
  check w4a16_gemv "M=1 N=130 K=264 block_M=1" "$w4v" --dim M=1 --dim N=130 --dim K=264 -D block_M=1
  check fp4 "M=37 N=150 K=200" "$fp4" $small
  check gemm_fp8 "M=70 N=150 K=200" "$ex/gemm_fp8/gemm_fp8.tl" --dim M=70 --dim N=150 --dim K=200
  check gemm_fp8_blockscale "M=70 N=200 K=300" "$ex/gemm_fp8/gemm_fp8_blockscale.tl" --dim M=70 --dim N=200 --dim K=300
  img="-D N=2 -D H=9 -D W=11 -D C=24 -D F=40"
  check conv2d "N2 9x11 C24 F40 3x3" "$conv" $img
  check conv2d "N2 9x11 C24 F40 3x3 stride 2 pad 2 dilation 2" "$conv" $img -D S=2 -D P=2 -D D=2
  check conv2d "N2 9x11 C24 F40 1x1 stride 2" "$conv" $img -D KH=1 -D KW=1 -D P=0 -D S=2
  # A Llama-70B MLP projection: N = 28672, K = 8192 (117 MB of 4-bit weights, above L2).
  shape="--dim N=28672 --dim K=8192"
  big="-D block_M=256 -D block_N=128 -D block_K=128 -D threads=256 -D stages=3"
  big_fp4="-D block_M=256 -D block_N=128 -D block_K=64 -D threads=256 -D stages=3"
  decode="-D block_M=16 -D block_N=128 -D block_K=128 -D threads=256 -D stages=4"
  for m in 1 16; do
    bench "w4a16 M=$m" "$w4" --copy-bandwidth --dim M=$m $shape $decode
    bench "w4a16_gemv M=$m" "$w4v" --copy-bandwidth --dim M=$m $shape -D block_M=$m
    bench "w4a16_decode (split-K) M=$m" "$w4s" --copy-bandwidth --dim M=$m $shape
    bench "fp4 M=$m" "$fp4" --copy-bandwidth --dim M=$m $shape $decode
  done
  bench "w4a16 M=4096" "$w4" --cublas --dim M=4096 $shape $big
  bench "fp4 M=4096" "$fp4" --cublas --dim M=4096 $shape $big_fp4
  if [ -d "$bundle/lowbit" ] && python3 -c "import torch" 2>/dev/null; then
    python3 "$root/bench/lowbit/lowbit_bench.py" "$bundle/lowbit" 2>>"$log" | tee -a "$log" >>"$report" ||
      failures=$((failures + 1))
  else
    echo "fp8 and conv2d against torch: skipped (no $bundle/lowbit, or no torch)" >>"$report"
  fi
fi
echo '```' >>"$report"
echo "zoo: $failures failure(s)" | tee -a "$report"
[ "$failures" -eq 0 ]
