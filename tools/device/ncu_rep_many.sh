#!/usr/bin/env bash
# On the GPU machine (issue 29): a report of up to 10,000 launches with three metrics and no
# cache or clock control (the fewest passes), then read three ways side by side: ncu --import
# to CSV, roofscope on that CSV, roofscope on the binary; wall time and peak memory of each.
. tools/device/setup.sh
M=gpu__time_duration.sum,dram__bytes.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
start=$(date +%s)
timeout 330 ncu --metrics $M --cache-control none --clock-control none --launch-skip 10 \
  --launch-count 10000 -f -o /tmp/many python3 tools/device/launches.py 10000 > /tmp/many.log 2>&1
echo "profiling: exit $?, $(( $(date +%s) - start )) s"; tail -1 /tmp/many.log; ls -la /tmp/many.ncu-rep
python3 tools/device/timed.py sh -c "ncu --import /tmp/many.ncu-rep --csv --page raw --print-units base > /tmp/many.csv"
ROOFSCOPE_CACHE_DIR=/tmp/ca python3 tools/device/timed.py python3 -m roofscope report /tmp/many.csv --format json > /tmp/a.json
ROOFSCOPE_CACHE_DIR=/tmp/cb python3 tools/device/timed.py python3 -m roofscope report /tmp/many.ncu-rep --format json > /tmp/b.json
( while :; do ps -eo rss=,comm= | awk '/python/ {s += $1} END {print s}'; sleep 0.2; done ) > /tmp/rss.txt &
W=$!
rm -rf /tmp/cb; ROOFSCOPE_CACHE_DIR=/tmp/cb python3 -m roofscope report /tmp/many.ncu-rep --format json > /dev/null
kill $W; echo "binary again: peak of all python processes together $(sort -n /tmp/rss.txt | tail -1) kB"
python3 -c "
import json
a, b = (json.load(open(f))['reports'][0] for f in ('/tmp/a.json', '/tmp/b.json'))
print('csv', a['launches'], a['time_s'], a['flops']['fp32'], a['bytes']['dram'])
print('rep', b['launches'], b['time_s'], b['flops']['fp32'], b['bytes']['dram'])"
