#!/usr/bin/env bash
# On the GPU machine (issue 29): how big binary reports are (compressed too), a small report of
# five element-wise kernels for tests/data (roofline sections and --set full), and a report of
# 10,000 launches read three ways, side by side: ncu --import to CSV, roofscope on that CSV,
# roofscope on the binary (NVIDIA's module from the install, in its worker process).
. tools/device/setup.sh
TINY="import torch; x = torch.rand(1 << 20, device='cuda'); y = x * 2 + 1; z = torch.exp(y).sum(); print(float(torch.relu(y - 2).mean()), float(z))"
for set in roofline full; do
  opts=$SECTIONS; [ $set = full ] && opts="--set full"
  ncu $opts -f -o /tmp/tiny_$set python3 -c "$TINY" > /tmp/tiny_$set.log 2>&1; echo "tiny $set: exit $?"
  name=elementwise5_fp32_${set}_h100
  cp /tmp/tiny_$set.ncu-rep "$OUT/$name.ncu-rep"
  ncu --import /tmp/tiny_$set.ncu-rep --csv --page raw --print-units base | gzip -9 > "$OUT/$name.ncu-raw.csv.gz"
done
[ -f /tmp/tiny_full.ncu-rep ] && ncu --import /tmp/tiny_full.ncu-rep --csv --page details | gzip -9 > "$OUT/elementwise5_fp32_full_h100.ncu-details.csv.gz"
ls -la "$OUT"
echo "== 10,000 launches"
M=gpu__time_duration.sum,dram__bytes.sum,sm__cycles_elapsed.avg.per_second
M=$M,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
start=$(date +%s)
timeout 400 ncu --metrics $M --launch-skip 10 --launch-count 10000 -f -o /tmp/many \
  python3 tools/device/launches.py 10000 > /tmp/many.log 2>&1
echo "profiling: exit $?, $(( $(date +%s) - start )) s"; tail -2 /tmp/many.log; ls -la /tmp/many.ncu-rep
export ROOFSCOPE_CACHE_DIR=/tmp/cache-a
for round in 1 2; do
  rm -rf /tmp/cache-a /tmp/many.csv
  python3 tools/device/timed.py sh -c "ncu --import /tmp/many.ncu-rep --csv --page raw --print-units base > /tmp/many.csv"
  python3 tools/device/timed.py python3 -m roofscope report /tmp/many.csv --format json > /tmp/many_csv.json
  python3 tools/device/timed.py python3 -m roofscope report /tmp/many.ncu-rep --format json > /tmp/many_rep.json
done
ls -la /tmp/many.csv
python3 -c "
import json
a, b = (json.load(open(f))['reports'][0] for f in ('/tmp/many_csv.json', '/tmp/many_rep.json'))
print('csv', a['launches'], a['time_s'], a['flops']['fp32'], a['bytes']['dram'])
print('rep', b['launches'], b['time_s'], b['flops']['fp32'], b['bytes']['dram'])"
