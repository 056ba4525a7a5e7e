#!/bin/bash
# `tlc tune` on a GPU host, end to end, with the bundle made by
# scripts/gpu/prepare.sh, from the repository root:
#   scripts/gpu/tune_check.sh [BUNDLE_DIR] [SIZE] [DTYPE] [OUT_DIR]
#
# 1. tunes examples/gemm/gemm.tl over its declared space at SIZE^3 (dynamic
#    M, N, K) into a fresh results database, timing the whole command;
# 2. builds with `tlc build --tuned`, which must reuse the record (a note
#    names the configuration; no tuning);
# 3. times every candidate the tuner measured again, one `tlc_cuda_runner
#    --bench` process each (an independent sweep of the whole space), and
#    prints the tuner's pick against the sweep's fastest, plus cuBLAS.
# Logs go to OUT_DIR (default: a temporary directory).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/build-gpu}
n=${2:-4096}
dtype=${3:-float16}
out=${4:-$(mktemp -d)}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:${LD_LIBRARY_PATH:-}"
export TLC_STDLIB_PATH="$root/stdlib"
export TLC_CACHE_DIR="$out/cache"
export TLC_TUNE_DIR="$out/tune-db"
rm -rf "$TLC_CACHE_DIR" "$TLC_TUNE_DIR"
arch=sm_90a
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
[ -n "$cc" ] && [ "$cc" != 90 ] && arch="sm_$cc"
src=$root/examples/gemm/gemm.tl
dims=(--dim M="$n" --dim N="$n" --dim K="$n")
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "== tlc tune $src at ${n}^3 $dtype on $arch ($(nproc) cores)"
t0=$(now)
"$bundle/tlc" tune "$src" --target=cuda:$arch -D dtype="$dtype" "${dims[@]}" >"$out/tune.txt" 2>"$out/tune.err"
rc=$?
t1=$(now)
tail -n 3 "$out/tune.err"
cat "$out/tune.txt"
echo "tune: exit $rc, wall $(elapsed "$t0" "$t1") s"
[ "$rc" = 0 ] || exit "$rc"
"$bundle/tlc" tune --show -v "$src" >"$out/show.txt" 2>&1

echo "== tlc build --tuned"
t0=$(now)
"$bundle/tlc" build --tuned "$src" --target=cuda:$arch -D dtype="$dtype" "${dims[@]}" -o "$out/gemm.cubin" \
  2>"$out/build.err"
rc=$?
t1=$(now)
cat "$out/build.err"
echo "build --tuned: exit $rc, wall $(elapsed "$t0" "$t1") s"
grep -q '^tune:' "$out/build.err" && echo "build --tuned: FAIL (it tuned again)"

echo "== every measured candidate again, one tlc_cuda_runner --bench each"
best=$(awk '/^  best:/ {sub(/^  best: /, ""); sub(/  [0-9.]+ ms$/, ""); print; exit}' "$out/show.txt")
grep -E '^ +ok ' "$out/show.txt" | while read -r _ ms _ rest; do
  cfg=${rest%%  (*}
  defs=()
  for kv in $cfg; do defs+=(-D "$kv"); done
  line=$("$bundle/tlc_cuda_runner" "$src" --arch "$arch" --bench -D dtype="$dtype" "${defs[@]}" "${dims[@]}" 2>&1 |
    grep -E '^bench:' | head -1)
  sweep_ms=$(echo "$line" | sed -n 's/.*median \([0-9.e+-]*\) ms.*/\1/p')
  echo "${sweep_ms:-nan} $ms $cfg"
done | sort -g >"$out/sweep.txt"
awk -v best="$best" '
  NR == 1 { fastest = $1; fcfg = $0 }
  { cfg = $0; sub(/^[^ ]+ [^ ]+ /, "", cfg); if (cfg == best) picked = $1 }
  END {
    printf "sweep: %d candidates; fastest %s\n", NR, fcfg
    printf "tuner pick (%s): %s ms in the sweep; fastest %s ms; pick / fastest = %.4f\n", best, picked, fastest, picked / fastest
  }' "$out/sweep.txt"
head -n 10 "$out/sweep.txt"

echo "== the tuned configuration against cuBLAS"
cfg=()
for kv in $best; do cfg+=(-D "$kv"); done
"$bundle/tlc_cuda_runner" "$src" --arch "$arch" --bench --cublas -D dtype="$dtype" "${cfg[@]}" "${dims[@]}" 2>&1 |
  grep -E '^cublas|rror'
