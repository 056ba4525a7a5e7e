#!/bin/bash
# Builds the fp8 and convolution modules lowbit_bench.py times, with `tlc`
# (default: build/bin/tlc), into DIR (default: build-gpu/lowbit, which
# scripts/gpu/prepare.sh's bundle carries to the GPU machine):
#   bench/lowbit/build_modules.sh [DIR] [ARCH]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-gpu/lowbit}
arch=${2:-sm_90a}
tlc=${TLC:-$root/build/bin/tlc}
mkdir -p "$out"
build() {  # build NAME FILE -D ...
  local name=$1 src=$root/examples/$2
  shift 2
  "$tlc" build --target=cuda:$arch "$src" -o "$out/$name.cubin" "$@"
}
# fp8 gemms with dynamic M, N, K (the shapes come from the tensors).
build gemm_fp8 gemm_fp8/gemm_fp8.tl -D out_dtype=bfloat16
build gemm_fp8_blockscale gemm_fp8/gemm_fp8_blockscale.tl
# TileLang's convolution example shape: N128 C128 64x64 F128, 3x3, stride 1, padding 1.
build conv2d_k3 convolution/conv2d_nhwc.tl -D N=128 -D H=64 -D W=64 -D C=128 -D F=128
build conv2d_k1 convolution/conv2d_nhwc.tl -D N=128 -D H=64 -D W=64 -D C=128 -D F=128 -D KH=1 -D KW=1 -D P=0
cp -L "$root"/build/runtime/libtlc_runtime.so "$out/libtlc_runtime.so"
ls "$out"
