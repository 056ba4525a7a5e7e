#!/bin/bash
# The wgmma kinds beyond float16 / bfloat16 on a GPU: the float8 gemms
# (examples/gemm_fp8/) checked against the interpreter (tlc_cuda_runner
# --check) at sizes the tiles divide and sizes they do not, e4m3 and e5m2,
# under compute-sanitizer, then timed against cublasLt's float8 gemm in the
# same process at 4096^3 and 8192^3 and at a shape the tiles do not divide;
# the float32 gemm with B as [N, K] (bench/zoo/gemm_nt.tl, tf32 wgmma)
# checked the same way and timed; the float16 gemm timed against cuBLAS as
# a reference point of the same run.
#   scripts/gpu/gemm_dtypes_check.sh [BUNDLE_DIR] [ARCH]
# Writes $OUT/gemm_dtypes_results.md (OUT defaults to ./gpu-out).
set -uo pipefail
# shellcheck source=scripts/gpu/check_lib.sh
source "$(dirname "$0")/check_lib.sh" "$@"
gemm="$root/examples/gemm_fp8/gemm_fp8.tl"
blockscale="$root/examples/gemm_fp8/gemm_fp8_blockscale.tl"
report="$out/gemm_dtypes_results.md"
log="$out/gemm_dtypes_log.txt"

start "float8 and tf32 gemms"
for dims in "M=512 N=512 K=512" "M=130 N=270 K=200" "M=1000 N=777 K=1040" "M=1 N=129 K=64"; do
  args=$(for d in $dims; do echo --dim "$d"; done)
  # shellcheck disable=SC2086
  run "gemm_fp8 e4m3 $dims" "$runner" "$gemm" --arch "$arch" --check $args
  # shellcheck disable=SC2086
  run "gemm_fp8 e5m2 $dims" "$runner" "$gemm" --arch "$arch" --check -D in_dtype=float8_e5m2 $args
done
run "gemm_fp8 128x128 tiles, 128 threads, M=300 N=260 K=384" "$runner" "$gemm" --arch "$arch" --check \
  -D block_N=128 -D threads=128 -D block_M=64 --dim M=300 --dim N=260 --dim K=384
for dims in "M=300 N=500 K=640" "M=70 N=200 K=300"; do
  args=$(for d in $dims; do echo --dim "$d"; done)
  # shellcheck disable=SC2086
  run "gemm_fp8_blockscale $dims" "$runner" "$blockscale" --arch "$arch" --check $args
  # Four stages: the scaled add one K step behind the wgmmas.
  # shellcheck disable=SC2086
  run "gemm_fp8_blockscale 4 stages $dims" "$runner" "$blockscale" --arch "$arch" --check -D stages=4 $args
done
nt="$root/bench/zoo/gemm_nt.tl"
f32="-D dtype=float32 -D block_K=32"
for dims in "M=512 N=512 K=256" "M=333 N=520 K=252"; do
  args=$(for d in $dims; do echo --dim "$d"; done)
  # shellcheck disable=SC2086
  run "gemm_nt float32 (tf32) $dims" "$runner" "$nt" --arch "$arch" --check $f32 $args
done
for tool in memcheck racecheck synccheck; do
  # shellcheck disable=SC2086
  run "gemm_nt float32 (tf32) $tool (M=256 N=512 K=256)" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$nt" \
    --arch "$arch" --check $f32 --dim M=256 --dim N=512 --dim K=256
  run "gemm_fp8 $tool (TMA, M=256 N=512 K=384)" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$gemm" \
    --arch "$arch" --check --dim M=256 --dim N=512 --dim K=384
  run "gemm_fp8_blockscale $tool (M=200 N=256 K=384)" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$blockscale" \
    --arch "$arch" --check --dim M=200 --dim N=256 --dim K=384
  run "gemm_fp8_blockscale 4 stages $tool (M=200 N=256 K=384)" "$san" --tool "$tool" --error-exitcode 1 "$runner" \
    "$blockscale" --arch "$arch" --check -D stages=4 --dim M=200 --dim N=256 --dim K=384
done

echo >>"$report"
echo '## against cublasLt float8 (same process)' >>"$report"
echo '```' >>"$report"
# The tiles for large problems on this GPU (128 x 256 x 128: two consumer
# warpgroups of m64n256 wgmmas); the example's defaults (128 x 128 x 128)
# fit every architecture's shared memory.
tiles="-D block_N=256"
for n in 4096 8192; do
  # shellcheck disable=SC2086
  bench "gemm_fp8 $n^3, 128x256x128 tiles, 3 stages" "$gemm" $tiles --dim M=$n --dim N=$n --dim K=$n
  # shellcheck disable=SC2086
  bench "gemm_fp8 $n^3, 128x256x128 tiles, 4 stages" "$gemm" $tiles -D stages=4 --dim M=$n --dim N=$n --dim K=$n
  bench "gemm_fp8 $n^3, the example's defaults (128x128x128)" "$gemm" --dim M=$n --dim N=$n --dim K=$n
done
# shellcheck disable=SC2086
# cublasLt's float8 gemm needs leading dimensions that are multiples of 16.
bench "gemm_fp8 M=4095 N=4080 K=4080, 128x256x128" "$gemm" $tiles --dim M=4095 --dim N=4080 --dim K=4080
# shellcheck disable=SC2086
bench "gemm_fp8 e5m2 4096^3, 128x256x128" "$gemm" $tiles -D in_dtype=float8_e5m2 --dim M=4096 --dim N=4096 --dim K=4096
bench "gemm_fp8_blockscale 4096^3 (against per-tensor cublasLt)" "$blockscale" --dim M=4096 --dim N=4096 --dim K=4096
for n in 4096 8192; do
  bench "gemm_fp8_blockscale $n^3, 4 stages" "$blockscale" -D stages=4 --dim M=$n --dim N=$n --dim K=$n
done
echo "=== gemm_nt float32 (tf32 wgmma) 4096^3, 128x256x32 tiles" >>"$report"
# shellcheck disable=SC2086
"$runner" "$nt" --arch "$arch" --bench $f32 --dim M=4096 --dim N=4096 --dim K=4096 2>>"$log" | grep '^bench' >>"$report" ||
  failures=$((failures + 1))
bench "gemm float16 4096^3 (examples/gemm/gemm.tl, 128x256x64, reference point)" "$root/examples/gemm/gemm.tl" \
  -D block_M=128 -D block_N=256 -D block_K=64 -D stages=3 -D threads=256 --dim M=4096 --dim N=4096 --dim K=4096
echo '```' >>"$report"
echo "failures: $failures" >>"$report"
cat "$report"
exit $((failures > 0))
