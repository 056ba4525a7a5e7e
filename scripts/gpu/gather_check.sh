#!/bin/bash
# Gathers run ahead as asynchronous copies, and the sm_90a loops without TMA,
# on a GPU: the convolution example (an im2col gather beside a TMA filter
# tile) and the row / column gathers of tests/cuda_emu_examples/
# pipelined_bodies.tl checked against the interpreter and under
# compute-sanitizer; the gemm at sizes whose rows are not 16-byte aligned
# (its version without TMA) checked too. Then timed: every conv2d_k*.cubin that scripts/gpu/prepare.sh built
# into BUNDLE_DIR/lowbit against cuDNN through torch (bench/lowbit/
# lowbit_bench.py --only conv), and the gemm at 4095x4097x4093 against cuBLAS.
#   scripts/gpu/gather_check.sh [BUNDLE_DIR] [ARCH]
# Writes $OUT/gather_results.md (OUT defaults to ./gpu-out).
set -uo pipefail
# shellcheck source=scripts/gpu/check_lib.sh
source "$(dirname "$0")/check_lib.sh" "$@"
conv="$root/examples/convolution/conv2d_nhwc.tl"
bodies="$root/tests/cuda_emu_examples/pipelined_bodies.tl"
gemm="$root/examples/gemm/gemm.tl"
report="$out/gather_results.md"
log="$out/gather_log.txt"
img="-D N=2 -D H=9 -D W=11 -D C=24 -D F=40"
odd="-D N=3 -D H=17 -D W=19 -D C=64 -D F=72"
f16="-D block_N=256 -D block_K=64 -D threads=256 -D stages=3"

start "gathers and loops without TMA"
for extra in "" "-D S=2 -D P=2 -D D=2" "-D KH=1 -D KW=1 -D P=0 -D S=2"; do
  # shellcheck disable=SC2086
  run "conv2d N2 9x11 C24 F40 $extra" "$runner" "$conv" --arch "$arch" --check $img $extra
done
for extra in "" "-D block_M=128 -D threads=256" "-D block_K=32 -D stages=2" "-D S=2 -D P=2 -D D=2"; do
  # shellcheck disable=SC2086
  run "conv2d N3 17x19 C64 F72 $extra" "$runner" "$conv" --arch "$arch" --check $odd $extra
done
run "gemm_row_gather R=1000 M=777 N=520 K=1000" "$runner" "$bodies" --arch "$arch" --kernel gemm_row_gather --check \
  --dim R=1000 --dim M=777 --dim N=520 --dim K=1000
run "gemm_row_gather R=300 M=77 N=136 K=202" "$runner" "$bodies" --arch "$arch" --kernel gemm_row_gather --check \
  --dim R=300 --dim M=77 --dim N=136 --dim K=202
run "gemm_column_gather M=1000 N=520 K=700" "$runner" "$bodies" --arch "$arch" --kernel gemm_column_gather --check \
  --dim M=1000 --dim N=520 --dim K=700
for dims in "M=300 N=520 K=203" "M=1000 N=777 K=1001" "M=129 N=64 K=64"; do
  args=$(for d in $dims; do echo --dim "$d"; done)
  # shellcheck disable=SC2086
  run "gemm 128x256x64 $dims" "$runner" "$gemm" --arch "$arch" --check $f16 $args
done
# shellcheck disable=SC2086
run "gemm bfloat16 128x256x64 M=300 N=520 K=203" "$runner" "$gemm" --arch "$arch" --check $f16 -D dtype=bfloat16 \
  --dim M=300 --dim N=520 --dim K=203
for tool in memcheck racecheck synccheck; do
  # shellcheck disable=SC2086
  run "conv2d $tool (N3 17x19 C64 F72)" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$conv" --arch "$arch" \
    --check $odd
  # shellcheck disable=SC2086
  run "gemm without TMA $tool (M=300 N=520 K=203)" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$gemm" \
    --arch "$arch" --check $f16 --dim M=300 --dim N=520 --dim K=203
done

echo >>"$report"
echo '## against cuDNN and cuBLAS (same process)' >>"$report"
echo '```' >>"$report"
if [ -d "$bundle/lowbit" ] && python3 -c "import torch" 2>/dev/null; then
  python3 "$root/bench/lowbit/lowbit_bench.py" "$bundle/lowbit" --only conv 2>>"$log" >>"$report" ||
    failures=$((failures + 1))
else
  echo "conv2d against cuDNN: skipped (no $bundle/lowbit, or no torch)" >>"$report"
fi
# shellcheck disable=SC2086
bench "gemm float16 4095x4097x4093 128x256x64 (the version without TMA)" "$gemm" $f16 \
  --dim M=4095 --dim N=4097 --dim K=4093
# shellcheck disable=SC2086
bench "gemm float16 4096^3 128x256x64 (TMA)" "$gemm" $f16 --dim M=4096 --dim N=4096 --dim K=4096
echo '```' >>"$report"
echo "failures: $failures" >>"$report"
cat "$report"
exit $((failures > 0))
