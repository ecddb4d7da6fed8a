#!/usr/bin/env bash
# On the GPU machine: profile a ResNet-18 bf16 training step with the roofline sections (the
# same sections as the fp32 sample), export its raw page, and run roofscope on the binary
# .ncu-rep through the real ncu (the conversion path users on GPU nodes take).
# Needs the .whl folder carried (see setup.sh). Run from the repository root.
. tools/device/setup.sh
S=$SECTIONS
start=$(date +%s)
ncu --profile-from-start off $S -f -o /tmp/resnet18_bf16 \
  python3 tools/device/step.py resnet18 8 bf16 > "$OUT/resnet18_bf16.ncu-stdout.log" 2>&1
echo "profiling took $(( $(date +%s) - start )) s"
ncu --import /tmp/resnet18_bf16.ncu-rep --csv --page raw > "$OUT/resnet18_bf16_h100.ncu-raw.csv"
python3 -m roofscope report /tmp/resnet18_bf16.ncu-rep --format json > "$OUT/report_from_ncu_rep.json"
echo "roofscope exit: $?"
python3 -m roofscope report "$OUT/resnet18_bf16_h100.ncu-raw.csv" --top 12
ls -la "$OUT" /tmp/resnet18_bf16.ncu-rep
