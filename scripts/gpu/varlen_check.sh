#!/bin/bash
# The variable-length flash-attention example (examples/flash_attention/
# mha_fwd_varlen.tl) on a GPU: packed sequences made by NumPy, checked
# against the interpreter (tlc_cuda_runner --check --load) at lengths the
# tiles do not divide, causal and not, then timed at 32768 tokens (8
# sequences of 4096, the dense mha_fwd_bshd.tl at B=8 S=4096 timed beside it,
# and 16 sequences of mixed lengths).
#   scripts/gpu/varlen_check.sh [BUNDLE_DIR]
# Writes $OUT/varlen_results.md (OUT defaults to ./gpu-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
runner="$bundle/tlc_cuda_runner"
file="$root/examples/flash_attention/mha_fwd_varlen.tl"
report="$out/varlen_results.md"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# inputs DIR H D DTYPE LEN...: Q, K, V, cu_seqlens and max_seqlen as .npy files.
inputs() {
  python3 - "$@" <<'PY'
import sys, numpy as np
d, H, D, dtype, lens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], [int(x) for x in sys.argv[5:]]
rng = np.random.default_rng(7)
T = sum(lens)
for n in "QKV":
    np.save(f"{d}/{n}.npy", rng.uniform(-1, 1, (T, H, D)).astype(np.float32))
np.save(f"{d}/cu_seqlens.npy", np.concatenate([[0], np.cumsum(lens)]).astype(np.int32))
np.save(f"{d}/max_seqlen.npy", np.array([max(lens)], dtype=np.int32))
print(T)
PY
}

echo "# variable-length attention on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')" >"$report"
echo '```' >>"$report"
mkdir -p "$work/small"
T=$(inputs "$work/small" 2 128 float16 150 1 129 70)
for causal in False True; do
  if "$runner" "$file" --arch sm_90a --check --load "$work/small" --dim T_="$T" --dim B1=5 --dim H=2 \
      -D causal=$causal >"$work/log" 2>&1; then
    echo "check causal=$causal (lengths 150 1 129 70): PASS" >>"$report"
  else
    echo "check causal=$causal (lengths 150 1 129 70): **FAIL**" >>"$report"
    tail -5 "$work/log" >>"$report"
    failures=$((failures + 1))
  fi
done
# bench NAME LEN...: median time and TFLOP/s (4 * sum(len^2) * H * D, halved when causal).
bench() {
  local name=$1 causal=$2
  shift 2
  mkdir -p "$work/$name"
  T=$(inputs "$work/$name" 32 128 float16 "$@")
  local ms
  ms=$("$runner" "$file" --arch sm_90a --bench --load "$work/$name" --dim T_="$T" --dim B1=$(($# + 1)) --dim H=32 \
       -D causal=$causal 2>/dev/null | sed -n 's/^bench: .*median \([0-9.]*\) ms.*/\1/p')
  python3 -c "
import sys
lens=[int(x) for x in '$*'.split()]
f=4*sum(l*l for l in lens)*32*128/(2 if '$causal'=='True' else 1)
print(f'$name causal=$causal: {sum(lens)} tokens, median $ms ms, {f/($ms*1e-3)/1e12:.1f} TFLOP/s')" >>"$report"
}
bench equal8 False 4096 4096 4096 4096 4096 4096 4096 4096
bench equal8 True 4096 4096 4096 4096 4096 4096 4096 4096
bench mixed16 False 4096 512 3000 1 2048 8192 100 1500 4096 777 2500 1024 64 300 2000 2133
echo "dense mha_fwd_bshd B=8 S=4096 H=32 D=128:" >>"$report"
"$runner" "$root/examples/flash_attention/mha_fwd_bshd.tl" --arch sm_90a --bench --dim B=8 --dim S=4096 --dim H=32 2>/dev/null |
  grep '^bench' >>"$report"
echo '```' >>"$report"
echo "failures: $failures" >>"$report"
cat "$report"
exit $((failures > 0))
