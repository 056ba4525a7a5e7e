#!/bin/bash
# Runs examples/host_app on a CUDA GPU, in two steps:
#   examples/host_app/gpu.sh prepare TLC DIR   on the build machine: builds the
#       gemm and softmax kernels for cpu and cuda:$ARCH (default sm_90) with
#       `TLC build --header --embed` into DIR (inside the repository, so that it
#       travels with the working tree), plus the JSON headers the runtime needs.
#   examples/host_app/gpu.sh run DIR            on the GPU machine: compiles the
#       runtime and host_app with g++ and the CUDA toolkit, and runs it on the
#       GPU (sizes the tiles divide and sizes they do not).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:?usage: gpu.sh prepare TLC DIR | gpu.sh run DIR}
arch=${ARCH:-sm_90}
if [ "$mode" = prepare ]; then
  tlc=$(realpath "$2"); dir=$(realpath -m "$3")
  mkdir -p "$dir/gen" "$dir/include"
  for ex in gemm softmax; do
    defines="-D dtype=float32"
    [ $ex = gemm ] && defines="$defines -D block_M=64 -D block_N=64 -D block_K=32"
    "$tlc" build "$root/examples/$ex/$ex.tl" --target=cpu $defines -o "$dir/gen/$ex.so" \
      --header "$dir/gen/$ex.h" --embed "$dir/gen/${ex}_embed.c"
    "$tlc" build "$root/examples/$ex/$ex.tl" --target=cuda:$arch -D dtype=float32 -o "$dir/gen/${ex}_cuda_$arch.cubin" \
      --header "$dir/gen/${ex}_cuda_$arch.h" --embed "$dir/gen/${ex}_cuda_${arch}_embed.c"
  done
  cp -r /usr/include/nlohmann "$dir/include/"
  echo "prepared $dir"
  exit 0
fi
dir=$(realpath "$2")
cuda=$(ls -d /usr/local/cuda* 2>/dev/null | sort -V | tail -1)
b=$(mktemp -d)
g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -I"$root/runtime/include" -I"$dir/include" \
  "$root"/runtime/{api,check_args,cpu_module,device_module,metadata_reader}.cpp -o "$b/libtlc_runtime.so" -ldl
for f in "$dir"/gen/*_embed.c; do
  gcc -std=c99 -O1 -c -I"$root/runtime/include" -I"$dir/gen" "$f" -o "$b/$(basename "$f" .c).o"
done
g++ -std=c++17 -O2 -I"$root/runtime/include" -I"$dir/gen" -I"$cuda/include" -DHOST_APP_WITH_CUDA=1 \
  -DGEMM_CUDA_MODULE=gemm_cuda_${arch}_module -DSOFTMAX_CUDA_MODULE=softmax_cuda_${arch}_module \
  "-DGEMM_CUDA_HEADER=\"gemm_cuda_$arch.h\"" "-DSOFTMAX_CUDA_HEADER=\"softmax_cuda_$arch.h\"" \
  "$here/main.cpp" "$b"/*_embed.o -o "$b/host_app" -L"$b" -ltlc_runtime -L"$cuda/lib64" -lcudart \
  -Wl,-rpath,"$b" -Wl,-rpath,"$cuda/lib64"
"$b/host_app" --target cuda
"$b/host_app" --target cuda 1024 1024 1024
"$b/host_app" --target cuda 1000 333 77
