#!/usr/bin/env bash
# Installs everything tlc needs to build and test on Debian 12. Idempotent:
# packages already present are left alone. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3
  libcli11-dev libfmt-dev nlohmann-json3-dev doctest-dev
  llvm-19-dev clang-19 lld-19 libclang-rt-19-dev llvm-19
  # The HIP backend (docs/hip-backend.md): hiprtc for gfx90a, the HIP headers
  # and ROCm device libraries for clang-19's gfx942 builds. tlc builds without
  # them; its HIP tests skip.
  libamdhip64-dev libhiprtc-builtins5 libamd-comgr-dev rocm-device-libs
  libopenblas-dev
  python3-numpy python3-venv python3-pip python3-setuptools
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
