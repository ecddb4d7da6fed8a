#!/usr/bin/env bash
# On the GPU machine (issue 29): a report of up to 10,000 launches with one metric (one pass,
# the fastest ncu profiles), stopped at $1 s, then read side by side: ncu --import to CSV,
# roofscope on that CSV, roofscope on the binary (peak of all its processes; a crash of the
# worker shows as a warning in the JSON and a fall back to ncu --import), the worker alone.
. tools/device/setup.sh
start=$(date +%s)
timeout "${1:-300}" ncu --metrics gpu__time_duration.sum --cache-control none --clock-control none \
  --launch-skip 10 --launch-count 10000 -f -o /tmp/one python3 tools/device/launches.py 10000 > /tmp/one.log 2>&1
echo "profiling: exit $?, $(( $(date +%s) - start )) s"; tail -1 /tmp/one.log; ls -la /tmp/one.ncu-rep
python3 tools/device/timed.py sh -c "ncu --import /tmp/one.ncu-rep --csv --page raw --print-units base > /tmp/one.csv"
ROOFSCOPE_CACHE_DIR=/tmp/ca python3 tools/device/timed.py python3 -m roofscope report /tmp/one.csv --format json > /tmp/a.json
( while :; do ps -eo rss=,comm= | awk '/python/ {s += $1} END {print s}'; sleep 0.2; done ) > /tmp/rss.txt &
W=$!
ROOFSCOPE_CACHE_DIR=/tmp/cb python3 tools/device/timed.py python3 -m roofscope report /tmp/one.ncu-rep --format json > /tmp/b.json 2> /tmp/b.err; cat /tmp/b.err
kill $W; echo "binary: peak of all python processes together $(sort -n /tmp/rss.txt | tail -1) kB"
python3 -c "
import json
a, b = (json.load(open(f))['reports'][0] for f in ('/tmp/a.json', '/tmp/b.json'))
print('csv', a['launches'], a['time_s'])
print('rep', b['launches'], b['time_s'], b['warnings'])"
export PYTHONPATH=$PYTHONPATH:$(ls -d /opt/nvidia/nsight-compute/*/extras/python | head -1)
mkdir -p /tmp/w
echo "the worker alone:"; PYTHONFAULTHANDLER=1 timeout 90 python3 tools/device/timed.py \
  python3 -m roofscope.ingest.ncu.report_worker /tmp/one.ncu-rep /tmp/w
