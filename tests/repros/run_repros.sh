#!/usr/bin/env bash
# Re-runs every reproducer of tests/repros/README.md and checks its outcome.
#   TLC=path/to/tlc [CC=cc] [CXX=c++] tests/repros/run_repros.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tlc=${TLC:?set TLC to the tlc binary}
cc=${CC:-cc}
cxx=${CXX:-c++}
inc=$root/runtime/include
add=$root/examples/elementwise_add/add.tl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TLC_CACHE_DIR=$work/cache
passed=0
failed=0

# expect LABEL WANT_RC [PATTERN] -- COMMAND...: the command exits with WANT_RC
# within the time limit, prints PATTERN (an extended regex) when given, and
# prints nothing that only a crash or an internal error prints.
expect() {
  local label=$1 want=$2 pattern=""
  shift 2
  if [ "$1" != "--" ]; then pattern=$1; shift; fi
  shift
  timeout 120 "$@" >"$work/out" 2>&1
  local rc=$?
  local why=""
  if [ $rc -eq 124 ]; then why="timed out"
  elif [ $rc -ne "$want" ]; then why="exit $rc, expected $want"
  elif grep -a -q -E 'LLVM ERROR|internal compiler error|AddressSanitizer|double free|Segmentation|terminate called' "$work/out"; then
    why="crash or internal-error text in the output"
  elif [ -n "$pattern" ] && ! grep -a -q -E "$pattern" "$work/out"; then why="no line matches /$pattern/"
  fi
  if [ -z "$why" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL [$label]: $why"
    sed -n 1,12p "$work/out" | sed 's/^/    /'
  fi
}

cd "$here"
# 1. Long straight-line code and long operand chains.
python3 - "$work" <<'PY'
import sys
w = sys.argv[1]
with open(f"{w}/lets.tl", "w") as f:
    f.write("def k[N=64](A: Tensor[(N,), float32], B: Tensor[(N,), float32]):\n")
    f.write("    with T.Kernel(1, threads=64) as bx:\n        for i in T.Parallel(N):\n            x0 = A[i]\n")
    for i in range(1, 11000):
        f.write(f"            x{i} = x{i-1} * 0.5 + 1.0\n")
    f.write("            B[i] = x10999\n")
with open(f"{w}/chain.tir", "w") as f:
    f.write("func @f(A: float32[4]) {\n  kernel grid(1) threads(32) as (b) {\n    A[0] = " +
            " + ".join(["A[0]"] * 20000) + "\n  }\n}\n")
PY
