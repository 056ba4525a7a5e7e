#!/usr/bin/env bash
# Builds and runs the CPU benchmark: tlc's sgemm vs OpenBLAS and elementwise
# add vs memcpy, in one process on all cores. OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset so OpenBLAS picks its fastest (AVX-512) kernel;
# an OpenBLAS older than the CPU picks SSE3 ones (the benchmark warns): then
# name the kernel with TLC_BENCH_OPENBLAS_CORETYPE=SkylakeX.
# Usage: bench/run_cpu_bench.sh [build-dir] [tlc_cpu_bench options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift || true
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" -j2 tlc_cpu_bench
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
if [[ -n "${TLC_BENCH_OPENBLAS_CORETYPE:-}" ]]; then
  env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE="$TLC_BENCH_OPENBLAS_CORETYPE" "$build/bench/tlc_cpu_bench" "$@"
else
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$build/bench/tlc_cpu_bench" "$@"
fi
