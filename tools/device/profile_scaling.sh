#!/usr/bin/env bash
# On the GPU machine: profile ResNet-18 training steps at several batch sizes and precisions with
# the roofline sections (the same sections as the batch-8 samples) and export each raw page, for
# roofscope's scaling and compare views. Usage: profile_scaling.sh "resnet18 16 bf16" "resnet18 32 bf16"
# Needs the .whl folder carried (see setup.sh). Run from the repository root.
. tools/device/setup.sh
S=$SECTIONS
for run in "$@"; do
  set -- $run
  name="${1}_${3}_b${2}_h100"
  start=$(date +%s)
  ncu --profile-from-start off $S -f -o "/tmp/$name" \
    python3 tools/device/step.py "$1" "$2" "$3" > "/tmp/$name.ncu-stdout.log" 2>&1
  rc=$?
  echo "$name: profiling took $(( $(date +%s) - start )) s, exit $rc"
  ncu --import "/tmp/$name.ncu-rep" --csv --page raw > "$OUT/$name.ncu-raw.csv"
  tail -3 "/tmp/$name.ncu-stdout.log"
done
ls -la "$OUT"
