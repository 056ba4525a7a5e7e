#!/usr/bin/env bash
# Runs the hand-written multistage GEMM and each of its planted bugs on a GPU,
# plain and under compute-sanitizer (racecheck, memcheck, synccheck), so the
# emulator's verdicts (tests/cuda_emu/gemm_bug_injection_test.cpp) can be
# compared with the hardware's. Writes one line per variant and tool to
# ${OUT:-.}/gpu_results.txt. Needs nvcc and compute-sanitizer on PATH.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-.}
arch=${ARCH:-sm_90}
results="$out/gpu_results.txt"
: > "$results"
variants="CLEAN BUG_NO_BARRIER BUG_SHORT_WAIT BUG_REFILL_STAGE BUG_NO_PREDICATE BUG_EPILOGUE_PREDICATE BUG_EARLY_EXIT BUG_SWIZZLE_MISMATCH BUG_FRAGMENT BUG_NO_SWIZZLE"
sizes_for() {
  case $1 in
    BUG_NO_PREDICATE) echo "72 64 32" ;;
    BUG_EPILOGUE_PREDICATE) echo "64 72 32" ;;
    BUG_EARLY_EXIT) echo "40 64 64" ;;
    *) echo "72 136 96" ;;
  esac
}
for v in $variants; do
  bin="$out/gemm_$v"
  if ! nvcc -O2 -arch="$arch" -lineinfo -D"$v"=1 -I"$root/runtime/cuda" "$here/gemm_gpu_check.cu" -o "$bin" 2> "$out/build_$v.log"; then
    echo "$v build FAILED" >> "$results"
    continue
  fi
  sizes=$(sizes_for "$v")
  plain=$(timeout 60 "$bin" $sizes 2>&1 | tail -1)
  echo "$v plain: $plain" >> "$results"
  for tool in racecheck memcheck synccheck; do
    log="$out/${v}_$tool.log"
    timeout 300 compute-sanitizer --tool "$tool" "$bin" $sizes > "$log" 2>&1
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -2 | tr '\n' ' ')
    echo "$v $tool: $summary" >> "$results"
  done
done
cat "$results"
