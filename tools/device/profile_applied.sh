#!/usr/bin/env bash
# On the GPU machine: `roofscope profile` runs before and after an advice item is applied
# (roofline preset), the runs behind sample_reports/resnet18_bf16_b8{,_cl}_h100 and
# bert_bf16_b8_h100 (docs/performance.md, "Advice checked by applying it"). Each argument is one
# run, `MODEL PRECISION BATCH [roofscope profile options…]`, e.g.
#   bash tools/device/profile_applied.sh "resnet18 bf16 8 --channels-last" "resnet18 bf16 8"
#   bash tools/device/profile_applied.sh "bert bf16 8"
# Runs in order, each with what is left of $BUDGET seconds (default 520), so the first ones are
# the ones that must come back. Needs the .whl folder carried (see setup.sh). Run from the
# repository root. Writes versions.txt, then per run its ncu log, run.json, analytic.json and the
# gzipped export(s) (raw; details too for --preset full), named after the run's slug
# (tools/device/dev1.sh tars them: a call brings back 8 files at most).
. tools/device/setup.sh
export ROOFSCOPE_RUNS_DIR=/tmp/runs ROOFSCOPE_CEILINGS_DIR=/tmp/ceilings
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ncu --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())'
} > "$OUT/versions.txt" 2>&1
# the files' GPU suffix from the GPU itself ("NVIDIA H200" -> h200; the samples' _h100 came
# from an H100): a name must not claim another GPU
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE '[a-z]+[0-9]+' \
  | head -1 | tr 'A-Z' 'a-z')
gpu=${gpu:-gpu}
begin=$(date +%s)
for spec in "$@"; do
  set -- $spec
  model=$1 precision=$2 batch=$3
  shift 3
  left=$(( ${BUDGET:-520} - ($(date +%s) - begin) ))
  [ "$left" -gt 60 ] || { echo "$spec: skipped, $left s left" | tee -a "$OUT/versions.txt"; continue; }
  rm -rf /tmp/runs
  start=$(date +%s)
  # the runner turns SIGTERM into a cancel that stops ncu and the step: logs still come back
  timeout "$left" python3 -m roofscope profile "$model" --precision "$precision" --batch "$batch" \
    "$@" --no-count --no-open --format json > /tmp/summary.json 2> /tmp/profile.stderr
  echo "$spec: roofscope profile exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/versions.txt"
  tail -3 /tmp/profile.stderr
  run=$(ls -d /tmp/runs/*/ | head -1)
  name="$(python3 -c 'import json,sys; from roofscope.profiling.command import RunSpec
print(RunSpec.from_dict(json.load(open(sys.argv[1]))["spec"]).slug)' "$run/run.json")_$gpu"
  cp "$run/ncu.log" "$OUT/$name.ncu-stdout.log"
  cp "$run/run.json" "$OUT/$name.run.json"
  [ -f "$run/analytic.json" ] && cp "$run/analytic.json" "$OUT/$name.analytic.json"
  details=$(ls "$run"/*.ncu-details.csv 2>/dev/null | head -1)
  [ -n "$details" ] && gzip -9 -c "$details" > "$OUT/$name.ncu-details.csv.gz"
  csv=$(ls "$run"/*.ncu-raw.csv 2>/dev/null | head -1)
  if [ -n "$csv" ]; then
    gzip -9 -c "$csv" > "$OUT/$name.ncu-raw.csv.gz"
    python3 -m roofscope report "$csv" --top 8
  fi
  tail -3 "$run/ncu.log"
done
cat "$OUT/versions.txt"
ls -la "$OUT"
