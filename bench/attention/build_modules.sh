#!/bin/bash
# Builds the flash-attention modules attention_bench.py times, with `tlc`
# (default: build/bin/tlc), into DIR (default: build-gpu/attention, which
# scripts/gpu/prepare.sh's bundle carries to the GPU machine):
#   bench/attention/build_modules.sh [DIR] [ARCH]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-gpu/attention}
arch=${2:-sm_90a}
tlc=${TLC:-$root/build/bin/tlc}
mkdir -p "$out"
src=$root/examples/flash_attention/mha_fwd_bshd.tl
build() {  # build NAME -D ...
  local name=$1
  shift
  "$tlc" build --target=cuda:$arch "$src" -o "$out/$name.cubin" "$@"
}
common="-D B=8 -D S=4096 -D H=32"
build d128 $common -D D=128
build d128_causal $common -D D=128 -D causal=True
build d64 $common -D D=64
build d128_bf16 $common -D D=128 -D dtype=bfloat16
build d128_gqa4 $common -D D=128 -D groups=4
build d256 $common -D D=256
cp -L "$root"/build/runtime/libtlc_runtime.so "$out/libtlc_runtime.so"
ls "$out"
