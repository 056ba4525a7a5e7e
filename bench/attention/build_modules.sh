#!/bin/bash
# Builds the flash-attention modules attention_bench.py times, and in DIR/mla
# the MLA decode modules mla_bench.py times, with `tlc` (default:
# build/bin/tlc), into DIR (default: build-gpu/attention, which
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
# MLA decode at DeepSeek's sizes (128 query heads, one latent head), 132
# sequences of 8192 keys: the example's 32-key tiles, and 64-key tiles (which
# fit sm_90a's shared memory, not sm_80's).
mkdir -p "$out/mla"
mla=$root/examples/deepseek_mla/mla_decode.tl
"$tlc" build --target=cuda:$arch "$mla" -o "$out/mla/b132_kv8192_n32.cubin" -D batch=132 -D seqlen_kv=8192
if [ "$arch" = sm_90a ]; then
  "$tlc" build --target=cuda:$arch "$mla" -o "$out/mla/b132_kv8192_n64.cubin" -D batch=132 -D seqlen_kv=8192 -D block_N=64
  "$tlc" build --target=cuda:$arch "$mla" -o "$out/mla/b132_kv8192_n64_split2.cubin" -D batch=132 -D seqlen_kv=8192 \
    -D block_N=64 -D num_split=2
fi
cp -L "$root"/build/runtime/libtlc_runtime.so "$out/libtlc_runtime.so"
ls "$out"
