#!/bin/bash
# Profile bundled models through `roofscope profile` on the GPU machine, one run per argument:
#   bash tools/device/profile_bundled.sh "mlp roofline fp32 128 train" "unet roofline bf16 16 train"
# Run folders go to $OUT/runs; each run's wall time is printed and saved in $OUT/timings.tsv.
source tools/device/setup.sh
export ROOFSCOPE_RUNS_DIR=$OUT/runs ROOFSCOPE_CEILINGS_DIR=$OUT/ceilings
for item in "$@"; do
  read -r model preset precision batch mode <<<"$item"
  start=$(date +%s.%N)
  python3 -m roofscope profile "$model" --preset "$preset" --precision "$precision" \
    --batch "$batch" --mode "$mode" --no-open --format json > "$OUT/summary_${model}_${preset}_${precision}_b${batch}_${mode}.json"
  rc=$?
  end=$(date +%s.%N)
  wall=$(python3 -c "print(round($end - $start, 1))")
  echo -e "$model\t$preset\t$precision\t$batch\t$mode\t$rc\t$wall" | tee -a "$OUT/timings.tsv"
done
python3 -m roofscope runs --format json > "$OUT/runs.json"
python3 -m roofscope runs
