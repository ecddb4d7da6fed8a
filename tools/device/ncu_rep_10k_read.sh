#!/usr/bin/env bash
# On the GPU machine, after tools/device/ncu_rep_10k.sh on the same warm machine: wait (at most
# $1 s) for the 10,000-launch report, then read it three ways side by side — ncu --import to
# CSV, roofscope on that CSV, roofscope on the binary — wall time and peak memory of each.
. tools/device/setup.sh
wait_s=${1:-500}
begin=$(date +%s)
while [ ! -e /tmp/big.done ] && [ $(( $(date +%s) - begin )) -lt "$wait_s" ]; do sleep 10; done
[ -e /tmp/big.done ] || { echo "still profiling after $wait_s s: $(ls -la /tmp/big.ncu-rep)"; exit 3; }
echo "profiling exit $(cat /tmp/big.done)"; tail -3 /tmp/big.log; ls -la /tmp/big.ncu-rep
python3 tools/device/timed.py sh -c "ncu --import /tmp/big.ncu-rep --csv --page raw --print-units base > /tmp/big.csv"
rm -rf /tmp/ca /tmp/cb
ROOFSCOPE_CACHE_DIR=/tmp/ca python3 tools/device/timed.py python3 -m roofscope report /tmp/big.csv --format json > /tmp/a.json
( while :; do ps -eo rss=,comm= | awk '/python/ {s += $1} END {print s}'; sleep 0.2; done ) > /tmp/rss.txt &
W=$!
ROOFSCOPE_CACHE_DIR=/tmp/cb python3 tools/device/timed.py python3 -m roofscope report /tmp/big.ncu-rep --format json > /tmp/b.json
kill $W; echo "binary: peak of all python processes together $(sort -n /tmp/rss.txt | tail -1) kB"
python3 -c "
import json
a, b = (json.load(open(f))['reports'][0] for f in ('/tmp/a.json', '/tmp/b.json'))
print('csv', a['launches'], a['time_s'], a['flops']['fp32'], a['bytes']['dram'])
print('rep', b['launches'], b['time_s'], b['flops']['fp32'], b['bytes']['dram'])"
rm -rf /tmp/ca; ROOFSCOPE_CACHE_DIR=/tmp/ca python3 tools/device/timed.py python3 -m roofscope report /tmp/big.csv --format json > /dev/null
rm -rf /tmp/cb; ROOFSCOPE_CACHE_DIR=/tmp/cb python3 tools/device/timed.py python3 -m roofscope report /tmp/big.ncu-rep --format json > /dev/null
python3 tools/device/timed.py sh -c "ncu --import /tmp/big.ncu-rep --csv --page raw --print-units base > /tmp/big.csv"
