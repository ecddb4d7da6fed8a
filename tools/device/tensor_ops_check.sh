#!/usr/bin/env bash
# On the GPU machine: profile one known GEMM per dtype and keep the raw CSVs in $OUT.
# Settles whether sm__ops_path_tensor_*.sum counts 2 ops per FMA (expected sum = 2·N³) and
# what the .peak_sustained rate is per SM per cycle. Run from the repository root.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
N=${N:-4096}
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,\
sm__inst_executed_pipe_tensor.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,\
sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,\
sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained,sm__ops_path_tensor_src_fp16.sum.peak_sustained,\
sm__ops_path_tensor_src_tf32_dst_fp32.sum.peak_sustained,\
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,\
smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,\
smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,dram__bytes.sum,device__attribute_display_name
ncu --version > "$OUT/versions.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$OUT/versions.txt" 2>&1
for dt in bf16 fp16 tf32 fp32; do
  ncu --profile-from-start off --csv --page raw --print-units base --metrics "$M" \
      python3 tools/device/gemm.py "$dt" "$N" > "$OUT/gemm_${dt}_${N}.raw.csv" 2>&1
done
ls -la "$OUT"
