#!/usr/bin/env bash
# Fuzzes the front end (lex, parse, check, lower) with libFuzzer.
#
#   scripts/fuzz.sh [BUILD_DIR]
#
# Configures BUILD_DIR (default: build-fuzz) with clang-19, AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer coverage on every library, builds
# the target tests/fuzz/frontend_fuzz.cpp, and runs it for TLC_FUZZ_SECONDS
# (default 60) seeded with tests/fuzz/corpus/, the examples, the stdlib and the
# negative tests in tests/diagnostics/ (new inputs go to a scratch corpus). Exits
# non-zero on any finding (crash, sanitizer report, timeout, memory blow-up);
# the input that triggered it is left in BUILD_DIR/fuzz-artifacts/.
# Environment: TLC_FUZZ_SECONDS, TLC_FUZZ_JOBS (build parallelism, default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-fuzz}
seconds=${TLC_FUZZ_SECONDS:-60}

for tool in clang-19 clang++-19 cmake ninja; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool is not installed" >&2; exit 2; }
done

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
  -DTLC_ENABLE_FUZZER=ON -DTLC_ENABLE_CPU_BACKEND=OFF >/dev/null
ninja -C "$build" -j "${TLC_FUZZ_JOBS:-2}" tlc_frontend_fuzz

# New inputs go to a scratch corpus; the seeds in the repository stay as they are
# (libFuzzer reads seed directories recursively).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Imports in fuzz inputs resolve against the real stdlib.
export TLC_STDLIB_PATH=$root/stdlib

"$build/tests/fuzz/tlc_frontend_fuzz" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -dict="$root/tests/fuzz/tl.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$work" "$root/tests/fuzz/corpus" "$root/examples" "$root/stdlib" "$root/tests/diagnostics"
echo "fuzz.sh: no findings in ${seconds}s"
