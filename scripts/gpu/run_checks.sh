#!/bin/bash
# The GPU checks of the CUDA backend, run on a machine with an NVIDIA GPU
# (an H200 here) from the repository root, after scripts/gpu/prepare.sh made
# build-gpu/ on the build machine:
#   1. every example against the reference interpreter on random inputs, at
#      sizes the tiles divide and sizes they do not, and every kernel of the
#      emulator's test programs (tests/cuda_emu_examples) at sizes they do not;
#   2. compute-sanitizer memcheck and racecheck on gemm and softmax;
#   3. gemm float16 / bfloat16 at 4096^3 and 8192^3 against cuBLAS (same process),
#      compiled for runtime M, N, K (dynamic) and for the one shape (static);
#   4. memory-bound examples against device-to-device copy bandwidth (same process);
#   5. the flash-attention example against torch's SDPA, and the MLA decode
#      example against torch eager and SDPA (same process), when prepare.sh
#      built their modules and torch is installed;
#   6. the Python package on torch CUDA tensors (scripts/gpu/python_check.py),
#      when prepare.sh built its modules and torch is installed;
#   and the random programs of tlc_difftest that prepare.sh bundled (difftest/),
#   each against the interpreter (mode `difftest`: only these).
# Writes a Markdown summary to $OUT/gpu_results.md (OUT defaults to ./gpu-out)
# and logs beside it. Exit code: 0 when every check passed.
#
#   scripts/gpu/run_checks.sh [BUNDLE_DIR] [quick|difftest|bench]
# (bench: sections 3 to 5 alone, at the sizes of quick)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
mode=${2:-full}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
export PATH="$PATH:/usr/local/cuda/bin"
runner="$bundle/tlc_cuda_runner"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
arch="sm_${cc:-90}"
[ "$arch" = "sm_90" ] && arch=sm_90a
report="$out/gpu_results.md"
log="$out/gpu_checks.log"
: >"$log"
failures=0
{
  echo "# GPU checks of the CUDA backend"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- command: scripts/gpu/run_checks.sh $*"
  echo "- arch: $arch"
  echo
} >"$report"

run() {  # run LABEL ARGS...: records PASS/FAIL in the report
  local label=$1
  shift
  echo "=== $label: $*" >>"$log"
  if "$@" >>"$log" 2>&1; then
    echo "| $label | PASS |" >>"$report"
  else
    echo "| $label | **FAIL** (rc $?) |" >>"$report"
    failures=$((failures + 1))
  fi
}

# The functions of a .tl file with their bracket parameters, one per line:
# "name[M, N, block=32]".
defs_of() {
  tr '\n' ' ' <"$1" | grep -o -E 'def [A-Za-z_0-9]+\[[^]]*\]' | sed -E 's/^def //'
}
# The dynamic dimensions of a function (default: the file's first): bracket
# parameters without a default.
dims_of() {
  local def
  if [ -n "${2:-}" ]; then def=$(defs_of "$1" | grep -E "^$2\[" | head -1); else def=$(defs_of "$1" | head -1); fi
  echo "$def" | sed -E 's/^[A-Za-z_0-9]+\[(.*)\]$/\1/' | tr ',' '\n' |
    grep -v '=' | tr -d ' ' | grep -E '^[A-Za-z_][A-Za-z_0-9]*$' || true
}

# The random programs of tlc_difftest (docs/difftest.md), written with their
# run arguments (seedN.args) by prepare.sh, each against the interpreter: a
# row per failure, then the count.
run_difftest() {
  [ -d "$bundle/difftest" ] || return 0
  echo "## Generated programs (tlc_difftest) against the interpreter" >>"$report"
  echo >>"$report"
  echo "| check | result |" >>"$report"
  echo "|---|---|" >>"$report"
  local n=0 bad=0 f
  for f in $(find "$bundle/difftest" -name 'seed*.tl' | sort -V); do
    n=$((n + 1))
    echo "=== difftest $f" >>"$log"
    # shellcheck disable=SC2046
    if ! "$runner" "$f" --arch "$arch" --check $(cat "${f%.tl}.args") >>"$log" 2>&1; then
      echo "| $(basename "$f") $(cat "${f%.tl}.args") | **FAIL** |" >>"$report"
      bad=$((bad + 1))
      failures=$((failures + 1))
    fi
  done
  echo "| $n programs | $((n - bad)) PASS, $bad FAIL |" >>"$report"
  echo >>"$report"
}
if [ "$mode" = difftest ]; then
  run_difftest
  echo "failures: $failures" >>"$report"
  cat "$report"
  [ "$failures" -eq 0 ]
  exit
fi
if [ "$mode" != bench ]; then
run_difftest

