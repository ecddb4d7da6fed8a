#!/usr/bin/env bash
# On the GPU machine (issue 29), first of two or three calls made back to back: start profiling
# 10,000 launches in a process session of its own (it outlives this call while the machine is
# held), then probe how NVIDIA's reader and roofscope's worker scale on a copy of the report
# as far as it is written; tools/device/ncu_rep_10k_read.sh waits for the end and measures.
. tools/device/setup.sh
M=gpu__time_duration.sum,dram__bytes.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
begin=$(date +%s)
setsid nohup bash -c "ncu --metrics $M --cache-control none --clock-control none \
  --launch-skip 10 --launch-count 10000 -f -o /tmp/big python3 tools/device/launches.py 10000 \
  > /tmp/big.log 2>&1; echo \$? > /tmp/big.done" < /dev/null > /dev/null 2>&1 &
elapsed() { echo $(( $(date +%s) - begin )); }
while [ "$(elapsed)" -lt 240 ]; do sleep 30; echo "$(elapsed) s: $(ls -la /tmp/big* 2>&1 | tr '\n' ' ')"; done
find /tmp -newer tools/device/setup.sh -name '*.ncu-rep*' -size +1M 2>/dev/null | head
cp /tmp/big.ncu-rep /tmp/part.ncu-rep && ls -la /tmp/part.ncu-rep
PYTHONPATH=$PYTHONPATH:$(ls -d /opt/nvidia/nsight-compute/*/extras/python | head -1) \
  timeout 120 python3 tools/device/ncu_rep_probe.py /tmp/part.ncu-rep
rm -rf /tmp/cp; ROOFSCOPE_CACHE_DIR=/tmp/cp timeout 150 python3 tools/device/timed.py \
  python3 -m roofscope report /tmp/part.ncu-rep --format json > /tmp/p.json
while [ "$(elapsed)" -lt 570 ]; do sleep 20; echo "$(elapsed) s: $(ls -la /tmp/big.ncu-rep)"; done
tail -2 /tmp/big.log
