#!/usr/bin/env bash
# Sets up tlc on Debian 12 (packages, build) and runs the demo: the tile GEMM
# example compiled for this machine's CPU, checked against the reference
# interpreter and timed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
tlc="${BUILD_DIR:-$root/build}/bin/tlc"
set -x
"$tlc" check "$root/examples/gemm/gemm.tl"
"$tlc" run "$root/examples/gemm/gemm.tl" --target=cpu -D M=1024 -D N=1024 -D K=1024 \
  -D dtype=float32 --check --bench
