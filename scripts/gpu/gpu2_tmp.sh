#!/bin/bash
export LD_LIBRARY_PATH=build-gpu/lib TLC_STDLIB_PATH=$PWD/stdlib
r=build-gpu/tlc_cuda_runner
OUT=$OUT timeout 300 scripts/gpu/run_checks.sh build-gpu difftest > $OUT/difftest.txt 2>&1; echo "difftest rc=$?"; grep -E "FAIL|programs" $OUT/gpu_results.md
for d in "--dim T_=1000 --dim B1=2 --dim H=2" "--dim T_=129 --dim B1=2 --dim H=3" "--dim T_=1 --dim B1=2 --dim H=2"; do
  $r examples/flash_attention/mha_fwd_varlen.tl --arch sm_90a --check --seed 7 $d 2>&1 | grep -E "^check"; done
timeout 100 bash scripts/gpu/varlen_check.sh build-gpu 2>&1 | tail -5
for k in running_sum gemm_row_gather gemm_column_gather; do
  $r tests/cuda_emu_examples/pipelined_bodies.tl --kernel $k --arch sm_90a --check --dim M=333 --dim N=517 --dim K=251 --dim R=400 2>&1 | grep -E "^check|error" | head -3; done
