#!/usr/bin/env bash
# On the GPU machine (issue 29): binary reports small enough to commit, of a CUDA program with
# five kernels of known work (tools/device/kernels.cu), with the roofline sections and with
# --set full, each beside ncu's own raw-page CSV export; NVTX ranges collected.
. tools/device/setup.sh
nvcc -O2 -arch=sm_90 -lineinfo -o /tmp/kernels tools/device/kernels.cu || exit 1
/tmp/kernels
for set in roofline full; do
  opts=$SECTIONS; [ $set = full ] && opts="--set full --import-source yes"
  ncu $opts --nvtx -f -o /tmp/k_$set /tmp/kernels > /tmp/k_$set.log 2>&1; echo "$set: exit $?"
  tail -2 /tmp/k_$set.log
  name=kernels5_${set}_h100
  cp /tmp/k_$set.ncu-rep "$OUT/$name.ncu-rep"
  ncu --import /tmp/k_$set.ncu-rep --csv --page raw --print-units base | gzip -9 > "$OUT/$name.ncu-raw.csv.gz"
done
ncu --import /tmp/k_full.ncu-rep --csv --page details | gzip -9 > "$OUT/kernels5_full_h100.ncu-details.csv.gz"
for f in "$OUT"/*.ncu-rep; do
  python3 tools/device/timed.py python3 -m roofscope report "$f" --format json > /tmp/r.json
  python3 -c "import json; d=json.load(open('/tmp/r.json')); r=d['reports'][0]; print(r['launches'], r['time_s'], r['flops'], r['bytes'])"
done
ls -la "$OUT"
echo "== many launches: the binary read three ways, side by side"
M=gpu__time_duration.sum,dram__bytes.sum,sm__cycles_elapsed.avg.per_second
M=$M,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
start=$(date +%s)
timeout 240 ncu --metrics $M --launch-skip 10 --launch-count 10000 -f -o /tmp/many \
  python3 tools/device/launches.py 10000 > /tmp/many.log 2>&1
echo "profiling: exit $?, $(( $(date +%s) - start )) s"; tail -1 /tmp/many.log; ls -la /tmp/many.ncu-rep
for round in 1 2; do
  rm -rf /tmp/cache-a /tmp/cache-b /tmp/many.csv
  python3 tools/device/timed.py sh -c "ncu --import /tmp/many.ncu-rep --csv --page raw --print-units base > /tmp/many.csv"
  ROOFSCOPE_CACHE_DIR=/tmp/cache-a python3 tools/device/timed.py python3 -m roofscope report /tmp/many.csv --format json > /tmp/many_csv.json
  ROOFSCOPE_CACHE_DIR=/tmp/cache-b python3 tools/device/timed.py python3 -m roofscope report /tmp/many.ncu-rep --format json > /tmp/many_rep.json
  ROOFSCOPE_CACHE_DIR=/tmp/cache-b python3 tools/device/timed.py python3 -m roofscope report /tmp/many.ncu-rep --format json > /dev/null
done
python3 -c "
import json
a, b = (json.load(open(f))['reports'][0] for f in ('/tmp/many_csv.json', '/tmp/many_rep.json'))
print('csv', a['launches'], a['time_s'], a['flops']['fp32'], a['bytes']['dram'])
print('rep', b['launches'], b['time_s'], b['flops']['fp32'], b['bytes']['dram'])"
