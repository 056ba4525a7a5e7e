#!/bin/bash
# Prepares what a GPU run needs, on the build machine: builds tlc_cuda_runner
# (tools/tlc_cuda_runner.cpp: front end + CUDA backend + interpreter, no LLVM)
# and a `tlc` without the CPU backend (so without LLVM: `tlc tune`, `tlc run`
# and `tlc build` for CUDA targets), and bundles them, stripped,
# with the shared libraries they need that a GPU host may lack, into
# build-gpu/ at the repository root (ignored by git; carry it to the GPU host).
#
#   scripts/gpu/prepare.sh [BUILD_DIR]     (default: build-cuda)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-cuda}
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja -DTLC_ENABLE_CPU_BACKEND=OFF >/dev/null
ninja -C "$build" -j2 tlc_cuda_runner tlc
out=$root/build-gpu
rm -rf "$out"
mkdir -p "$out/lib"
runner=$(find "$build" -name tlc_cuda_runner -type f -perm -u+x | head -1)
cp "$runner" "$out/tlc_cuda_runner"
cp "$build/bin/tlc" "$out/tlc"
strip "$out/tlc_cuda_runner" "$out/tlc"
if ldd "$out/tlc" | grep -q libLLVM; then
  echo "prepare.sh: $build links LLVM; configure it with -DTLC_ENABLE_CPU_BACKEND=OFF" >&2
  exit 1
fi
# Bundle the non-system C++ libraries (fmt, libstdc++) the binaries link.
ldd "$runner" "$out/tlc" | awk '/=>/ {print $3}' | grep -E 'libfmt|libstdc\+\+|libgcc_s' | sort -u |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
# Random programs for the GPU (docs/difftest.md), from the regular build's
# tlc_difftest when there is one (TLC_DIFFTEST overrides its path).
difftest=${TLC_DIFFTEST:-$root/build/bin/tlc_difftest}
if [ -x "$difftest" ]; then
  "$difftest" --write-only --seed "${DIFFTEST_SEED:-1}" --count "${DIFFTEST_COUNT:-300}" --out-dir "$out/difftest"
fi
# The flash-attention modules the benchmark times (section 5 of
# run_checks.sh), built by the regular build's tlc when there is one.
if [ -x "$root/build/bin/tlc" ] && [ -f "$root/build/runtime/libtlc_runtime.so" ]; then
  "$root/bench/attention/build_modules.sh" "$out/attention" >/dev/null
fi
# The modules of scripts/gpu/python_check.py (the Python package on torch
# CUDA tensors), with the runtime library it loads them through.
if [ -x "$root/build/bin/tlc" ] && [ -f "$root/build/runtime/libtlc_runtime.so" ]; then
  mkdir -p "$out/python"
  tlc=$root/build/bin/tlc
  "$tlc" build --target=cuda:sm_90a "$root/examples/gemm/gemm.tl" -o "$out/python/gemm_f16.cubin"
  "$tlc" build --target=cuda:sm_90a "$root/examples/gemm/gemm.tl" -D dtype=bfloat16 -o "$out/python/gemm_bf16.cubin"
  "$tlc" build --target=cuda:sm_90a "$root/examples/softmax/softmax.tl" -o "$out/python/softmax_f16.cubin"
  cp -L "$root/build/runtime/libtlc_runtime.so" "$out/python/libtlc_runtime.so"
  # The fp8 and convolution modules zoo_bench.sh times against torch
  # (bench/lowbit/lowbit_bench.py): fp8 gemms for runtime M, N, K, and
  # TileLang's convolution example shape (N128 C128 64x64 F128, 3x3 and 1x1).
  mkdir -p "$out/lowbit"
  ex=$root/examples
  conv="$ex/convolution/conv2d_nhwc.tl -D N=128 -D H=64 -D W=64 -D C=128 -D F=128"
  "$tlc" build --target=cuda:sm_90a "$ex/gemm_fp8/gemm_fp8.tl" -D out_dtype=bfloat16 -o "$out/lowbit/gemm_fp8.cubin"
  "$tlc" build --target=cuda:sm_90a "$ex/gemm_fp8/gemm_fp8_blockscale.tl" -o "$out/lowbit/gemm_fp8_blockscale.cubin"
  "$tlc" build --target=cuda:sm_90a $conv -o "$out/lowbit/conv2d_k3.cubin"
  "$tlc" build --target=cuda:sm_90a $conv -D KH=1 -D KW=1 -D P=0 -o "$out/lowbit/conv2d_k1.cubin"
  # Other tiles of the convolution, timed beside the defaults.
  for v in "s3:-D stages=3" "s5:-D stages=5" "bk128_s3:-D block_K=128 -D stages=3" \
           "m128_bk64_s4:-D block_M=128 -D threads=256" "bk32_s4:-D block_K=32"; do
    "$tlc" build --target=cuda:sm_90a $conv ${v#*:} -o "$out/lowbit/conv2d_k3_${v%%:*}.cubin"
  done
  "$tlc" build --target=cuda:sm_90a $conv -D KH=1 -D KW=1 -D P=0 -D block_M=128 -D threads=256 \
    -o "$out/lowbit/conv2d_k1_m128_bk64_s4.cubin"
  cp -L "$root/build/runtime/libtlc_runtime.so" "$out/lowbit/libtlc_runtime.so"
fi
du -sh "$out"
