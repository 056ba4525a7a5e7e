#!/usr/bin/env bash
# Fuzzes tlc with libFuzzer: the front end (lex, parse, check, lower .tl) and
# the tile IR's text form (parse, verify, print, simplify .tir).
#
#   scripts/fuzz.sh [--target=frontend|tir|all] [--seconds=N] [--corpus=DIR] [BUILD_DIR]
#
# Configures BUILD_DIR (default: build-fuzz) with clang-19, AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer coverage on every library, builds
# the chosen targets (tests/fuzz/frontend_fuzz.cpp, tests/fuzz/tir_fuzz.cpp),
# and runs each for N seconds (default: TLC_FUZZ_SECONDS, else 60). The
# frontend target is seeded with tests/fuzz/corpus/, the examples, the stdlib
# and the negative tests in tests/diagnostics/; the tir target with
# tests/fuzz/tir_corpus/ and every .tir file under tests/. New inputs go to
# a scratch corpus, or to --corpus=DIR (one subdirectory per target) so that a
# long run can be resumed. Exits non-zero on any finding (crash, sanitizer
# report, timeout, memory blow-up); the input that triggered it is left in
# BUILD_DIR/fuzz-artifacts/<target>/.
# Environment: TLC_FUZZ_SECONDS, TLC_FUZZ_JOBS (build parallelism, default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=all
seconds=${TLC_FUZZ_SECONDS:-60}
corpus=
build=$root/build-fuzz
for arg in "$@"; do
  case $arg in
    --target=*) targets=${arg#--target=} ;;
    --seconds=*) seconds=${arg#--seconds=} ;;
    --corpus=*) corpus=${arg#--corpus=} ;;
    -*) echo "fuzz.sh: unknown option $arg" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
case $targets in
  all) targets="frontend tir" ;;
  frontend|tir) ;;
  *) echo "fuzz.sh: --target must be frontend, tir or all, not '$targets'" >&2; exit 2 ;;
esac
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds needs a whole number, not '$seconds'" >&2; exit 2; }

for tool in clang-19 clang++-19 cmake ninja; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool is not installed" >&2; exit 2; }
done

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
  -DTLC_ENABLE_FUZZER=ON -DTLC_ENABLE_CPU_BACKEND=OFF >/dev/null
ninja -C "$build" -j "${TLC_FUZZ_JOBS:-2}" $(for t in $targets; do echo "tlc_${t}_fuzz"; done)

# Without --corpus, new inputs go to a scratch corpus; the seeds in the
# repository stay as they are (libFuzzer reads seed directories recursively).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Imports in fuzz inputs resolve against the real stdlib.
export TLC_STDLIB_PATH=$root/stdlib

for t in $targets; do
  out=${corpus:+$corpus/$t}
  out=${out:-$work/$t}
  artifacts=$build/fuzz-artifacts/$t
  mkdir -p "$out" "$artifacts"
  if [[ $t == frontend ]]; then
    dict=$root/tests/fuzz/tl.dict
    seeds=("$root/tests/fuzz/corpus" "$root/examples" "$root/stdlib" "$root/tests/diagnostics")
  else
    dict=$root/tests/fuzz/tir.dict
    seeds=("$root/tests/fuzz/tir_corpus" "$work/tir_seeds")
    mkdir -p "$work/tir_seeds"
    find "$root/tests" -name '*.tir' -not -path "$root/tests/fuzz/*" -exec cp {} "$work/tir_seeds/" \;
  fi
  "$build/tests/fuzz/tlc_${t}_fuzz" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$out" "${seeds[@]}"
  echo "fuzz.sh: $t: no findings in ${seconds}s"
done
