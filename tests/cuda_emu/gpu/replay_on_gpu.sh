#!/usr/bin/env bash
# Repeats every launch recorded in replay bundles (written by the emulator
# with TLC_EMU_REPLAY_DIR / LaunchOptions::replayDir) on a GPU and compares
# the GPU's outputs with the emulator's. Usage: replay_on_gpu.sh BUNDLES_DIR
# Needs nvcc (and the driver) on PATH; ARCH (default sm_90).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bundles=$1
out=${OUT:-.}
arch=${ARCH:-sm_90}
nvcc -O2 "$here/replay_launcher.cu" -o "$out/replay_launcher" -lcuda || exit 2
status=0
for d in "$bundles"/*/; do
  d=${d%/}
  if ! nvcc -cubin -arch="$arch" -I"$root/runtime/cuda" "$d/kernel.cu" -o "$out/$(basename "$d").cubin" 2> "$out/$(basename "$d").build.log"; then
    echo "$d: BUILD FAILED"; status=1; continue
  fi
  "$out/replay_launcher" "$d" "$out/$(basename "$d").cubin" || status=1
done
exit $status
