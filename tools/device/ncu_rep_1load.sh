#!/usr/bin/env bash
# On the GPU machine (issue 29): the worker that loads a report once per process, on a report of
# 10,000 launches of one metric (one pass, about a minute to profile). Read side by side: ncu
# --import to CSV, roofscope on that CSV, roofscope on the binary with Nsight Compute's own
# module (peak of all its processes), the same with PyPI's ncu-report (carry .whl-ncu/ncu_report.tar.xz: its
# package folder), then a
# full-set report of the repository through both modules. Same totals asked each way.
. tools/device/setup.sh
NSIGHT=$(ls -d /opt/nvidia/nsight-compute/*/extras/python | tail -1)
echo "Nsight module: $NSIGHT"; which gdb || true
if [ -e .whl-ncu/ncu_report.tar.xz ]; then  # the PyPI wheel's package, xz-compressed to fit the carry
  mkdir -p /tmp/ncusite && tar xJf .whl-ncu/ncu_report.tar.xz -C /tmp/ncusite
fi
start=$(date +%s)
timeout "${1:-240}" ncu --metrics gpu__time_duration.sum --cache-control none --clock-control none \
  --launch-skip 10 --launch-count 10000 -f -o /tmp/one python3 tools/device/launches.py 10000 > /tmp/one.log 2>&1
echo "profiling: exit $?, $(( $(date +%s) - start )) s"; tail -1 /tmp/one.log; ls -la /tmp/one.ncu-rep
totals() { python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))['reports'][0]
print(sys.argv[1], r['launches'], r['time_s'], r['flops']['fp32'], r['bytes']['dram'], r.get('warnings'))" "$1"; }
peak() { ( while :; do ps -eo rss=,comm= | awk '/python/ {s += $1} END {print s}'; sleep 0.2; done ) > /tmp/rss.txt & W=$!; }
for round in 1 2; do
  echo "== round $round"
  python3 tools/device/timed.py sh -c "ncu --import /tmp/one.ncu-rep --csv --page raw --print-units base > /tmp/one.csv"
  rm -rf /tmp/ca /tmp/cb /tmp/cc
  ROOFSCOPE_CACHE_DIR=/tmp/ca python3 tools/device/timed.py python3 -m roofscope report /tmp/one.csv --format json > /tmp/a.json
  peak
  PYTHONFAULTHANDLER=1 ROOFSCOPE_CACHE_DIR=/tmp/cb python3 tools/device/timed.py python3 -m roofscope report /tmp/one.ncu-rep --format json > /tmp/b.json
  kill $W; echo "binary (Nsight module): all python processes together, peak $(sort -n /tmp/rss.txt | tail -1) kB"
  if [ -d /tmp/ncusite ]; then
    peak
    PYTHONPATH=/tmp/ncusite:$PYTHONPATH ROOFSCOPE_CACHE_DIR=/tmp/cc python3 tools/device/timed.py python3 -m roofscope report /tmp/one.ncu-rep --format json > /tmp/c.json
    kill $W; echo "binary (PyPI module): all python processes together, peak $(sort -n /tmp/rss.txt | tail -1) kB"
    totals /tmp/c.json
  fi
  totals /tmp/a.json; totals /tmp/b.json
done
echo "== the worker alone, Nsight module"
mkdir -p /tmp/w; PYTHONFAULTHANDLER=1 PYTHONPATH=$PYTHONPATH:$NSIGHT python3 tools/device/timed.py \
  python3 -m roofscope.ingest.ncu.report_worker /tmp/one.ncu-rep /tmp/w; ls -la /tmp/w
echo "== full-set reports of the repository, both modules"
for f in tests/data/ncurep/*.ncu-rep.gz; do
  base=/tmp/$(basename "$f" .gz); gzip -dc "$f" > "$base"
  for site in "$NSIGHT" /tmp/ncusite; do
    rm -rf /tmp/w2; mkdir /tmp/w2
    PYTHONFAULTHANDLER=1 PYTHONPATH=$site:/tmp/site:$PWD/src python3 -m roofscope.ingest.ncu.report_worker "$base" /tmp/w2 \
      && echo "$base $site: $(wc -l < /tmp/w2/raw.csv) rows, $(md5sum < /tmp/w2/raw.csv)" || echo "$base $site: exit $?"
  done
done
