#!/usr/bin/env bash
# On the GPU machine, before `roofscope profile --compile` runs: compile each model once, all
# in parallel and without ncu, so Inductor's FX-graph and Triton caches are warm. Under ncu a
# compile run has one compile thread (profiling/command.py COMPILE_ENV) and takes 70-190 s on
# an H200 compiling; with the caches warm it loads what was compiled. Nothing here is
# measured: the profiled runs come after, one at a time.
#   bash tools/device/warm_compile.sh bf16 8 resnet50 vgg11 ...
# Needs setup.sh sourced (PYTHONPATH). Prints each model's exit status and the seconds taken.
set -u
precision=$1 batch=$2
shift 2
start=$(date +%s)
for model in "$@"; do
  python3 -m roofscope.profiling.step "$model" --batch "$batch" --precision "$precision" \
    --compile --warmup 2 --steps 1 > "/tmp/warm_$model.log" 2>&1 &
done
for model in "$@"; do
  wait -n
done
wait
for model in "$@"; do
  echo "warm $model: $(tail -1 /tmp/warm_$model.log | cut -c1-120)"
done
echo "warmed $# models in $(( $(date +%s) - start )) s"
