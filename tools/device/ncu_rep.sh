#!/usr/bin/env bash
# On the GPU machine (issue 29): binary reports of a bundled model, each beside ncu's own CSV
# export of it, for tests/data/ncurep/; an empty report; and roofscope reading the binaries with
# the ncu_report module of the Nsight Compute install there (no roofscope[ncu-rep] extra).
# Needs the .whl folder carried (see setup.sh). Run from the repository root.
. tools/device/setup.sh
export ROOFSCOPE_RUNS_DIR=/tmp/runs
echo "== the module in the install"; ls -d /opt/nvidia/nsight-compute/*/extras/python; ncu --version | tail -1
python3 -c "import ncu_report" 2>&1 | tail -1  # not importable as such: found beside ncu
for preset in roofline full; do
  start=$(date +%s)
  python3 -m roofscope profile mlp --preset $preset --precision fp32 --batch 128 --mode train \
    --no-open --format json > /tmp/summary_$preset.json 2> /tmp/profile_$preset.log
  echo "mlp $preset: exit $?, $(( $(date +%s) - start )) s"; tail -2 /tmp/profile_$preset.log
  rep=$(ls -t /tmp/runs/*/report.ncu-rep | head -1)
  name=mlp_fp32_b128_${preset}_h100
  cp "$rep" "$OUT/$name.ncu-rep"
  ncu --import "$rep" --csv --page raw --print-units base | gzip -9 > "$OUT/$name.ncu-raw.csv.gz"
  [ $preset = full ] && ncu --import "$rep" --csv --page details | gzip -9 > "$OUT/$name.ncu-details.csv.gz"
done
echo "== an empty report"
ncu --kernel-name does_not_exist -f -o /tmp/empty_h100 python3 -c \
  "import torch; print(torch.ones(8, device='cuda').sum().item())" 2>&1 | tail -3
ls -la /tmp/empty_h100.ncu-rep && cp /tmp/empty_h100.ncu-rep "$OUT/"
echo "== roofscope on the binaries, the install's module found beside ncu"
for f in "$OUT"/*.ncu-rep; do
  python3 tools/device/timed.py python3 -m roofscope report "$f" --format json > "/tmp/$(basename "$f").json" 2> /tmp/err.txt
  echo "$(basename "$f"): exit $?; $(tail -1 /tmp/err.txt)"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['reports'][0]; print(r['launches'], r['time_s'], r['flops'], r['bytes'], d['warnings'][:2])" "/tmp/$(basename "$f").json" 2>&1 | tail -2
done
ls -la "$OUT"