echo "## 1. Examples against the interpreter" >>"$report"
echo >>"$report"
echo "| check | result |" >>"$report"
echo "|---|---|" >>"$report"
# Sizes per dynamic dimension, in order (a list shorter than the dimensions
# repeats); attention's (batch, sequence, heads) get a small batch and few
# heads, MLA decode's (batch, keys or pages) and convolution's (N, H, W, C,
# F) sizes whose tensors and interpreter runs stay small.
sizes_of() {
  case "$(basename "$1")" in
    # The varlen form's random cu_seqlens hold one sequence (B1 = 2): with
    # more, random offsets make sequences overlap and their blocks write the
    # same rows in an order the interpreter does not share (varlen_check.sh
    # runs valid ones).
    mha_fwd_varlen.tl) echo "1000,2,2 129,2,3 1,2,2" ;;
    mha_fwd_*) echo "1,1000,2 2,129,3 1,1,2" ;;
    mla_decode.tl) echo "2,1000 1,129 2,1" ;;
    mla_decode_paged.tl) echo "2,40,20 1,9,9" ;;
    conv2d_nhwc.tl) echo "2,17,19,64,96 1,9,7,24,40" ;;
    *) echo "512,256,384 333,517,251 1,129,77" ;;
  esac
}
for f in $(find "$root/examples" -name '*.tl' | sort); do
  name=$(basename "$f" .tl)
  for sizes in $(sizes_of "$f"); do
    sizes=${sizes//,/ }
    set -- $sizes
    args=()
    i=0
    for d in $(dims_of "$f"); do
      vals=($sizes)
      args+=(--dim "$d=${vals[$((i % ${#vals[@]}))]}")
      i=$((i + 1))
    done
    run "$name ${args[*]}" "$runner" "$f" --arch "$arch" --check --seed 7 "${args[@]}"
  done
done

# The gemm's other tensor-core kinds (bfloat16; float32 in tf32, compared at
# tf32 precision; int8 into int32) and the benchmark tiles, at sizes the
# tiles do not divide.
for variant in "-D dtype=bfloat16" "-D dtype=float32" "-D dtype=int8 -D accum=int32 -D block_K=64" \
  "-D block_M=128 -D block_N=256 -D threads=256"; do
  # shellcheck disable=SC2086
  run "gemm $variant --dim M=333 --dim N=517 --dim K=251" "$runner" "$root/examples/gemm/gemm.tl" --arch "$arch" \
    --check --seed 7 $variant --dim M=333 --dim N=517 --dim K=251
done

# The kernels of the emulator's test programs (register fragments, layout
# annotations, shared-memory reuse) on the GPU, at sizes their tiles do not
# divide, each against the interpreter.
for f in $(find "$root/tests/cuda_emu_examples" -name '*.tl' | sort); do
  for fn in $(defs_of "$f" | sed -E 's/\[.*//'); do
    args=()
    vals=(333 517 251)
    i=0
    for d in $(dims_of "$f" "$fn"); do
      args+=(--dim "$d=${vals[$((i % 3))]}")
      i=$((i + 1))
    done
    run "$(basename "$f" .tl):$fn ${args[*]}" "$runner" "$f" --kernel "$fn" --arch "$arch" --check --seed 7 "${args[@]}"
  done
done

echo >>"$report"
echo "## 2. compute-sanitizer" >>"$report"
echo >>"$report"
echo "| check | result |" >>"$report"
echo "|---|---|" >>"$report"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  run "gemm $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$root/examples/gemm/gemm.tl" --arch "$arch" --check \
    --dim M=256 --dim N=200 --dim K=160
  # Rows of whole 16-byte multiples: the TMA mainloop on sm_90a (the sizes above take its version without TMA).
  run "gemm (TMA) $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$root/examples/gemm/gemm.tl" --arch "$arch" \
    --check --dim M=256 --dim N=208 --dim K=168
  run "gemm (TMA, 128x256x64 tiles) $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" \
    "$root/examples/gemm/gemm.tl" --arch "$arch" --check -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 \
    --dim M=300 --dim N=520 --dim K=200
  # Rows that are not 16-byte multiples with tiles of one 16-row slice per
  # warp: the version without TMA runs its gemm as wgmma in place on tiles
  # the block's threads copy (shifted vector loads).
  run "gemm (no TMA, 128x256x64 tiles) $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" \
    "$root/examples/gemm/gemm.tl" --arch "$arch" --check -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 \
    --dim M=300 --dim N=520 --dim K=203
  run "softmax $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" "$root/examples/softmax/softmax.tl" --arch "$arch" \
    --check --dim M=130 --dim N=300
  # Constant shapes: the warp-specialized TMA loop and wgmma on sm_90a.
  run "flash attention (causal) $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" \
    "$root/examples/flash_attention/mha_fwd_bshd.tl" --arch "$arch" --check -D causal=True -D B=1 -D S=300 -D H=2
  # Warpgroups splitting the columns of both gemms (wgmma), 64-key tiles.
  run "MLA decode (64-key tiles) $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" \
    "$root/examples/deepseek_mla/mla_decode.tl" --kernel mla_decode --arch "$arch" --check -D block_N=64 \
    --dim batch=2 --dim seqlen_kv=1000
  run "gemm_operands (annotated layouts) $tool" "$san" --tool "$tool" --error-exitcode 1 "$runner" \
    "$root/tests/cuda_emu_examples/annotated_layouts/gemm_operands.tl" --kernel gemm_operands --arch "$arch" --check \
    --dim M=200 --dim N=136 --dim K=96
done

fi

echo >>"$report"
echo "## 3. gemm against cuBLAS (same process)" >>"$report"
echo >>"$report"
# The example's tile parameters chosen for large problems on this GPU
# (bench/RESULTS.md lists the sweep); the kernel source is the example's.
gemm_tiles="-D block_M=128 -D block_N=256 -D block_K=64 -D stages=3 -D threads=256"
echo "gemm tiles: $gemm_tiles" >>"$report"
echo >>"$report"
echo '```' >>"$report"
sizes="4096 8192"
[ "$mode" != full ] && sizes=4096
for dims in dynamic static; do
  for dtype in float16 bfloat16; do
    for n in $sizes; do
      echo "=== gemm $dtype $n ($dims)" | tee -a "$log" >>"$report"
      shape="--dim M=$n --dim N=$n --dim K=$n"
      [ "$dims" = static ] && shape="-D M=$n -D N=$n -D K=$n"
      # shellcheck disable=SC2086
      "$runner" "$root/examples/gemm/gemm.tl" --arch "$arch" --bench --cublas -D dtype=$dtype $gemm_tiles $shape \
        2>>"$log" | grep -E '^(bench|cublas)' | tee -a "$log" >>"$report" ||
        failures=$((failures + 1))
    done
  done
done
echo '```' >>"$report"

echo >>"$report"
echo "## 4. memory-bound examples against copy bandwidth (same process)" >>"$report"
echo >>"$report"
echo '```' >>"$report"
bench_mem() {
  local f=$1
  shift
  echo "=== $f $*" >>"$log"
  "$runner" "$root/examples/$f" --arch "$arch" --bench --copy-bandwidth "$@" 2>>"$log" |
    grep -E '^(bench|copy)' | tee -a "$log" >>"$report" || failures=$((failures + 1))
}
bench_mem elementwise_add/add.tl --dim M=16384 --dim N=16384
bench_mem softmax/softmax.tl --dim M=16384 --dim N=16384
bench_mem rmsnorm/rmsnorm.tl --dim M=65536
bench_mem row_reduce/row_sum.tl --dim M=16384 --dim N=16384
echo '```' >>"$report"

# Flash attention against torch's scaled_dot_product_attention in one
# process, on the modules prepare.sh built (bench/attention/).
if [ -d "$bundle/attention" ] && python3 -c "import torch" 2>/dev/null; then
  echo >>"$report"
  echo "## 5. flash-attention forward against torch SDPA (same process)" >>"$report"
  echo >>"$report"
  echo '```' >>"$report"
  modules=()
  for m in "$bundle"/attention/*.cubin; do modules+=(--module "$m"); done
  python3 "$root/bench/attention/attention_bench.py" --runtime "$bundle/attention/libtlc_runtime.so" "${modules[@]}" \
    2>>"$log" | tee -a "$log" >>"$report" || failures=$((failures + 1))
  echo '```' >>"$report"
  if [ -d "$bundle/attention/mla" ]; then
    echo >>"$report"
    echo "MLA decode (split kernel + combine) against torch (same process):" >>"$report"
    echo >>"$report"
    echo '```' >>"$report"
    modules=()
    for m in "$bundle"/attention/mla/*.cubin; do modules+=(--module "$m"); done
    python3 "$root/bench/attention/mla_bench.py" --runtime "$bundle/attention/libtlc_runtime.so" "${modules[@]}" \
      2>>"$log" | tee -a "$log" >>"$report" || failures=$((failures + 1))
    echo '```' >>"$report"
  fi
fi
# The Python package (python/) on torch CUDA tensors, on the modules
# prepare.sh built (scripts/gpu/python_check.py).
if [ -d "$bundle/python" ] && python3 -c "import torch" 2>/dev/null; then
  echo >>"$report"
  echo "## 6. the Python package on torch CUDA tensors" >>"$report"
  echo >>"$report"
  echo '```' >>"$report"
  python3 "$root/scripts/gpu/python_check.py" "$bundle/python" 2>>"$log" | tee -a "$log" >>"$report" ||
    failures=$((failures + 1))
  echo '```' >>"$report"
fi
echo >>"$report"
echo "failures: $failures" >>"$report"
cat "$report"
[ "$failures" -eq 0 ]
