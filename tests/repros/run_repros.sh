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
expect lets-cpu 0 -- "$tlc" run --target=cpu "$work/lets.tl"
expect lets-check 0 -- "$tlc" check "$work/lets.tl"
expect tir-chain 1 'ir-nesting-too-deep' -- "$tlc" emit --stage=tir "$work/chain.tir"

# 2. Shapes past int32.
for m in 2147483648 99999999999 4294967296; do
  expect "M=$m" 1 'out-of-range' -- "$tlc" check "$add" -D M=$m -D N=64
done
expect M=int32max 0 -- "$tlc" check "$add" -D M=2147483647 -D N=64

# 3. Large tiles on the CPU.
expect big-fragment 0 -- "$tlc" run --target=cpu --check big_fragment_cpu.tl
expect block_M-32768 0 -- "$tlc" run --target=cpu --check "$add" -D block_M=32768 -D M=64 -D N=64

# 4. Tile-op dtypes and aliasing: errors at the call.
for f in atomic_float8 atomic_int8 gemm_f16_into_int32 gemm_alias; do
  expect "$f" 1 'error:' -- "$tlc" check $f.tl
done

# 5. .tir the verifier must reject.
for f in tir_*.tir; do
  expect "$f-cpu" 1 'error:' -- "$tlc" run --target=cpu "$f"
  expect "$f-cuda" 1 'error:' -- "$tlc" build --target=cuda:sm_80 "$f" -o "$work/x.cubin"
done

# 6. Injection through quoted .tir names.
expect inject-header 0 -- "$tlc" build --target=cpu inject_header.tir -o "$work/i.so" --header "$work/i.h"
printf '#include "i.h"\nint main(void){return 0;}\n' >"$work/m.c"
expect inject-header-cc 0 -- "$cc" -std=c99 -Wall -Werror -I"$inc" -I"$work" -c "$work/m.c" -o "$work/m.o"
expect inject-cuda 0 -- "$tlc" emit --stage=cuda inject_cuda.tir
n=$(grep -a -c '__global__' "$work/out")
if [ "$n" -ne 1 ]; then failed=$((failed + 1)); echo "FAIL [inject-cuda]: $n __global__ functions"; else passed=$((passed + 1)); fi

# 7. Names that collide with C, C++ and CUDA.
for f in header_param_int header_dim_module; do
  expect "$f" 0 -- "$tlc" build --target=cpu $f.tl -o "$work/$f.so" --header "$work/$f.h"
  printf '#include "%s.h"\nint main(void){return 0;}\n' $f >"$work/m.c"
  expect "$f-c99" 0 -- "$cc" -std=c99 -Wall -Werror -I"$inc" -I"$work" -c "$work/m.c" -o "$work/m.o"
  cp "$work/m.c" "$work/m.cpp"
  expect "$f-c++17" 0 -- "$cxx" -std=c++17 -Wall -Werror -I"$inc" -I"$work" -c "$work/m.cpp" -o "$work/m.o"
done
expect cuda-xor 0 -- "$tlc" build --target=cuda:sm_80 cuda_loopvar_xor.tl -o "$work/x.cubin"
expect cuda-NULL 0 -- "$tlc" build --target=cuda:sm_80 cuda_shared_NULL.tl -o "$work/x.cubin"
expect quote-filename 0 -- "$tlc" build --target=cuda:sm_80 'quote"name.tl' -o "$work/x.cubin"

# 8-9. Swizzle arithmetic, NaN and out-of-range casts agree across targets.
expect swizzle 0 -- "$tlc" run --target=cuda:sm_80 --emulate --check swizzle_overflow.tl
for f in reduce_max_nan float_to_int_out_of_range; do
  expect "$f-cpu" 0 -- "$tlc" run --target=cpu --check $f.tl
  expect "$f-emu" 0 -- "$tlc" run --target=cuda:sm_80 --emulate --check $f.tl
done

# 11. Out-of-bounds stores on the CPU.
expect cpu-oob 1 'out-of-bounds' -- "$tlc" run --target=cpu --check cpu_oob_store.tl
expect cpu-oob-bounds 1 'out-of-bounds' -- "$tlc" run --target=cpu --check-bounds cpu_oob_store.tl

# 14-15. The command line and macros.
mkdir -p "$work/dir"
expect dir-input 1 -- "$tlc" build "$work/dir" --target=cpu -o "$work/d.so"
expect dev-zero 1 -- "$tlc" check /dev/zero
cp "$add" "$work/in.tl"
expect o-is-input 2 -- "$tlc" build "$work/in.tl" --target=cpu -o "$work/in.tl"
cmp -s "$add" "$work/in.tl" || { failed=$((failed + 1)); echo "FAIL [o-is-input]: the source was overwritten"; }
expect no-sse 2 -- "$tlc" run "$add" --dim M=4 --dim N=4 --features=-sse
expect i386 2 -- "$tlc" run "$add" --dim M=4 --dim N=4 --cpu=i386
expect macro-chain65 1 'deeper than 64' -- "$tlc" check macro_chain65.tl
expect macro-timeout 1 -- "$tlc" check fuzz_timeout_macro.tl

echo "repros: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
