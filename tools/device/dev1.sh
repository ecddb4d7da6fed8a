set -u
REAL=$OUT
export OUT=/tmp/o BUDGET=560
bash tools/device/profile_applied.sh "resnet18 bf16 8 --launch-count 40" "cnn fp32 128 --preset full" "cnn fp32 128" "cnn tf32 128" "vgg11 fp32 8" "vgg11 tf32 8" > /tmp/o.log 2>&1
cp /tmp/o.log $REAL/log.txt
tar czf $REAL/runs.tgz -C /tmp/o .
tail -60 /tmp/o.log
