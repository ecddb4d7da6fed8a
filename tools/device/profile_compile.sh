#!/usr/bin/env bash
# On the GPU machine: one `roofscope profile MODEL --compile` run (torch.compile'd with Inductor,
# roofline preset), the run behind sample_reports/bert_bf16_b8_compile_h100.ncu-raw.csv.gz:
#   bash tools/device/profile_compile.sh bert bf16 8 [train|infer]
# `--compile` gives ncu --target-processes application-only and the step
# TORCHINDUCTOR_COMPILE_THREADS=1 (ncu following Inductor's compile workers crashes the run).
# Needs the .whl folder carried (see setup.sh). Run from the repository root. Writes 7 files to
# $OUT (a call brings back 8 at most): versions and timings, the summary, stderr, ncu's log, the
# count's log, run.json and the gzipped export.
. tools/device/setup.sh
model=$1 precision=$2 batch=$3 mode=${4:-train}
export ROOFSCOPE_RUNS_DIR=/tmp/runs ROOFSCOPE_CEILINGS_DIR=/tmp/ceilings
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ncu --version | tail -1
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  nproc
} > "$OUT/versions.txt" 2>&1
start=$(date +%s)
# the runner turns SIGTERM into a cancel that stops ncu and the step: logs still come back
timeout 540 python3 -m roofscope profile "$model" --precision "$precision" --batch "$batch" \
  --mode "$mode" --compile --no-open --format json > "$OUT/summary.json" 2> "$OUT/profile.stderr"
echo "roofscope profile exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/versions.txt"
run=$(ls -d /tmp/runs/*/ | head -1)
suffix=$([ "$mode" = infer ] && echo _infer)
name="${model}_${precision}_b${batch}${suffix}_compile_h100"
cp "$run/ncu.log" "$OUT/$name.ncu-stdout.log"
cp "$run/count.log" "$OUT/$name.count.log"
cp "$run/run.json" "$OUT/run.json"
csv=$(ls "$run"/*.ncu-raw.csv 2>/dev/null | head -1)
if [ -n "$csv" ]; then
  gzip -9 -c "$csv" > "$OUT/$name.ncu-raw.csv.gz"
  python3 -m roofscope report "$csv" --top 15
fi
tail -5 "$run/ncu.log"
cat "$OUT/versions.txt"
ls -la "$OUT" "$run"
